/** `agenticdriver/client`: the browser-safe TypeScript client of AgenticDriver wire protocol 1.0. */
export { AgenticClient, DISCOVERY_TIMEOUT_MS } from './client.js';
export type { ClientOptions, RequestOptions, RunRequestBody as RunRequest, ProtocolDescription, ProviderDescription, RunEvent, RunResult } from './client.js';
export { DriverError } from '../protocol/errors.js';
export { WIRE_VERSION } from '../protocol/version.js';
