/**
 * The MCP session id. The server is stateless (any replica answers any message), so what it
 * must remember of a client — whether it declared elicitation in `initialize` — travels in the
 * session id the client repeats on every request. Only the client's own claim is carried: a
 * client that lies about elicitation only misleads itself (its approvals stay pending).
 */
import { randomUUID } from 'node:crypto';

const ELICITS = '.e';

/** A new session id for a client that declared these capabilities in `initialize`. */
export function sessionIdFor(capabilities: unknown): string {
  const elicitation = (capabilities as { elicitation?: unknown } | undefined)?.elicitation;
  // `{}` is form mode (the first revision with elicitation); later revisions name `form` and `url`.
  const form = typeof elicitation === 'object' && elicitation !== null && (Object.keys(elicitation).length === 0 || 'form' in elicitation);
  return `${randomUUID()}${form ? ELICITS : ''}`;
}

/** Whether the client of this session id declared elicitation (form mode, the default). */
export function sessionElicits(header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.e$/.test(header);
}
