/**
 * The live host as a child process, for the Python, Go and Rust client test suites:
 * configured exactly like the harness's (./live-host.ts): mock provider, host tool
 * `guarded` (needs approval), application tool grant `application_lookup`, interactive
 * approvals.
 *
 * Run from the repository root with `node --import tsx conformance/live-host-process.ts
 * '<options>'`. Reads {"main", "restricted", "certFile"?, "keyFile"?} as JSON from argv[2]
 * (HTTPS when both files are given), prints {"url"} once listening, and closes the host
 * when stdin ends (the test process exited or closed it).
 */
import { startLiveHost } from './live-host.js';

const options = JSON.parse(process.argv[2] ?? '{}') as { main: string; restricted: string; certFile?: string; keyFile?: string };
const tls = options.certFile && options.keyFile ? { certFile: options.certFile, keyFile: options.keyFile } : undefined;
const host = await startLiveHost({ main: options.main, restricted: options.restricted }, tls);
if (typeof host === 'string') {
  process.stderr.write(`${host}\n`);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify({ url: host.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  host.close().then(() => process.exit(0), () => process.exit(1));
});
