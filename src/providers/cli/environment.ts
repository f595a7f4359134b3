/**
 * The environment a CLI child gets: an explicit allowlist of the host's variables (never its
 * API keys or tokens), plus what the operator configured for that provider, plus the
 * adapter's own switches (which always win, so config cannot re-enable telemetry).
 */
const HOST_ALLOWLIST = [
  'PATH', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ',
  'XDG_RUNTIME_DIR', 'DBUS_SESSION_BUS_ADDRESS',
  'SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS',
  'HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'all_proxy', 'no_proxy',
  'SystemRoot', 'SYSTEMROOT', 'WINDIR', 'COMSPEC', 'PATHEXT', 'APPDATA', 'LOCALAPPDATA', 'USERPROFILE',
] as const;

export interface ChildEnvironmentOptions {
  /** The host's environment (defaults to process.env). */
  host?: NodeJS.ProcessEnv;
  /** HOME for the child: the user's home when no account directory is configured. */
  home: string;
  /** Private temporary directory of this run. */
  tmpDir: string;
  /** Variables the operator configured for this provider (already resolved). */
  configured?: Record<string, string>;
  /** The adapter's own variables (account directory, telemetry and retry switches). */
  adapter: Record<string, string>;
}

export function childEnvironment(options: ChildEnvironmentOptions): Record<string, string> {
  const host = options.host ?? process.env;
  const env: Record<string, string> = {};
  for (const name of HOST_ALLOWLIST) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, options.configured ?? {});
  env.HOME = options.home;
  env.TMPDIR = options.tmpDir;
  env.TMP = options.tmpDir;
  env.TEMP = options.tmpDir;
  Object.assign(env, options.adapter);
  return env;
}
