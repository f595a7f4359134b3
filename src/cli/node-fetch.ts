/**
 * The CLI's transport: the few parts of `fetch` the TypeScript client uses (method, headers,
 * a string body, an abort signal; status, headers and a streamed body back), over node:http
 * and node:https. Node's own fetch costs a client command ~40 ms of CPU to start (it loads
 * undici); this costs next to nothing. Redirects are not followed (the client refuses them),
 * and a host with its own certificate is trusted by that certificate on top of the system roots.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';

export function nodeFetch(ca?: string): typeof fetch {
  const tls: RequestOptions & { ca?: string[] } = ca === undefined ? {} : { ca: [...rootCertificates, ca] };
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const message = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(url, { ...tls, method: init.method ?? 'GET', headers: init.headers as Record<string, string>, ...(init.signal ? { signal: init.signal } : {}) }, resolve);
      request.once('error', reject);
      request.end(typeof init.body === 'string' ? init.body : undefined);
    });
    return responseOf(message);
  }) as typeof fetch;
}

function responseOf(message: IncomingMessage): Response {
  const status = message.statusCode ?? 0;
  const response = {
    type: 'basic',
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get(name: string): string | null {
        const value = message.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: Readable.toWeb(message),
  };
  return response as unknown as Response;
}
