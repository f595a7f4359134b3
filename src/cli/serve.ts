/** `agenticdriver serve`: load (or first create) the config, start the host, stop on signals. */
import { resolve } from 'node:path';
import { assertListenerSecure, readHostConfig, resolveConfigPath } from '../host/config.js';
import { startHost } from '../host/index.js';
import { createHostLogger } from '../http/logging.js';
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
  const config = await readHostConfig(configPath);
  if (options.host !== undefined) config.listen = { ...config.listen, host: options.host };
  if (options.port !== undefined) config.listen = { ...config.listen, port: options.port };
  assertListenerSecure(config.listen);

  const host = await startHost({ config, log: createHostLogger() });
  const operatorToken = config.tokens.find((token) => token.operator && 'file' in token.tokenRef);
  const operatorFile = operatorToken && 'file' in operatorToken.tokenRef ? resolve(config.configDir, operatorToken.tokenRef.file) : undefined;
  const tokenFiles = config.tokens.flatMap((token) => ('file' in token.tokenRef ? [resolve(config.configDir, token.tokenRef.file)] : []));
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ event: 'listening', url: host.url, ...(host.consoleUrl ? { consoleUrl: host.consoleUrl } : {}), configPath, pid: process.pid })}\n`);
  } else {
    process.stdout.write(
      [
        `agenticdriver is listening on ${host.url}`,
        `config: ${configPath}${created ? ' (created)' : ''}`,
        ...tokenFiles.map((file) => `bearer token file: ${file}`),
        `try: curl -H "Authorization: Bearer $(cat ${tokenFiles[0] ?? 'TOKEN_FILE'})" ${host.url}/v1/providers`,
        ...(host.consoleUrl ? [`operator console: ${host.consoleUrl} (sign in with a token that has the operator grant${operatorFile ? `: cat ${operatorFile}` : ''})`] : []),
        '',
      ].join('\n'),
    );
  }
  const stop = () => {
    host.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
