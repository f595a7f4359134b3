/**
 * `agenticdriver serve`: load (or first create) the config, start the host, reload the config
 * on SIGHUP (src/host/reload.ts: tokens, providers, limits; a bad config keeps the running one
 * and the log says why), stop on SIGINT/SIGTERM.
 */
import { resolve } from 'node:path';
import { DriverError, toDriverError } from '../protocol/errors.js';
import { assertListenerSecure, readHostConfig, resolveConfigPath, type HostConfig } from '../host/config.js';
import { startHost } from '../host/index.js';
import { createHostLogger } from '../host/logging.js';
import { exists, initConfig } from './init.js';

export interface ServeOptions {
  config?: string;
  host?: string;
  port?: number;
  init?: boolean;
  json?: boolean;
}

export async function serve(options: ServeOptions): Promise<void> {
  const configPath = resolveConfigPath(options.config);
  let created = false;
  if (options.init && !(await exists(configPath))) {
    await initConfig(configPath);
    created = true;
  }
  // The command line's --host/--port win over the file, at start and at every reload.
  const load = async (): Promise<HostConfig> => {
    const config = await readHostConfig(configPath);
    if (options.host !== undefined) config.listen = { ...config.listen, host: options.host };
    if (options.port !== undefined) config.listen = { ...config.listen, port: options.port };
    assertListenerSecure(config.listen);
    return config;
  };
  const config = await load();
  const log = createHostLogger();
  const host = await startHost({ config, log }).catch((error: unknown) => {
    throw error instanceof DriverError && error.code === 'LISTEN_FAILED' ? listenFailed(error, options, configPath) : error;
  });
  // Handled before the host says it listens, so a signal sent right after that line stops it cleanly.
  const stop = () => {
    host.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const operatorToken = config.tokens.find((token) => token.operator && 'file' in token.tokenRef);
  const operatorFile = operatorToken && 'file' in operatorToken.tokenRef ? resolve(config.configDir, operatorToken.tokenRef.file) : undefined;
  const tokenFiles = config.tokens.flatMap((token) => ('file' in token.tokenRef ? [resolve(config.configDir, token.tokenRef.file)] : []));
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ event: 'listening', url: host.url, ...(host.consoleUrl ? { consoleUrl: host.consoleUrl } : {}), configPath, pid: process.pid })}\n`);
  } else {
    process.stdout.write(
      [
        `agenticdriver is listening on ${host.url} (pid ${process.pid}; kill -HUP ${process.pid} reloads the config)`,
        `config: ${configPath}${created ? ' (created)' : ''}`,
        ...tokenFiles.map((file) => `bearer token file: ${file}`),
        `try: curl -H "Authorization: Bearer $(cat ${tokenFiles[0] ?? 'TOKEN_FILE'})" ${host.url}/v1/providers`,
        ...(host.consoleUrl ? [`operator console: ${host.consoleUrl} (sign in with a token that has the operator grant${operatorFile ? `: cat ${operatorFile}` : ''})`] : []),
        '',
      ].join('\n'),
    );
  }
  process.on('SIGHUP', () => {
    load()
      .then((next) => host.reload(next))
      .then(
        (result) => log.info({ kind: 'config', configPath, changed: result.changed }, 'config reloaded'),
        (error: unknown) => log.error({ kind: 'config', configPath, error: toDriverError(error).toJSON() }, 'config reload refused; the running config stays'),
      );
  });
}

/** LISTEN_FAILED naming where the address came from and how to pick another. */
function listenFailed(error: DriverError, options: ServeOptions, configPath: string): DriverError {
  const port = options.port !== undefined ? `the port from --port ${options.port}` : `the port from listen.port in ${configPath}`;
  const host = options.host !== undefined ? `the address from --host ${options.host}` : `the address from listen.host in ${configPath}`;
  return new DriverError(
    'LISTEN_FAILED',
    `${error.message.replace(/\.?$/, '.')} It used ${port} and ${host}. Pick another port with --port N (0 picks a free one) or change listen.port in ${configPath}; clients of this config find the port the host really uses in its state directory.`,
    { retryable: error.retryable, cause: error },
  );
}
