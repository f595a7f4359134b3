/**
 * The CLI's own tools: off unless the operator names a profile in the provider's config
 * entry, and any native action the CLI asks permission for goes through the run's approval
 * gate as a call named `native_<tool>` (or is refused when the run has no approvals).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderRequest, ToolCall } from '../contract/v1.js';

/** `off`: none; `read-only`: read/search in the run's working directory; `workspace-write`: also write there. */
export const NATIVE_TOOL_PROFILES = ['off', 'read-only', 'workspace-write'] as const;
export type NativeToolProfile = (typeof NATIVE_TOOL_PROFILES)[number];

/** Approval calls for native actions are named `native_<CLI tool name>` (what an approver's `approveTools` lists). */
export const NATIVE_CALL_PREFIX = 'native_';
const MAX_TOOL_NAME = 64;

export function nativeCallName(tool: string): string {
  return `${NATIVE_CALL_PREFIX}${tool.replace(/[^a-zA-Z0-9_]/g, '_')}`.slice(0, MAX_TOOL_NAME);
}

/** Puts one native action the CLI asks about through the run's approval gate (see `relayNativePermission`). */
export type NativeRelay = (call: ToolCall) => Promise<void>;

/**
 * Relays one native action the CLI asks permission for. Without interactive approvals on the
 * run it is refused with CLI_POLICY_VIOLATION; otherwise the runtime's gate decides (host
 * callback, then a person) and a refusal rejects with the run's error (e.g. APPROVAL_DENIED).
 */
export async function relayNativePermission(request: ProviderRequest, product: string, call: ToolCall): Promise<void> {
  if (!request.requestApproval) {
    throw new DriverError('CLI_POLICY_VIOLATION', `${product} asked to use its own tool ${call.name.slice(NATIVE_CALL_PREFIX.length)}, and this run did not opt into interactive approvals.`);
  }
  await request.requestApproval(call);
}

export const nativeCall = (tool: string, input: unknown, id: string): ToolCall => ({
  id,
  name: nativeCallName(tool),
  arguments: typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : { input },
});

/** Whether `path` (absolute, or relative to `directory`) lies inside `directory`. */
export function insideDirectory(directory: string, path: string): boolean {
  const within = relative(directory, resolve(directory, path));
  return within !== '' && within !== '..' && !within.startsWith(`..${sep}`) && !isAbsolute(within);
}
