/**
 * Provider kinds. Each kind contributes its config-entry schema and a factory; the host
 * config schema is the union of the registered kinds, so adding a vendor is one module
 * plus one line in ./kinds.ts.
 */
import type { TObject, Static } from '@sinclair/typebox';
import type { ProviderAdapter } from './contract/v1.js';
import type { SecretRef } from '../shared/secrets.js';

export interface ProviderEnvironment {
  /** Directory that relative paths in the config resolve against. */
  configDir: string;
  /** Reads a secret reference now (API keys are re-read on every model turn). */
  readSecret(ref: SecretRef): Promise<string>;
}

export interface ProviderKind<S extends TObject = TObject> {
  kind: string;
  /** Strict JSON Schema of the config entry; must include `kind`, `id` and `models`. */
  configSchema: S;
  create(entry: Static<S>, env: ProviderEnvironment): ProviderAdapter;
}

export function defineProviderKind<S extends TObject>(kind: ProviderKind<S>): ProviderKind {
  return kind as unknown as ProviderKind;
}
