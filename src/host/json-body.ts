/**
 * The one request-body parser: `application/json` in UTF-8, valid JSON, nested at most
 * MAX_JSON_DEPTH levels. The depth is checked on the text before JSON.parse, so nothing
 * recursive downstream (structuredClone, schema walks, JSON.stringify) meets a hostile
 * document.
 */
import { DriverError } from '../protocol/errors.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../protocol/json-depth.js';

interface MediaType {
  type: string;
  parameters: Map<string, string>;
}

/** `type/subtype; name=value; name="quoted value"`, names and the type lower-cased. */
export function parseMediaType(header: string): MediaType {
  const [type = '', ...rest] = header.split(';');
  const parameters = new Map<string, string>();
  for (const part of rest) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const name = part.slice(0, equals).trim().toLowerCase();
    let value = part.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    parameters.set(name, value);
  }
  return { type: type.trim().toLowerCase(), parameters };
}

/**
 * Refuses anything but JSON in UTF-8: another media type is a malformed request (400);
 * JSON declared in another charset is 415, never silently decoded as UTF-8.
 */
export function assertJsonMediaType(header: string | undefined): void {
  const media = parseMediaType(header ?? '');
  if (media.type !== 'application/json') throw new DriverError('INVALID_REQUEST', 'Request bodies must be application/json.');
  const charset = media.parameters.get('charset');
  if (charset !== undefined && !['utf-8', 'utf8'].includes(charset.toLowerCase())) {
    throw new DriverError('UNSUPPORTED_MEDIA_TYPE', `Request bodies must be UTF-8 JSON; charset ${JSON.stringify(charset.slice(0, 40))} is not accepted.`);
  }
}

export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new DriverError('INVALID_REQUEST', 'The request body is not valid UTF-8.');
  }
  if (jsonTextTooDeep(text)) {
    throw new DriverError('INVALID_REQUEST', `The request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new DriverError('INVALID_REQUEST', 'The request body is not valid JSON.');
  }
}
