/**
 * The once-per-instance readiness check: the CLI answers `--version` within a bound and is
 * at least the version whose flags and event format the adapter was written against.
 */
import { DriverError } from '../../protocol/errors.js';
import { runCommand } from './probe.js';

const READINESS_TIMEOUT_MS = 10_000;

export interface ReadinessCheck {
  binary: string;
  env: Record<string, string>;
  cwd: string;
  /** Display name of the CLI, e.g. "Codex CLI". */
  product: string;
  minimumVersion: string;
  /** Extracts `x.y.z` from the `--version` output. */
  parseVersion(output: string): string | undefined;
}

/** Returns the installed version; throws CLI_UNAVAILABLE, CLI_UPGRADE_REQUIRED or TIMEOUT. */
export async function checkReadiness(check: ReadinessCheck, signal: AbortSignal): Promise<string> {
  const bound = AbortSignal.timeout(READINESS_TIMEOUT_MS);
  const combined = AbortSignal.any([signal, bound]);
  let output: { code: number | null; stdout: string };
  try {
    output = await runCommand({ ...check, accountDirectory: undefined }, ['--version'], combined);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (bound.aborted) throw new DriverError('TIMEOUT', `${check.product} did not report its version in time.`);
    throw error;
  }
  const version = output.code === 0 ? check.parseVersion(output.stdout) : undefined;
  if (version === undefined) {
    throw new DriverError('CLI_UNAVAILABLE', `${check.product} did not report a usable version.`);
  }
  if (compareVersions(version, check.minimumVersion) < 0) {
    throw new DriverError('CLI_UPGRADE_REQUIRED', `${check.product} ${version} is too old; version ${check.minimumVersion} or newer is required.`);
  }
  return version;
}

export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}

/** The first `x.y.z` in a version banner. */
export function firstSemver(output: string): string | undefined {
  return /(\d+\.\d+\.\d+)/.exec(output)?.[1];
}
