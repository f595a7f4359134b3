/**
 * The one answer for a provider, tool or corpus a token may not use (spec decision 2,
 * authorize before disclosing): the same whether it is missing or only not granted, and
 * saying both, so the person reading it checks the config as well as the grant.
 */
import { DriverError } from '../protocol/errors.js';

export function providerNotGranted(id: string): DriverError {
  return new DriverError('FORBIDDEN', `Provider ${id} is not configured on this host, or not granted to this token.`);
}

export function toolNotGranted(name: string): DriverError {
  return new DriverError('FORBIDDEN', `Tool ${name} is not registered on this host, or not granted to this token.`);
}

export function corpusNotGranted(id: string, operation: 'search' | 'index' | 'delete'): DriverError {
  return new DriverError('FORBIDDEN', `Corpus ${id} is not configured on this host, or this token may not ${operation} it.`);
}
