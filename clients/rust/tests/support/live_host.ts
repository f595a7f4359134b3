/**
 * The real agenticdriver host for the Rust client tests, configured exactly like the
 * conformance live host (conformance/live-host.ts): mock provider, host tool `guarded`
 * (needs approval), application tool grant `application_lookup`, interactive approvals.
 *
 * Reads {"main", "restricted", "certFile"?, "keyFile"?} as JSON from argv[2], prints
 * {"url"} once listening, and closes the host when stdin ends (the test process exits).
 */
import { startLiveHost } from '../../../../conformance/live-host.ts';

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
