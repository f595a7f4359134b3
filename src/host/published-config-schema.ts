/**
 * The host config's published schema: the core fields, each extension's section and token grant
 * fields from the list (`EXTENSIONS`), and every provider kind's entry. It is the source of
 * `protocol/host-config.schema.json` and of the ahead-of-time validators in
 * protocol/validators/host-config.js (`npm run protocol`). It loads every provider kind, so the
 * config path (./config.ts) never imports it.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import type { Extension } from '../http/extension.js';
import { EXTENSIONS } from '../extensions/index.js';
import { configSchemaOf, PostgresState, SqliteState } from './config-schema.js';

/** The host config's schema, for a list of extensions: a provider entry is one of the kinds' entries. */
export function hostConfigSchema(extensions: readonly Extension[] = EXTENSIONS) {
  return configSchemaOf(
    extensions,
    Type.Union(PROVIDER_KINDS.map((kind) => kind.configSchema)),
  );
}

/** The whole config, and the parts `parseHostConfig` checks on their own for a clearer message. */
export const HOST_CONFIG_PARTS = { hostConfig: hostConfigSchema(), sqliteState: SqliteState, postgresState: PostgresState };

/** Each provider kind's strict entry schema, by kind. */
export const PROVIDER_ENTRY_SCHEMAS: Record<string, TSchema> = Object.fromEntries(PROVIDER_KINDS.map((kind) => [kind.kind, kind.configSchema]));
