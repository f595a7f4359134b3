/**
 * `agenticdriver init`: a working config for the embedded defaults (the `mock` provider,
 * SQLite state) and one bearer token in a private file. Never overwrites anything and
 * never prints the token.
 */
import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DriverError } from '../protocol/errors.js';
import { DEFAULT_PORT, parseHostConfig, resolveConfigPath } from '../host/config.js';
import { fields, printJson, printLines, shellWord, wantsJson } from './output.js';

export interface InitResult {
  configPath: string;
  tokenFile: string;
  /** The operator token (the console and the `/v1/operator/...` endpoints). */
  operatorTokenFile: string;
  provider: string;
  models: string[];
  /** The default corpus's embedder: the built-in hash embedder, or a local model found or named. */
  embedder: string;
  /** Environment variables the provider reads (its API key), which `serve` needs set. */
  environment?: string[];
}

export interface InitOptions {
  provider?: string;
  model?: string[];
  apiKeyEnv?: string;
  baseUrl?: string;
  binary?: string;
  accountDirectory?: string;
  /** A local sentence-embedding model's directory (model.onnx + tokenizer.json) for the default corpus. */
  embeddingModel?: string;
}

/** What `providers add` takes beyond `init`'s provider flags. */
export interface ProviderEntryOptions extends InitOptions {
  id?: string;
  apiKeyFile?: string;
}

/** The JSON Schema of the config, as this package ships it (what an editor validates the file against). */
export const CONFIG_SCHEMA_URL = pathToFileURL(fileURLToPath(new URL('../../protocol/host-config.schema.json', import.meta.url))).href;

export const LOCAL_TOKEN_ID = 'local';
export const OPERATOR_TOKEN_ID = 'operator';

export const API_KEY_ENV: Record<string, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
  xai: 'XAI_API_KEY',
  'openai-compatible': 'PROVIDER_API_KEY',
};
export const CLI_KINDS = new Set(['codex', 'claude-code', 'gemini-cli']);

/** The provider entry `init` (and `providers add`) writes, from its flags; each family takes only its own flags. */
export function providerEntry(options: ProviderEntryOptions): Record<string, unknown> {
  const kind = options.provider ?? 'mock';
  const api = kind in API_KEY_ENV;
  const cli = CLI_KINDS.has(kind);
  const refuse = (flag: string) => {
    throw new DriverError('INVALID_ARGUMENT', `${flag} does not apply to provider kind ${kind}.`);
  };
  if (!api && (options.apiKeyEnv !== undefined || options.apiKeyFile !== undefined || options.baseUrl !== undefined)) {
    refuse(options.apiKeyEnv !== undefined ? '--api-key-env' : options.apiKeyFile !== undefined ? '--api-key-file' : '--base-url');
  }
  if (options.apiKeyEnv !== undefined && options.apiKeyFile !== undefined) throw new DriverError('INVALID_ARGUMENT', 'Give --api-key-env or --api-key-file, not both.');
  if (!cli && (options.binary !== undefined || options.accountDirectory !== undefined)) refuse(options.binary !== undefined ? '--binary' : '--account-directory');
  const id = options.id ?? kind;
  if (kind === 'mock') return { kind, id, models: options.model ?? ['demo'] };
  if (!api && !cli) throw new DriverError('INVALID_ARGUMENT', `Unknown provider kind ${kind}; one of mock, ${[...Object.keys(API_KEY_ENV), ...CLI_KINDS].join(', ')}.`);
  if (!options.model?.length) throw new DriverError('INVALID_ARGUMENT', `--model is required for provider kind ${kind}.`);
  const entry: Record<string, unknown> = { kind, id, models: options.model };
  if (api) {
    entry.apiKeyRef = options.apiKeyFile !== undefined ? { file: options.apiKeyFile } : { env: options.apiKeyEnv ?? API_KEY_ENV[kind] };
    if (kind === 'openai-compatible' && !options.baseUrl) throw new DriverError('INVALID_ARGUMENT', '--base-url is required for openai-compatible.');
    if (options.baseUrl) entry.baseUrl = options.baseUrl;
  }
  if (options.binary) entry.binary = options.binary;
  if (options.accountDirectory) entry.accountDirectory = options.accountDirectory;
  return entry;
}

/** The corpus `agenticdriver ingest` and `run --retrieval` use unless told otherwise. */
export const DEFAULT_CORPUS = 'default';

export async function initConfig(configPath: string, options: InitOptions = {}): Promise<InitResult> {
  const provider = providerEntry(options);
  if (await exists(configPath)) throw new DriverError('CONFIG_EXISTS', `${configPath} already exists; init never overwrites.`);
  const directory = dirname(configPath);
  const embedding = await localEmbedding(directory, options.embeddingModel);
  const credentials = join(directory, 'credentials');
  await mkdir(credentials, { recursive: true, mode: 0o700 });
  const tokenFile = join(credentials, `${LOCAL_TOKEN_ID}.token`);
  const operatorTokenFile = join(credentials, `${OPERATOR_TOKEN_ID}.token`);
  const config = {
    $schema: CONFIG_SCHEMA_URL,
    version: 1,
    listen: { host: '127.0.0.1', port: DEFAULT_PORT },
    providers: [provider],
    tokens: [
      {
        id: LOCAL_TOKEN_ID,
        subject: 'local',
        tokenRef: { file: `credentials/${LOCAL_TOKEN_ID}.token` },
        providers: [provider.id],
        tools: [],
        sessions: ['create', 'read', 'continue', 'delete'],
        jobs: ['submit', 'read', 'cancel'],
        // Scoped retrieval: the local token searches, indexes (ingests) and deletes the default corpus.
        retrieval: { search: [DEFAULT_CORPUS], index: [DEFAULT_CORPUS], delete: [DEFAULT_CORPUS] },
      },
      // A separate token for the person running the host: the console and the operator endpoints.
      {
        id: OPERATOR_TOKEN_ID,
        subject: 'operator',
        tokenRef: { file: `credentials/${OPERATOR_TOKEN_ID}.token` },
        providers: [provider.id],
        operator: true,
      },
    ],
    state: { engine: 'sqlite', directory: 'state' },
    sessions: { retentionMs: 24 * 60 * 60 * 1000 },
    jobs: { retentionMs: 7 * 24 * 60 * 60 * 1000 },
    // The operator console at /console, for loopback clients only.
    console: { enabled: true },
    // BM25 in the state store, fused with a local embedding model when one was found or named;
    // without one, no model and no network (docs/retrieval.md).
    retrieval: { corpora: [{ id: DEFAULT_CORPUS, ...(embedding ? { embedding } : {}) }] },
  };
  parseHostConfig(config, configPath);

  await writeTokenFile(tokenFile);
  try {
    await writeTokenFile(operatorTokenFile);
    await writeExclusive(configPath, `${JSON.stringify(config, null, 2)}\n`);
  } catch (error) {
    await unlink(tokenFile).catch(() => undefined);
    await unlink(operatorTokenFile).catch(() => undefined);
    throw error;
  }
  const keyRef = provider.apiKeyRef as { env?: string } | undefined;
  return { configPath, tokenFile, operatorTokenFile, provider: provider.id as string, models: provider.models as string[], embedder: embedding ? `local (${embedding.model})` : 'builtin', ...(keyRef?.env ? { environment: [keyRef.env] } : {}) };
}

/** `agenticdriver init`: creates the config, then says what to run next (with the flags and variables it needs). */
export async function initCommand(options: InitOptions & { config?: string; json?: boolean }): Promise<void> {
  const result = await initConfig(resolveConfigPath(options.config), options);
  // `--config` is needed later unless the file is where every command looks by default.
  const needsConfigFlag = result.configPath !== resolveConfigPath(undefined, { ...process.env, AGENTICDRIVER_CONFIG: '' });
  const next = `agenticdriver serve${needsConfigFlag ? ` --config ${shellWord(result.configPath)}` : ''}`;
  if (wantsJson(options)) return printJson({ ...result, next });
  printLines([
    `Created ${result.configPath}`,
    ...fields([
      ['provider', `${result.provider} (models: ${result.models.join(', ')})`],
      ['token file', `${result.tokenFile} (application token)`],
      ['operator token', `${result.operatorTokenFile} (the console and /v1/operator/...)`],
      ['corpus default', `embedder ${result.embedder}`],
    ]),
    '',
    'Next:',
    ...(result.environment ?? []).map((name) => `  export ${name}=...   # the provider's API key; the host reads it from the environment`),
    `  ${next}`,
  ]);
}

/** A new random bearer token in a new private file (never overwrites). */
export async function writeTokenFile(path: string): Promise<void> {
  await writeExclusive(path, `${randomBytes(32).toString('base64url')}\n`);
}

/** Where init looks for a local embedding model when none is named: one folder under `models/` beside the config. */
export const MODELS_DIRECTORY = 'models';

/**
 * The default corpus's local model: the directory named, or the only model under `models/` when
 * the runtime packages are installed. Its dimensions come from embedding one text.
 */
async function localEmbedding(configDir: string, named: string | undefined): Promise<Record<string, unknown> | undefined> {
  // Loaded here, not at the top: `providers add` shares this module and must stay a fast command.
  const { LocalModelEmbedder, localModelFiles, localModelRuntimeInstalled, LOCAL_MODEL_PACKAGES } = await import('../providers/embeddings/index.js');
  let directory = named === undefined ? undefined : resolve(named);
  if (directory === undefined) {
    const found = await readdir(join(configDir, MODELS_DIRECTORY), { withFileTypes: true }).catch(() => []);
    const models = found.filter((entry) => entry.isDirectory()).map((entry) => join(configDir, MODELS_DIRECTORY, entry.name));
    const usable = models.filter((candidate) => {
      try {
        localModelFiles(candidate);
        return true;
      } catch {
        return false;
      }
    });
    if (usable.length !== 1 || !localModelRuntimeInstalled()) return undefined;
    directory = usable[0]!;
  } else if (!localModelRuntimeInstalled()) {
    throw new DriverError('INVALID_ARGUMENT', `--embedding-model needs the npm packages ${LOCAL_MODEL_PACKAGES.join(' and ')} (docs/retrieval.md).`);
  }
  localModelFiles(directory);
  const model = basename(directory).replace(/[^a-zA-Z0-9._:-]/g, '-').replace(/^[^a-zA-Z0-9]+/, '').slice(0, 200) || 'local-model';
  const probe = new LocalModelEmbedder({ identity: { providerId: 'local', vendor: 'local', authMode: 'none', model, dimensions: 1 }, directory, maxTokens: 16, pooling: 'mean', threads: 1 });
  try {
    const [vector] = (await probe.embed(['dimensions'])).vectors;
    return { kind: 'local', model, dimensions: vector!.length, path: relative(configDir, directory) || '.' };
  } finally {
    await probe.close();
  }
}

async function writeExclusive(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new DriverError('CONFIG_EXISTS', `${path} already exists; init never overwrites.`);
    }
    throw new DriverError('CONFIG_WRITE_FAILED', `Could not write ${path}.`);
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
