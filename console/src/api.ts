/**
 * The console's only way out: the host's HTTP API on the page's own origin, with the
 * operator's bearer token. The token lives in sessionStorage (gone when the tab closes),
 * never in a URL or a cookie. Streams are read with fetch (EventSource cannot send a token).
 */

const TOKEN_KEY = 'agenticdriver.operator-token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
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

export type Json = Record<string, any>;

export class Api {
  constructor(private readonly token: string) {}

  post<T = Json>(path: string, body: unknown = {}): Promise<T> {
    return this.json<T>(path, { method: 'POST', body: JSON.stringify(body) });
  }

  get<T = Json>(path: string): Promise<T> {
    return this.json<T>(path, { method: 'GET' });
  }

  /** Server-sent events of `path`, one parsed `data:` object at a time, until the stream ends or `signal` aborts. */
  async *events(path: string, signal: AbortSignal): AsyncGenerator<Json> {
    const response = await fetch(path, { headers: this.headers('text/event-stream'), signal, cache: 'no-store' });
    if (!response.ok || !response.body) throw await failure(response);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (data) yield JSON.parse(data.slice(6)) as Json;
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  private async json<T>(path: string, init: RequestInit): Promise<T> {
    const response = await fetch(path, { ...init, headers: this.headers('application/json', init.body !== undefined), cache: 'no-store' });
    if (!response.ok) throw await failure(response);
    return (await response.json()) as T;
  }

  private headers(accept: string, body = false): Record<string, string> {
    return {
      authorization: `Bearer ${this.token}`,
      accept,
      'agenticdriver-version': '1.0',
      ...(body ? { 'content-type': 'application/json' } : {}),
    };
  }
}

async function failure(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    return new ApiError(response.status, body.error?.code ?? 'UNKNOWN', body.error?.message ?? response.statusText);
  } catch {
    return new ApiError(response.status, 'UNKNOWN', `The host answered ${response.status}.`);
  }
}
