import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startTestHost, TOKEN, type TestHost } from '../support/host.js';
import { makeServerIdentity, type ServerIdentity } from '../support/pki.js';

function get(url: string, ca: string | undefined): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${TOKEN}` }, ...(ca ? { ca } : {}) }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('host over verified HTTPS', () => {
  let pki: ServerIdentity;
  let host: TestHost;
  before(async () => {
    pki = makeServerIdentity({ ip: ['127.0.0.1'] });
    host = await startTestHost(
      { listen: { host: '127.0.0.1', port: 0, tls: { certFile: pki.certFile, keyRef: { file: pki.keyFile } } } },
    );
  });
  after(() => host.close());

  it('serves with a certificate the private CA verifies, with HSTS', async () => {
    assert.match(host.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const response = await get(`${host.url}/v1/protocol`, pki.ca);
    assert.equal(response.status, 200);
    assert.equal(response.headers['agenticdriver-version'], '1.0');
    assert.equal(response.headers['strict-transport-security'], 'max-age=31536000');
  });

  it('fails verification without the CA and for a name the certificate does not carry', async () => {
    await assert.rejects(get(`${host.url}/v1/protocol`, undefined), /self-signed|unable to verify|SELF_SIGNED|UNABLE_TO_GET_ISSUER/i);
    const mismatch = host.url.replace('127.0.0.1', 'localhost');
    await assert.rejects(get(`${mismatch}/v1/protocol`, pki.ca), /altnames|ERR_TLS_CERT_ALTNAME_INVALID|does not match/i);
  });
});

describe('TLS configuration errors', () => {
  it('refuses a non-loopback listener without TLS and an unreadable certificate', async () => {
    await assert.rejects(startTestHost({ listen: { host: '0.0.0.0', port: 0 } }), (error: { code: string }) => error.code === 'TLS_REQUIRED');
    await assert.rejects(
      startTestHost({ listen: { host: '127.0.0.1', port: 0, tls: { certFile: '/nonexistent/cert.pem', keyRef: { env: 'NOPE_KEY' } } } }),
      (error: { code: string }) => error.code === 'INVALID_TLS',
    );
  });
});
