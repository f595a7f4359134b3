/**
 * The real agenticdriver host for the Go client's live tests, configured exactly like the
 * conformance live host (conformance/live-host.ts): mock provider, host tool `guarded`
 * (needs approval), application tool grant `application_lookup`, interactive approvals.
 *
 * Reads {"main", "restricted", "certFile", "keyFile"} as JSON from argv[2], starts one
 * host over HTTP and one over HTTPS, prints {"http", "https"} once both listen, and
 * closes them when stdin ends (the test process exited or closed it).
 */
import { startLiveHost, type LiveHost } from '../../../conformance/live-host.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as { main: string; restricted: string; certFile: string; keyFile: string };
const tokens = { main: options.main, restricted: options.restricted };
const hosts: LiveHost[] = [];
const closeAll = () => Promise.allSettled(hosts.map((host) => host.close()));
for (const tls of [undefined, { certFile: options.certFile, keyFile: options.keyFile }]) {
  const host = await startLiveHost(tokens, tls);
  if (typeof host === 'string') {
    process.stderr.write(`${host}\n`);
    await closeAll();
    process.exit(1);
  }
  hosts.push(host);
}
process.stdout.write(`${JSON.stringify({ http: hosts[0]!.url, https: hosts[1]!.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  closeAll().then(() => process.exit(0));
});
