/**
 * A2A push notifications: a task's configs are rows in the store (`a2a_push_configs`), and every
 * replica delivers what is due — a task that ended or waits for input and whose config was not
 * told of that yet — whichever replica ran it or took the config. A replica looks when any job
 * changes (the store's signal) and every second (retries whose backoff passed, deliveries a dead
 * replica's lapsed lease left). A delivery is claimed under a lease, POSTed (the task; the
 * config's token in `X-A2A-Notification-Token`, its authentication as `Authorization`), and
 * marked told only after a 2xx: at least once, across a replica's crash. Transport failures,
 * 408, 429 and 5xx are retried with backoff; another answer, or `maxAttempts` failures, gives
 * the notification up (logged).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { StreamResponse } from '@a2a-js/sdk';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { transportTrustingCa } from '../../client/node-ca.js';
import { DriverError } from '../../protocol/errors.js';
import { TERMINAL_EVENT_TYPES } from '../../protocol/terminal-events.js';
import { isLoopbackHost } from '../../shared/addresses.js';
import type { HostLogger } from '../../http/logging.js';
import type { PushDue, StateStore } from '../../store/store.js';
import type { A2aConfig } from './config.js';
import { contextOf, taskOf } from './task-state.js';

export const TOKEN_HEADER = 'X-A2A-Notification-Token';
const DEFAULT_ATTEMPTS = 10;
const DEFAULT_TIMEOUT_MS = 5_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 60_000;
const SWEEP_MS = 1_000;
const PRUNE_MS = 60_000;
const BATCH = 20;

/**
 * A receiver the host may call: HTTPS, or HTTP to a loopback address; no credentials in the URL
 * (the usage webhook's rule); and, with `allowed`, under one of those URL prefixes.
 */
export function checkPushUrl(raw: string, allowed?: readonly string[]): void {
  const url = pushUrl(raw, 'The push notification url');
  if (allowed && !allowed.some((prefix) => isUnder(url, new URL(prefix)))) {
    throw new DriverError('INVALID_REQUEST', 'The push notification url is not under one of the receivers this host allows (a2a.pushNotifications.allowedUrls).');
  }
}

function allows(config: { allowedUrls?: string[] | undefined }, url: string): boolean {
  try {
    checkPushUrl(url, config.allowedUrls);
    return true;
  } catch {
    return false;
  }
}

/** Checks the config's `allowedUrls` when the host starts: each one a URL the rule allows. */
export function checkAllowedUrls(allowed: readonly string[] | undefined): void {
  for (const prefix of allowed ?? []) {
    try {
      pushUrl(prefix, `a2a.pushNotifications.allowedUrls entry ${JSON.stringify(prefix)}`);
    } catch (error) {
      throw new DriverError('INVALID_CONFIG', (error as Error).message);
    }
  }
}

function pushUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DriverError('INVALID_REQUEST', `${what} is not a URL.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new DriverError('INVALID_REQUEST', `${what} must be https, or http to a loopback address.`);
  }
  if (url.username || url.password) throw new DriverError('INVALID_REQUEST', `${what} must not carry credentials; use its authentication.`);
  return url;
}

/** Same scheme, host and port, and the path at or below the prefix's (`/hooks` covers `/hooks/a`, not `/hooksx`). */
function isUnder(url: URL, prefix: URL): boolean {
  if (url.origin !== prefix.origin) return false;
  const base = prefix.pathname.endsWith('/') ? prefix.pathname : `${prefix.pathname}/`;
  return url.pathname === prefix.pathname || url.pathname.startsWith(base);
}

type PushOptions = NonNullable<A2aConfig['pushNotifications']>;

export interface PushDeliveryDeps {
  store: Pick<StateStore, 'jobs' | 'pushConfigs'>;
  config: PushOptions;
  configDir: string;
  now(): number;
  log: HostLogger | undefined;
  logInternalError(error: unknown, where: string): void;
}

function readCa(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new DriverError('INVALID_CONFIG', `a2a.pushNotifications.caFile ${path} cannot be read.`);
  }
}

export class PushDelivery {
  private readonly transport: { fetch: typeof fetch; close(): Promise<void> } | undefined;
  private readonly stopped = new AbortController();
  private round: Promise<void> | undefined;
  private again = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private unsubscribe: (() => void) | undefined;
  private lastPrune = 0;

  constructor(private readonly deps: PushDeliveryDeps) {
    const { caFile } = deps.config;
    checkAllowedUrls(deps.config.allowedUrls);
    this.transport = caFile === undefined ? undefined : transportTrustingCa(readCa(resolve(deps.configDir, caFile)));
  }

  start(): void {
    this.unsubscribe = this.deps.store.jobs.onChange((change) => {
      if (change.kind === 'events') this.kick();
    });
    this.timer = setInterval(() => this.kick(), SWEEP_MS);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    clearInterval(this.timer);
    this.stopped.abort();
    while (this.round) await this.round;
    await this.transport?.close();
  }

  /** Looks for due deliveries now, or once more after the round under way. */
  kick(): void {
    if (this.stopped.signal.aborted) return;
    if (this.round) {
      this.again = true;
      return;
    }
    this.round = this.deliverDue()
      .catch((error: unknown) => {
        if (this.stopped.signal.aborted) return;
        // The store unavailable (a typed error): the next round tries again.
        if (error instanceof DriverError) this.deps.log?.warn({ code: error.code }, 'A2A push notifications wait for the state store.');
        else this.deps.logInternalError(error, 'A2A push notifications');
      })
      .finally(() => {
        this.round = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Delivers everything due now, a batch at a time. */
  private async deliverDue(): Promise<void> {
    const { pushConfigs } = this.deps.store;
    if (this.deps.now() - this.lastPrune >= PRUNE_MS) {
      this.lastPrune = this.deps.now();
      await pushConfigs.prune();
    }
    for (;;) {
      const due = await pushConfigs.due(BATCH);
      const mine: PushDue[] = [];
      for (const entry of due) if (await pushConfigs.claim(entry, this.timeoutMs() * 2)) mine.push(entry);
      await Promise.all(mine.map((entry) => this.deliver(entry)));
      if (due.length < BATCH || this.stopped.signal.aborted) return;
    }
  }

  private timeoutMs(): number {
    return this.deps.config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private async deliver(due: PushDue): Promise<void> {
    const { pushConfigs, jobs } = this.deps.store;
    const job = await jobs.read(due.taskId);
    if (!job) return pushConfigs.delivered(due);
    // A config taken before a restart with narrower allowedUrls is not sent.
    if (!allows(this.deps.config, due.config.url)) {
      this.deps.log?.warn({ taskId: due.taskId, configId: due.configId }, 'An A2A push notification was given up: its receiver is no longer allowed.');
      return pushConfigs.delivered(due);
    }
    // The task at the point claimed, whatever happened since (a later point is told on its own).
    const cursor = Number.parseInt(due.point, 10);
    const event = cursor === 0 ? undefined : (await jobs.events(due.taskId, cursor - 1, 1, Number.MAX_SAFE_INTEGER))[0];
    const ended = due.point.endsWith(':end');
    const task = taskOf(job.info, ended && event && !TERMINAL_EVENT_TYPES.has(event.type) ? undefined : event, contextOf(job));
    const serializer = due.wire === '0.3' ? new V03PushNotificationSerializer() : new V1PushNotificationSerializer();
    const { body, contentType } = serializer.serialize({ payload: { $case: 'task', value: task } } satisfies StreamResponse, task);
    const outcome = await this.send(due, body, contentType);
    if (outcome === 'delivered') return pushConfigs.delivered(due);
    const attempts = due.attempts + 1;
    if (outcome === 'refused' || attempts >= (this.deps.config.maxAttempts ?? DEFAULT_ATTEMPTS)) {
      this.deps.log?.warn({ taskId: due.taskId, configId: due.configId, attempts, outcome }, 'An A2A push notification was given up.');
      return pushConfigs.delivered(due);
    }
    const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempts - 1));
    await pushConfigs.failed(due, this.deps.now() + backoff);
  }

  private async send(due: PushDue, body: string, contentType: string): Promise<'delivered' | 'refused' | 'retry'> {
    const { url, token, authentication } = due.config;
    try {
      const response = await (this.transport?.fetch ?? fetch)(url, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          ...(token ? { [TOKEN_HEADER]: token } : {}),
          ...(authentication ? { authorization: `${authentication.scheme} ${authentication.credentials}` } : {}),
        },
        body,
        redirect: 'error',
        signal: AbortSignal.any([this.stopped.signal, AbortSignal.timeout(this.timeoutMs())]),
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return 'delivered';
      return response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429 ? 'refused' : 'retry';
    } catch {
      return 'retry';
    }
  }
}
