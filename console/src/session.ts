/**
 * The operator's session: the token (in this tab's sessionStorage, gone when the tab closes;
 * never in a URL or a cookie) and the clients that send it — the TypeScript client from
 * src/client, pointed at the page's own origin, so every answer is validated as in any app.
 */
import { AgenticClient, OperatorClient } from '../../src/client/index.js';

const TOKEN_KEY = 'agenticdriver.operator-token';

export interface Session {
  operator: OperatorClient;
  host: AgenticClient;
}

export function savedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

export function openSession(token: string): Session {
  const url = location.origin;
  return { operator: new OperatorClient({ url, token }), host: new AgenticClient({ url, token }) };
}
