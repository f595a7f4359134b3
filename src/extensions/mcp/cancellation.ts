/**
 * MCP `notifications/cancelled`: the client cancels a request it sent. The server is stateless,
 * so the notification arrives on a POST of its own, perhaps on another replica than the one
 * serving the call. A call in flight is known here by a key — a digest of the token's subject,
 * the `Mcp-Session-Id` and the JSON-RPC request id, so nobody cancels another subject's or
 * another client's call — and cancelling ends that call's response stream, exactly as the client
 * closing it would: an attached run is cancelled by the run path (cancel-on-disconnect), a
 * followed job is no longer followed (the job goes on; `cancel_job` cancels it). A key not in
 * flight here is told to every replica through the store; the one serving it ends it. A cancel
 * that arrives before its call started, or for a call that already ended, changes nothing (as
 * MCP allows).
 */
import { createHash } from 'node:crypto';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ReplicaStore } from '../../store/store.js';

/** The request a body cancels, if it is a `notifications/cancelled` notification. */
export function cancelledRequest(body: unknown): RequestId | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
  if (message.method !== 'notifications/cancelled' || 'id' in message) return undefined;
  const requestId = message.params?.requestId;
  return typeof requestId === 'string' || (typeof requestId === 'number' && Number.isFinite(requestId)) ? requestId : undefined;
}

export function callKey(subject: string, sessionId: string, requestId: RequestId): string {
  return createHash('sha256').update(JSON.stringify([subject, sessionId, requestId])).digest('hex');
}

export class McpCancellations {
  /** Calls in flight on this replica: how to end each one. */
  private readonly calls = new Map<string, () => void>();

  constructor(private readonly replica: Pick<ReplicaStore, 'broadcast' | 'onSignal'>) {
    replica.onSignal((signal) => {
      if (signal.kind === 'mcp-cancel') this.calls.get(signal.id)?.();
    });
  }

  /** Registers a call in flight until the returned function is called. */
  track(key: string, end: () => void): () => void {
    this.calls.set(key, end);
    return () => {
      if (this.calls.get(key) === end) this.calls.delete(key);
    };
  }

  /** Ends the call here, or tells every replica to. */
  async cancel(key: string): Promise<void> {
    const end = this.calls.get(key);
    if (end) end();
    else await this.replica.broadcast({ kind: 'mcp-cancel', id: key });
  }
}
