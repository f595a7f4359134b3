/**
 * The operator console page (`GET /console`): three built files (scripts/build-console.ts
 * writes them to dist/console), read once at start-up and served without a token under a
 * strict Content-Security-Policy — no inline script, nothing from another origin. The page
 * itself holds no data: it asks the operator for a token and calls the operator endpoints.
 * Served to loopback peers only unless `console.allowRemote`.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DriverError } from '../../protocol/errors.js';
import { isLoopbackHost } from '../../shared/addresses.js';

export const CONSOLE_PATH = '/console';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const FILES: Record<string, { file: string; type: string }> = {
  '/console': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/console/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** Where the built console is: beside the compiled host (dist/console), or dist/console when the host runs from src. */
export function defaultConsoleDirectory(): string {
  const candidates = [new URL('../../console/', import.meta.url), new URL('../../../dist/console/', import.meta.url)].map((url) => fileURLToPath(url));
  return candidates.find((directory) => existsSync(join(directory, 'index.html'))) ?? candidates[0]!;
}

export class ConsoleAssets {
  private constructor(
    private readonly files: Map<string, { type: string; body: Buffer }> | undefined,
    private readonly allowRemote: boolean,
  ) {}

  /** Reads the built files; when they are missing (a source checkout not yet built) the page says so instead. */
  static async load(directory: string, allowRemote: boolean): Promise<ConsoleAssets> {
    const files = new Map<string, { type: string; body: Buffer }>();
    try {
      for (const [path, { file, type }] of Object.entries(FILES)) files.set(path, { type, body: await readFile(join(directory, file)) });
    } catch {
      return new ConsoleAssets(undefined, allowRemote);
    }
    return new ConsoleAssets(files, allowRemote);
  }

  /** Routes to register: every console path. */
  get paths(): string[] {
    return Object.keys(FILES);
  }

  /** The file for a console path; a peer off loopback gets NOT_FOUND unless remote access is configured. */
  file(url: string, remoteAddress: string | undefined): { type: string; body: Buffer } {
    if (!this.allowRemote && !(remoteAddress && isLoopbackHost(remoteAddress))) throw new DriverError('NOT_FOUND', 'No such endpoint.');
    if (!this.files) throw new DriverError('NOT_FOUND', 'The console is not built in this installation: run npm run build.');
    const found = this.files.get(url);
    if (!found) throw new DriverError('NOT_FOUND', 'No such endpoint.');
    return found;
  }
}

/**
 * The console's own origin, so its POSTs (which browsers send with `Origin`) pass the CORS
 * check: the request's Host must be a loopback name or the configured listen host, which keeps
 * a DNS-rebound name (evil.example resolving to 127.0.0.1) from counting as the host itself.
 */
export function isConsoleOrigin(origin: string, hostHeader: string | undefined, tls: boolean, listenHost: string): boolean {
  if (!hostHeader) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${hostHeader}`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return false;
  }
  if (!(isLoopbackHost(hostname) || hostname === 'localhost' || hostname === listenHost)) return false;
  return origin === `${tls ? 'https' : 'http'}://${hostHeader.toLowerCase()}`;
}
