/** Host tools: TypeScript functions the host operator registers with the runtime. */
import { DriverError } from '../protocol/errors.js';
import { compileSchema, type CompiledSchema } from './json-schema.js';
import type { ToolCall } from './types.js';

export interface ToolContext {
  runId: string;
  subject: string;
  /** Aborted when the run is cancelled; long tools should stop promptly. */
  signal: AbortSignal;
  /** Report real progress: emits `run.progress{tool}` (throttled) and resets the idle timer. */
  reportProgress(): void;
}

export interface HostTool {
  name: string;
  description: string;
  /** JSON Schema (draft-07, or 2020-12 when `$schema` says so) for the call arguments. */
  inputSchema: Record<string, unknown>;
  /** Fails closed with APPROVAL_REQUIRED unless the driver's `approve` callback says yes. */
  requiresApproval?: boolean;
  execute(input: Record<string, unknown>, context: ToolContext): unknown;
}

export type ApproveCallback = (call: ToolCall, context: { runId: string; subject: string; signal: AbortSignal }) => boolean | Promise<boolean>;

export interface RegisteredTool {
  tool: HostTool;
  input: CompiledSchema;
}

/** A tool selected for one run: a host function, or an application tool the caller executes. */
export type RunTool =
  | { kind: 'host'; name: string; description: string; inputSchema: Record<string, unknown>; input: CompiledSchema; requiresApproval: boolean; tool: HostTool }
  | {
      kind: 'application';
      name: string;
      description: string;
      inputSchema: Record<string, unknown>;
      input: CompiledSchema;
      /** Checked at prepare; the registry checks outputs against it wherever they arrive. */
      outputSchema: Record<string, unknown> | undefined;
      requiresApproval: boolean;
    };

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

export function registerTools(tools: readonly HostTool[]): Map<string, RegisteredTool> {
  const registry = new Map<string, RegisteredTool>();
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) throw new DriverError('INVALID_CONFIG', `Tool name ${JSON.stringify(tool.name)} is not valid.`);
    if (registry.has(tool.name)) throw new DriverError('INVALID_CONFIG', `Tool ${tool.name} is registered twice.`);
    registry.set(tool.name, { tool, input: compileSchema(tool.inputSchema) });
  }
  return registry;
}

export const MAX_TOOL_OUTPUT_BYTES = 1_000_000;
export const MAX_TOOL_CALLS_PER_STEP = 32;

/** Tool output as the JSON the model will read, bounded. */
export function encodeToolOutput(output: unknown): { json: string; value: unknown } {
  let json: string | undefined;
  try {
    json = JSON.stringify(output === undefined ? null : output);
  } catch {
    json = undefined;
  }
  if (json === undefined) throw new DriverError('TOOL_FAILED', 'The tool returned a value that is not JSON.');
  if (Buffer.byteLength(json) > MAX_TOOL_OUTPUT_BYTES) {
    throw new DriverError('TOOL_OUTPUT_LIMIT', `The tool output exceeds ${MAX_TOOL_OUTPUT_BYTES} bytes of JSON.`);
  }
  return { json, value: JSON.parse(json) as unknown };
}
