/** `agenticdriver providers list | add | remove`: provider instances in the config, listed as a client reads it, edited safely (./config-edit.ts). */
import { DriverError } from '../protocol/errors.js';
import { readClientConfig, resolveConfigPath } from '../host/config-file.js';
import type { ConfigChange } from './config-edit.js';
import type { ProviderEntryOptions } from './init.js';
import { printJson, printLines, table, wantsJson } from './output.js';

interface Options {
  config?: string;
  json?: boolean;
}

/** Where a provider's key comes from, never the key. */
function keySource(entry: Record<string, unknown>): string {
  const ref = entry.apiKeyRef as { env?: string; file?: string } | undefined;
  if (!ref) return '';
  return ref.env !== undefined ? `env ${ref.env}` : `file ${ref.file}`;
}

export async function listProvidersCommand(options: Options): Promise<void> {
  const config = await readClientConfig(resolveConfigPath(options.config));
  const providers = config.providers.map((entry) => {
    const fields = entry as unknown as Record<string, unknown>;
    return {
      id: entry.id,
      kind: entry.kind,
      models: fields.models as string[],
      ...(fields.apiKeyRef ? { key: keySource(fields) } : {}),
      ...(typeof fields.baseUrl === 'string' ? { baseUrl: fields.baseUrl } : {}),
      grantedTo: config.tokens.filter((token) => token.providers.includes(entry.id)).map((token) => token.id),
    };
  });
  if (wantsJson(options)) return printJson({ providers });
  printLines(
    table(
      ['id', 'kind', 'models', 'key', 'granted to'],
      providers.map((provider) => [provider.id, provider.kind, provider.models.join(', ') || '(none allowed)', provider.key ?? '', provider.grantedTo.join(', ') || '(no token)']),
    ),
  );
}

export async function addProviderCommand(kind: string, options: Options & ProviderEntryOptions & { grant?: string[] | false }): Promise<void> {
  // Editing loads the host's own config checks (every extension's); listing needs none of it.
  const [{ editConfig, RELOAD_HINT }, { providerEntry }] = await Promise.all([import('./config-edit.js'), import('./init.js')]);
  const path = resolveConfigPath(options.config);
  const entry = providerEntry({ ...options, provider: kind });
  const id = entry.id as string;
  const result = await editConfig(path, ({ raw }) => {
    if (raw.providers.some((provider) => provider.id === id)) {
      throw new DriverError('INVALID_ARGUMENT', `A provider with id ${id} is already configured; pick another with --id.`);
    }
    const known = raw.tokens.map((token) => token.id);
    const grantees = options.grant === false ? [] : (options.grant ?? known);
    for (const token of grantees) if (!known.includes(token)) throw new DriverError('INVALID_ARGUMENT', `No token entry ${token}; the tokens are ${known.join(', ')}.`);
    const changes: ConfigChange[] = [{ path: ['providers'], value: entry, append: true }];
    raw.tokens.forEach((token, index) => {
      if (grantees.includes(token.id)) changes.push({ path: ['tokens', index, 'providers'], value: id, append: true });
    });
    return { changes, result: grantees };
  });
  const keyEnv = (entry.apiKeyRef as { env?: string } | undefined)?.env;
  const report = { configPath: path, added: entry, grantedTo: result, ...(keyEnv ? { environment: [keyEnv] } : {}), next: RELOAD_HINT };
  if (wantsJson(options)) return printJson(report);
  printLines([
    `Added provider ${id} (kind ${kind}, models ${(entry.models as string[]).join(', ')}) to ${path}.`,
    result.length > 0 ? `Granted to: ${result.join(', ')}.` : 'Granted to no token (grant it with `agenticdriver tokens grant <token> --provider ' + id + '`).',
    ...(keyEnv ? [`The host reads its API key from the environment variable ${keyEnv}: set it where \`agenticdriver serve\` runs.`] : []),
    RELOAD_HINT,
  ]);
}

export async function removeProviderCommand(id: string, options: Options): Promise<void> {
  const { editConfig, RELOAD_HINT } = await import('./config-edit.js');
  const path = resolveConfigPath(options.config);
  const revoked = await editConfig(path, ({ raw }) => {
    const index = raw.providers.findIndex((provider) => provider.id === id);
    if (index < 0) throw new DriverError('INVALID_ARGUMENT', `No provider ${id} is configured; the providers are ${raw.providers.map((provider) => provider.id).join(', ')}.`);
    const changes: ConfigChange[] = [];
    const holders: string[] = [];
    raw.tokens.forEach((token, tokenIndex) => {
      const grant = token.providers.indexOf(id);
      if (grant < 0) return;
      holders.push(token.id);
      changes.push({ path: ['tokens', tokenIndex, 'providers', grant], value: undefined });
    });
    changes.push({ path: ['providers', index], value: undefined });
    return { changes, result: holders };
  });
  if (wantsJson(options)) return printJson({ configPath: path, removed: id, revokedFrom: revoked, next: RELOAD_HINT });
  printLines([`Removed provider ${id} from ${path}${revoked.length > 0 ? `, and its grant from ${revoked.join(', ')}` : ''}.`, RELOAD_HINT]);
}
