/**
 * Throwaway certificate authorities for HTTPS tests, made with the system `openssl`.
 * One implementation for every suite: the core and client tests, the vendor fakes and
 * the conformance harness.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.js';

export interface ServerIdentity {
  /** The directory holding the files (remove it when done). */
  directory: string;
  /** PEM of the CA that signed `cert`; trust only this in the client. */
  ca: string;
  cert: string;
  key: string;
  caFile: string;
  certFile: string;
  /** Private key file, mode 0600. */
  keyFile: string;
}

export interface IdentityOptions {
  /** Names the server certificate carries; default IP 127.0.0.1 only, so `localhost` is a hostname mismatch. */
  ip?: string[];
  dns?: string[];
  /** Where the files go; default a new temporary directory. */
  directory?: string;
  label?: string;
}

export function makeServerIdentity(options: IdentityOptions = {}): ServerIdentity {
  const directory = options.directory ?? tempDir('agenticdriver-pki-');
  const label = options.label ?? 'test';
  const file = (suffix: string) => join(directory, `${label}-${suffix}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: directory, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-days', '2', '-subj', `/CN=agenticdriver ${label} CA`, '-keyout', file('ca.key'), '-out', file('ca.pem'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ec, '-subj', `/CN=agenticdriver ${label} server`, '-keyout', file('server.key'), '-out', file('server.csr'));
  const names = [...(options.ip ?? (options.dns ? [] : ['127.0.0.1'])).map((ip) => `IP:${ip}`), ...(options.dns ?? []).map((dns) => `DNS:${dns}`)];
  writeFileSync(file('server.ext'), `subjectAltName=${names.join(',')}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`);
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2',
    '-extfile', file('server.ext'), '-out', file('server.pem'));
  chmodSync(file('server.key'), 0o600);
  return {
    directory,
    ca: readFileSync(file('ca.pem'), 'utf8'),
    cert: readFileSync(file('server.pem'), 'utf8'),
    key: readFileSync(file('server.key'), 'utf8'),
    caFile: file('ca.pem'),
    certFile: file('server.pem'),
    keyFile: file('server.key'),
  };
}

export interface ThrowawayPki {
  directory: string;
  /** A CA the client is given, and a 127.0.0.1 certificate it signed. */
  trusted: ServerIdentity;
  /** A second CA nobody is told about, and its 127.0.0.1 certificate. */
  untrusted: ServerIdentity;
  remove(): void;
}

export function makeThrowawayPki(): ThrowawayPki {
  const directory = tempDir('agenticdriver-pki-');
  return {
    directory,
    trusted: makeServerIdentity({ directory, label: 'trusted' }),
    untrusted: makeServerIdentity({ directory, label: 'untrusted' }),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
