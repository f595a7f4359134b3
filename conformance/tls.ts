/**
 * Throwaway certificate authorities for the HTTPS runs, made with the system `openssl`.
 * Server certificates name IP 127.0.0.1 only, so `https://localhost:<port>` is a hostname
 * mismatch by construction.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServerIdentity {
  caFile: string;
  certFile: string;
  keyFile: string;
  ca: string;
  cert: string;
  key: string;
}

export interface ThrowawayPki {
  directory: string;
  /** Trusted CA and a 127.0.0.1 certificate it signed. */
  trusted: ServerIdentity;
  /** A second CA nobody is told about, and its 127.0.0.1 certificate. */
  untrusted: ServerIdentity;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeIdentity(directory: string, name: string): ServerIdentity {
  const file = (suffix: string) => join(directory, `${name}-${suffix}`);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', `/CN=agenticdriver test CA ${name}`, '-keyout', file('ca.key'), '-out', file('ca.pem'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], directory);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=127.0.0.1', '-keyout', file('server.key'), '-out', file('server.csr')], directory);
  const extensions = file('server.ext');
  writeFileSync(extensions, 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
  openssl(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-days', '2', '-extfile', extensions, '-out', file('server.pem')], directory);
  chmodSync(file('server.key'), 0o600);
  return {
    caFile: file('ca.pem'),
    certFile: file('server.pem'),
    keyFile: file('server.key'),
    ca: readFileSync(file('ca.pem'), 'utf8'),
    cert: readFileSync(file('server.pem'), 'utf8'),
    key: readFileSync(file('server.key'), 'utf8'),
  };
}

export function makeThrowawayPki(): ThrowawayPki {
  const directory = mkdtempSync(join(tmpdir(), 'agenticdriver-pki-'));
  return {
    directory,
    trusted: makeIdentity(directory, 'trusted'),
    untrusted: makeIdentity(directory, 'untrusted'),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
