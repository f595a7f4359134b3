/** A validated request, bound to its provider instance and its services, ready to execute. */
import type { ProviderAdapter } from '../providers/spec/v1.js';
import type { PreparedContext } from './context.js';
import type { CompiledSchema } from './json-schema.js';
import type { RunServices } from './services.js';
import type { RunTool } from './tools.js';
import type { RunRequest } from './types.js';

export interface PreparedRun {
  request: RunRequest;
  adapter: ProviderAdapter;
  subject: string;
  /** The id of the token the run was authorized with (usage records carry it). */
  tokenId: string | undefined;
  tools: RunTool[];
  outputSchema: CompiledSchema | undefined;
  context: PreparedContext;
  maxSteps: number;
  /** Undefined when neither the run nor the host sets one: the provider then sends none (docs/providers.md). */
  maxOutputTokens: number | undefined;
  idleTimeoutMs: number | undefined;
  acceptOptionalEvents: boolean;
  services: RunServices;
}
