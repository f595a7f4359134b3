/** Numbers the config schema and the config loader share. */
export const DEFAULT_PORT = 7433;
export const DEFAULT_BODY_BYTES = 1_000_000;
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
