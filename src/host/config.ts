/**
 * The host's configuration, as the host reads it: the file's core fields (./config-file.ts),
 * and each extension of the list with its section and its token grant fields, checked by the
 * extension's own declaration, as each provider kind adds its entry. `protocol/host-config.schema.json`
 * and the validators used here (`protocol/validators/host-config.js`) are generated from
 * `hostConfigSchema()` (./published-config-schema.ts), which derives the extensions' part from
 * `EXTENSIONS`. Loading a config loads each extension's declaration, never its implementation,
 * nor any provider kind.
 */
import { createRequire } from 'node:module';
import { Type } from '@sinclair/typebox';
import type { GrantField } from '../http/access.js';
import type { Extension } from '../http/extension.js';
import { EXTENSIONS } from '../extensions/index.js';
import { configSchemaOf } from './config-schema.js';
import { parseConfig, parseConfigText, readConfigText, type HostConfig, type Validator } from './config-file.js';
import * as compiled from '../../protocol/validators/host-config.js';

export { DEFAULT_BODY_BYTES, DEFAULT_PORT, MAX_BODY_BYTES } from './config-constants.js';
export { assertListenerSecure, resolveConfigPath, sectionOf, type HostConfig, type HostLimits, type ProviderEntry, type TokenEntry } from './config-file.js';

/** The token fields the extensions add, with the grants each gives. */
export function tokenGrants(extensions: readonly Extension[] = EXTENSIONS): Record<string, GrantField> {
  return Object.assign({}, ...extensions.map((extension) => extension.grants ?? {}));
}

const validators = new WeakMap<readonly Extension[], Validator>([[EXTENSIONS, compiled.hostConfig]]);

/**
 * Any provider entry, in the schema compiled for another list of extensions: `parseConfig`
 * has checked each entry against its kind's compiled schema before, so the provider kinds'
 * code need not load.
 */
const ProviderEntryChecked = Type.Object({ kind: Type.String() });

/**
 * The validator of the config schema a list of extensions gives: for `EXTENSIONS` the one
 * compiled ahead of time; for another list (an application's, a test's) compiled now, each with
 * its own Ajv (the schema's `$id` is the same).
 */
function validatorOf(extensions: readonly Extension[]): Validator {
  let validate = validators.get(extensions);
  if (!validate) {
    // Ajv and its code generator load only here, off the path of the list's own config.
    const { Ajv2020 } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    validators.set(extensions, (validate = new Ajv2020({ strict: false, allErrors: false }).compile(configSchemaOf(extensions, ProviderEntryChecked))));
  }
  return validate;
}

export async function readHostConfig(path: string): Promise<HostConfig> {
  return parseHostConfigText(await readConfigText(path), path);
}

/**
 * A config file's text, checked as `readHostConfig` checks it: a syntax error names its line
 * and column, and so does a value the schema refuses.
 */
export function parseHostConfigText(text: string, path: string): Promise<HostConfig> {
  return parseConfigText(text, path, (raw, at) => parseHostConfig(raw, at));
}

/** Validates a parsed config object for a host with `extensions`; `path` anchors relative paths. */
export function parseHostConfig(raw: unknown, path: string, extensions: readonly Extension[] = EXTENSIONS): HostConfig {
  return parseConfig(raw, path, validatorOf(extensions), extensions);
}
