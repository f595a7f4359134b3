/** A throwaway certificate authority and a server certificate for 127.0.0.1, made with openssl. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caCert: string;
  caCertFile: string;
  serverCertFile: string;
  serverKeyFile: string;
}

export function makeTestPki(names: { ip?: string[]; dns?: string[] } = { ip: ['127.0.0.1'] }): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'agenticdriver-pki-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=agenticdriver test CA', '-keyout', 'ca.key', '-out', 'ca.pem',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=agenticdriver test host', '-keyout', 'server.key', '-out', 'server.csr');
  const alt = [...(names.ip ?? []).map((ip) => `IP:${ip}`), ...(names.dns ?? []).map((dns) => `DNS:${dns}`)].join(',');
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${alt}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.pem');
  chmodSync(join(dir, 'server.key'), 0o600);
  return {
    dir,
    caCert: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    caCertFile: join(dir, 'ca.pem'),
    serverCertFile: join(dir, 'server.pem'),
    serverKeyFile: join(dir, 'server.key'),
  };
}
