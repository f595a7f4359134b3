/**
 * Starting the extensions of the list that the config turns on, in the list's order: each one's
 * section (or default), the services they offer each other and the run path, the run services
 * the runtime is built from, what they observe, and the features the host then advertises.
 */
import type { Feature } from '../protocol/endpoints.js';
import { AgenticDriver, type DriverOptions } from '../runtime/driver.js';
import type { Admission } from '../http/admission.js';
import { RunService } from '../http/run-service.js';
import type { StoreOptions } from '../store/open.js';
import type { Extension, ExtensionDeps, ExtensionInstance, HostServices, RunServiceOptions } from '../http/extension.js';
import type { HostConfig } from './config.js';
import { sectionOf } from './config.js';
import type { Lifecycle } from './server.js';

interface Enabled {
  extension: Extension;
  section: unknown;
}

/** The extensions the config turns on, with their sections. */
export function enabledExtensions(config: HostConfig, extensions: readonly Extension[]): Enabled[] {
  return extensions.flatMap((extension) => {
    const section = sectionOf(config, extension) ?? extension.defaultConfig;
    const on = extension.enabled ? extension.enabled(config, section) : section !== undefined;
    return on ? [{ extension, section }] : [];
  });
}

/** What the enabled extensions need of the store when it is opened. */
export function storeOptionsOf(enabled: readonly Enabled[], config: HostConfig): StoreOptions {
  return Object.assign({}, ...enabled.map(({ extension, section }) => extension.storeOptions?.(section, config) ?? {}));
}

export interface StartedExtensions {
  instances: ExtensionInstance[];
  services: Partial<HostServices>;
  /** The features the started extensions offer. */
  offered: Feature[];
  /** The runtime, built with the run services the extensions offered. */
  driver: AgenticDriver;
  /** The one run path over it. */
  runs: RunService;
}

/**
 * Starts each enabled extension in order. The runtime is built the first time one asks for it
 * (or after the last), from `runtime` and the run services offered until then; it takes its
 * place in `lifecycle` there, so it closes after the extensions that use it and before those
 * it uses. When one fails, what started is closed in reverse.
 */
export async function startExtensions(
  enabled: readonly Enabled[],
  deps: Omit<ExtensionDeps<unknown>, 'config' | 'services' | 'driver' | 'runs'>,
  runtime: Omit<DriverOptions, keyof RunServiceOptions>,
  admission: Admission,
  lifecycle: Lifecycle[],
): Promise<StartedExtensions> {
  const services: Partial<HostServices> = {};
  const runServices: RunServiceOptions = {};
  const instances: ExtensionInstance[] = [];
  const offered: Feature[] = [];
  let driver: AgenticDriver | undefined;
  const built = (): AgenticDriver => {
    if (driver) return driver;
    const created = new AgenticDriver({ ...runtime, ...runServices });
    lifecycle.push({ close: () => created.close() });
    return (driver = created);
  };
  let runs: RunService | undefined;
  const runService = () => (runs ??= new RunService({
    driver: built(),
    services,
    admission,
    observers: deps.observers,
    governor: deps.governor,
    onGovernanceError: (error) => deps.logInternalError(error, 'releasing a run\'s limit holds'),
  }));
  try {
    for (const { extension, section } of enabled) {
      const instance = await extension.create({ ...deps, config: section, services, driver: built, runs: runService });
      if (!instance) continue;
      if (instance.run) {
        if (driver) throw new Error(`Extension ${extension.id} offers run services after the runtime was built: list it before the extensions that use the runtime.`);
        Object.assign(runServices, instance.run);
      }
      Object.assign(services, instance.services);
      if (instance.observe) deps.observers.add(instance.observe);
      offered.push(...(instance.features ?? extension.features));
      instances.push(instance);
      lifecycle.push(instance);
    }
    return { instances, services, offered, driver: built(), runs: runService() };
  } catch (error) {
    for (const part of [...lifecycle].reverse()) await part.close?.().catch(() => undefined);
    throw error;
  }
}
