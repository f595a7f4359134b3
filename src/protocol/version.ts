/** Version negotiation rules (wire protocol 1.0). */

export const WIRE_VERSION = '1.0';
export const SUPPORTED_VERSIONS: readonly string[] = [WIRE_VERSION];
export const PROTOCOL_NAME = 'agenticdriver';

export const VERSION_HEADER = 'AgenticDriver-Version';
export const OPTIONAL_EVENTS_HEADER = 'AgenticDriver-Accept-Optional-Events';

/**
 * The version a request selects: an absent header selects 1.0; anything but exactly one
 * supported version string (duplicates, lists, malformed values) selects nothing.
 */
export function selectRequestVersion(values: readonly string[]): string | undefined {
  if (values.length === 0) return WIRE_VERSION;
  if (values.length > 1) return undefined;
  const value = values[0]!;
  return SUPPORTED_VERSIONS.includes(value) ? value : undefined;
}

/**
 * Whether a response may be consumed: a missing header is the legacy 1.0 contract; a
 * present header must name the version the client speaks.
 */
export function isAcceptableResponseVersion(header: string | null | undefined): boolean {
  return header === null || header === undefined || header === WIRE_VERSION;
}
