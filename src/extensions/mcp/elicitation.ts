/**
 * A run's approval as an MCP elicitation. The request's JSON-RPC id names the approval
 * (`agenticdriver-approval:<id>`), so the client's answer — a response POSTed to `/mcp`, which may
 * reach any replica — is decided through the approvals service like a decision posted to
 * `/v1/approvals/decisions`, with the same token's grants; the replica whose run waits is woken
 * by the store. accept approves, decline denies, cancel cancels; an error answer (a client that
 * cannot show it) leaves the approval pending for the console or the API.
 */
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalRequest } from '../../protocol/schemas.js';
import type { Principal } from '../../http/access.js';
import type { HostServices } from '../../http/extension.js';
import type { StateStore } from '../../store/store.js';

const PREFIX = 'agenticdriver-approval:';
/** The arguments shown to the person, at most this many characters of JSON. */
const MAX_SHOWN = 4_000;

export function elicitationOf(approval: ApprovalRequest): JSONRPCRequest {
  const shown = JSON.stringify(approval.call.arguments);
  return {
    jsonrpc: '2.0',
    id: `${PREFIX}${approval.approvalId}`,
    method: 'elicitation/create',
    params: {
      message: `Run ${approval.runId} asks to call the tool ${approval.call.name} with ${shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN)}…` : shown}. Accept to allow it, decline to refuse it.`,
      requestedSchema: { type: 'object', properties: {} },
      _meta: { 'agenticdriver/approval': approval },
    },
  };
}

export interface ElicitationAnswer {
  approvalId: string;
  /** Undefined: the client answered with an error, and the approval stays pending. */
  decision: 'approve' | 'deny' | 'cancel' | undefined;
}

/** The answer to one of our elicitations, when this POSTed message is one. */
export function elicitationAnswer(message: unknown): ElicitationAnswer | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { id, result, error, method } = message as Record<string, unknown>;
  if (method !== undefined || typeof id !== 'string' || !id.startsWith(PREFIX)) return undefined;
  const approvalId = id.slice(PREFIX.length);
  if (error !== undefined) return { approvalId, decision: undefined };
  const action = (result as { action?: unknown } | undefined)?.action;
  return { approvalId, decision: action === 'accept' ? 'approve' : action === 'decline' ? 'deny' : 'cancel' };
}

/** Decides the approval an answer names, as the token that answered. */
export async function decideAnswer(answer: ElicitationAnswer, principal: Principal, store: Pick<StateStore, 'approvals'>, approvals: HostServices['approvals']): Promise<void> {
  if (answer.decision === undefined) return;
  const row = await store.approvals.read(answer.approvalId);
  // A missing or another subject's approval is refused by `decide` without telling which.
  const { runId, call } = row?.approval ?? { runId: 'unknown', call: { id: 'unknown', name: 'unknown', arguments: {} } };
  await approvals.decide({ approvalId: answer.approvalId, runId, call, decision: answer.decision }, principal);
}
