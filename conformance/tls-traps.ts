/**
 * HTTPS servers that no client may reach: one presents a certificate from a CA the client
 * was not given, the other is reached as `localhost` while its certificate names only
 * 127.0.0.1. Each counts the HTTP requests it received, which must stay zero.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { closeServer } from './peer/server.js';
import type { ServerIdentity } from '../test/support/pki.js';

export interface TlsTrap {
  url: string;
  requests(): number;
  close(): Promise<void>;
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

async function startTrap(identity: ServerIdentity, hostname: string): Promise<TlsTrap> {
  let requests = 0;
  const handler = (_: unknown, response: import('node:http').ServerResponse) => {
    requests += 1;
    response.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":{"code":"TLS_NOT_VERIFIED","message":"This request should never have been sent.","retryable":false}}');
  };
  const servers = [createServer({ cert: identity.cert, key: identity.key }, handler)];
  const port = await listen(servers[0]!, 0, '127.0.0.1');
  if (hostname === 'localhost') {
    // `localhost` may resolve to ::1 first; answer there too so the failure is the certificate, not a refused connection.
    const v6 = createServer({ cert: identity.cert, key: identity.key }, handler);
    try {
      await listen(v6, port, '::1');
      servers.push(v6);
    } catch {
      // No IPv6 loopback on this machine.
    }
  }
  return {
    url: `https://${hostname}:${port}`,
    requests: () => requests,
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
}

export function startUntrustedTrap(untrusted: ServerIdentity): Promise<TlsTrap> {
  return startTrap(untrusted, '127.0.0.1');
}

export function startMismatchTrap(trusted: ServerIdentity): Promise<TlsTrap> {
  return startTrap(trusted, 'localhost');
}
