/**
 * `agenticdriver tokens list | add | remove | grant | revoke`: bearer-token entries in the
 * config, edited safely (./config-edit.ts). A new token is random, lives in a private file
 * beside the config and is never printed; listings show where a token comes from, never it.
 */
import { mkdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import { resolveConfigPath } from '../host/config.js';
import { editConfig, readConfigDocument, RELOAD_HINT, type ConfigChange, type ConfigDocument } from './config-edit.js';
import { writeTokenFile } from './init.js';
import { printJson, printLines, table, wantsJson } from './output.js';

interface Options {
  config?: string;
  json?: boolean;
}

interface Grants {
  provider?: string[];
  jobs?: string[];
  sessions?: string[];
  operator?: boolean;
}

type TokenRaw = ConfigDocument['raw']['tokens'][number];

/** The grant lists a token entry holds, by config field, and the flag that names each. */
const LISTS = [
  ['providers', 'provider'],
  ['jobs', 'jobs'],
  ['sessions', 'sessions'],
] as const;

function summary(token: TokenRaw) {
  const ref = token.tokenRef as { env?: string; file?: string };
  const retrieval = token.retrieval as { search?: string[]; index?: string[]; delete?: string[] } | undefined;
  return {
    id: token.id,
    subject: token.subject as string,
    token: ref.env !== undefined ? `env ${ref.env}` : `file ${ref.file}`,
    providers: token.providers,
    jobs: (token.jobs as string[] | undefined) ?? [],
    sessions: (token.sessions as string[] | undefined) ?? [],
    ...(retrieval ? { retrieval } : {}),
    operator: token.operator === true,
  };
}

export async function listTokensCommand(options: Options): Promise<void> {
  const { raw } = await readConfigDocument(resolveConfigPath(options.config));
  const tokens = raw.tokens.map(summary);
  if (wantsJson(options)) return printJson({ tokens });
  const list = (values: string[]) => values.join(', ') || '-';
  printLines(
    table(
      ['id', 'subject', 'token from', 'providers', 'jobs', 'sessions', 'operator'],
      tokens.map((token) => [token.id, token.subject, token.token, list(token.providers), list(token.jobs), list(token.sessions), token.operator ? 'yes' : 'no']),
    ),
  );
}

function findToken(raw: ConfigDocument['raw'], id: string): number {
  const index = raw.tokens.findIndex((token) => token.id === id);
  if (index < 0) throw new DriverError('INVALID_ARGUMENT', `No token entry ${id}; the tokens are ${raw.tokens.map((token) => token.id).join(', ')}.`);
  return index;
}

function checkProviders(raw: ConfigDocument['raw'], providers: readonly string[]): void {
  const known = raw.providers.map((provider) => provider.id);
  for (const id of providers) if (!known.includes(id)) throw new DriverError('INVALID_ARGUMENT', `No provider ${id} is configured; the providers are ${known.join(', ')}.`);
}

export async function addTokenCommand(id: string, options: Options & Grants & { subject?: string }): Promise<void> {
  const path = resolveConfigPath(options.config);
  if (!/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}$/.test(id)) throw new DriverError('INVALID_ARGUMENT', 'A token id is 1-80 letters, digits, ".", "_" or "-", starting with a letter or digit.');
  const relativeFile = `credentials/${id}.token`;
  const tokenFile = join(dirname(path), relativeFile);
  const { raw } = await readConfigDocument(path);
  if (raw.tokens.some((token) => token.id === id)) throw new DriverError('INVALID_ARGUMENT', `A token entry ${id} already exists.`);
  const providers = options.provider ?? raw.providers.map((provider) => provider.id);
  checkProviders(raw, providers);
  const entry = {
    id,
    subject: options.subject ?? id,
    tokenRef: { file: relativeFile },
    providers,
    ...(options.jobs ? { jobs: [...new Set(options.jobs)] } : {}),
    ...(options.sessions ? { sessions: [...new Set(options.sessions)] } : {}),
    ...(options.operator ? { operator: true } : {}),
  };
  await mkdir(dirname(tokenFile), { recursive: true, mode: 0o700 });
  await writeTokenFile(tokenFile);
  try {
    await editConfig(path, () => ({ changes: [{ path: ['tokens'], value: entry, append: true }], result: undefined }));
  } catch (error) {
    await unlink(tokenFile).catch(() => undefined);
    throw error;
  }
  if (wantsJson(options)) return printJson({ configPath: path, added: summary(entry), tokenFile, next: RELOAD_HINT });
  printLines([
    `Added token ${id} (subject ${entry.subject}; providers ${providers.join(', ') || 'none'}) to ${path}.`,
    `Its token is in ${tokenFile} (private; give it to the application, e.g. cat it into its secret store).`,
    RELOAD_HINT,
  ]);
}

export async function removeTokenCommand(id: string, options: Options): Promise<void> {
  const path = resolveConfigPath(options.config);
  const removed = await editConfig(path, ({ raw }) => {
    const index = findToken(raw, id);
    return { changes: [{ path: ['tokens', index], value: undefined }], result: summary(raw.tokens[index]!) };
  });
  if (wantsJson(options)) return printJson({ configPath: path, removed, next: RELOAD_HINT });
  printLines([`Removed token ${id} from ${path}. Its ${removed.token} is no longer accepted; delete the file if nothing else uses it.`, RELOAD_HINT]);
}

/** Adds (`grant`) or takes away (`revoke`) the named grants of one token entry. */
async function changeGrants(id: string, options: Options & Grants, grant: boolean): Promise<void> {
  const path = resolveConfigPath(options.config);
  if (!options.provider && !options.jobs && !options.sessions && !options.operator) {
    throw new DriverError('INVALID_ARGUMENT', `Name what to ${grant ? 'grant' : 'revoke'}: --provider, --jobs, --sessions or --operator.`);
  }
  const after = await editConfig(path, ({ raw }) => {
    const index = findToken(raw, id);
    const token = raw.tokens[index]!;
    if (grant && options.provider) checkProviders(raw, options.provider);
    const changes: ConfigChange[] = [];
    const updated: TokenRaw = { ...token };
    for (const [field, flag] of LISTS) {
      const named = options[flag];
      if (!named) continue;
      const current = (token[field] as string[] | undefined) ?? [];
      const next = grant ? [...new Set([...current, ...named])] : current.filter((value) => !named.includes(value));
      updated[field] = next;
      changes.push({ path: ['tokens', index, field], value: next });
    }
    if (options.operator) {
      updated.operator = grant ? true : undefined;
      changes.push({ path: ['tokens', index, 'operator'], value: grant ? true : undefined });
    }
    return { changes, result: summary(updated) };
  });
  if (wantsJson(options)) return printJson({ configPath: path, token: after, next: RELOAD_HINT });
  printLines([
    `Token ${id} now has: providers ${after.providers.join(', ') || 'none'}; jobs ${after.jobs.join(', ') || 'none'}; sessions ${after.sessions.join(', ') || 'none'}; operator ${after.operator ? 'yes' : 'no'}.`,
    RELOAD_HINT,
  ]);
}

export const grantTokenCommand = (id: string, options: Options & Grants) => changeGrants(id, options, true);
export const revokeTokenCommand = (id: string, options: Options & Grants) => changeGrants(id, options, false);
