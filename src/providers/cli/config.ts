/** The config entry every CLI kind accepts, and how it resolves into adapter options. */
import { isAbsolute, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { ModelId, ProviderId } from '../../protocol/schemas.js';
import { SecretRef } from '../../shared/secret-ref.js';
import type { ProviderEnvironment } from '../registry.js';
import type { NativeToolProfile } from './native-tools.js';

export const EnvironmentName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' });

/** The entry of a kind; `nativeToolProfiles` are the profiles besides `off` it accepts. */
export function cliConfigSchema<K extends string>(kind: K, nativeToolProfiles: readonly Exclude<NativeToolProfile, 'off'>[] = []) {

  return Type.Object(
    {
      kind: Type.Literal(kind),
      id: ProviderId,
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      models: Type.Array(ModelId, { maxItems: 1000, uniqueItems: true }),
      /** Binary name (looked up on PATH) or path; relative paths resolve against the config file. */
      binary: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      /** The CLI's own account/config directory for this instance (e.g. a separate sign-in). */
      accountDirectory: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      /** Variables set explicitly for this CLI (e.g. a gateway URL); the host's own are never forwarded. */
      environment: Type.Optional(Type.Record(EnvironmentName, Type.Union([Type.String({ maxLength: 65_536 }), SecretRef]), { additionalProperties: false, maxProperties: 64 })),
      /** Keep up to `processes` long-lived CLI processes for reuse (kinds with a long-lived mode), each reaped after `idleSeconds` unused. */
      warm: Type.Optional(
        Type.Object(
          { processes: Type.Integer({ minimum: 1, maximum: 8 }), idleSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })) },
          { additionalProperties: false },
        ),
      ),
      /** The CLI's own tools this instance may use (default `off`): a profile the kind supports, see docs/providers.md. */
      nativeTools: Type.Optional(Type.Union(['off', ...nativeToolProfiles].map((profile) => Type.Literal(profile)))),
    },
    { additionalProperties: false, $id: `${kind}ProviderConfig` },
  );
}

export type CliConfigEntry = Static<ReturnType<typeof cliConfigSchema>>;

/** Options of a CLI adapter, as the factory functions take them. */
export interface CliProviderOptions {
  id?: string;
  name?: string;
  models?: string[];
  binary?: string;
  accountDirectory?: string;
  /** Resolved before every run, so secrets are re-read. */
  environment?: () => Promise<Record<string, string>>;
  outputLimitBytes?: number;
  killGraceMs?: number;
  /** Host environment the allowlist is taken from (defaults to process.env). */
  hostEnvironment?: NodeJS.ProcessEnv;
  /** Warm reuse of long-lived processes (ignored by kinds without a long-lived mode). */
  warm?: { processes: number; idleMs: number };
  /** The CLI's own tools (default `off`); runs with a profile use the one-shot mode. */
  nativeTools?: NativeToolProfile;
  /** Candidate folders for run directories, in order (defaults: XDG_RUNTIME_DIR, then the home's cache). */
  runBases?: string[];
}

const DEFAULT_WARM_IDLE_SECONDS = 300;

export function optionsFromConfig(entry: CliConfigEntry, env: ProviderEnvironment): CliProviderOptions {
  const inConfigDir = (path: string) => (isAbsolute(path) ? path : resolve(env.configDir, path));
  const binary = entry.binary === undefined ? undefined : entry.binary.includes('/') ? inConfigDir(entry.binary) : entry.binary;
  const configured = entry.environment;
  return {
    id: entry.id,
    ...(entry.name === undefined ? {} : { name: entry.name }),
    models: entry.models,
    ...(binary === undefined ? {} : { binary }),
    ...(entry.accountDirectory === undefined ? {} : { accountDirectory: inConfigDir(entry.accountDirectory) }),
    ...(entry.nativeTools === undefined ? {} : { nativeTools: entry.nativeTools as NativeToolProfile }),
    ...(entry.warm === undefined ? {} : { warm: { processes: entry.warm.processes, idleMs: (entry.warm.idleSeconds ?? DEFAULT_WARM_IDLE_SECONDS) * 1000 } }),
    ...(configured === undefined
      ? {}
      : {
          environment: async () => {
            const resolved: Record<string, string> = {};
            for (const [name, value] of Object.entries(configured)) resolved[name] = typeof value === 'string' ? value : await env.readSecret(value);
            return resolved;
          },
        }),
  };
}
