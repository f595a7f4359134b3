/**
 * Extraction threads, host side: a parser that hostile input can make loop, recurse or hoard
 * memory runs in a `node:worker_threads` thread, never on the host's event loop. One document at
 * a time per thread; a place in the pool is taken in a fair line per subject (FairQueue); each
 * document has a time limit from the moment its thread begins it; aborting the caller's signal,
 * the time limit, or a fatal error reported by the thread terminates the thread at once, even
 * in the middle of synchronous work. A thread's heap is capped (`resourceLimits`); its crash,
 * exit or out-of-memory is the pool's `failureCode`. Threads that finished (or refused) a
 * document are kept warm for the next one without keeping the process alive.
 */
import { availableParallelism } from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { DriverError } from '../../../protocol/errors.js';
import type { ErrorInfo } from '../../../protocol/schemas.js';
import { abortError, throwIfAborted } from './abort.js';
import { FairQueue } from './fair-queue.js';

/**
 * Thread → host. 'started': the thread has loaded what it needs and begins the document (its
 * time limit runs from here). `fatal`: the thread is in no state to keep (e.g. over a budget mid-parse).
 */
export type WorkerMessage<Data> =
  | { type: 'started' }
  | { type: 'progress' }
  | { type: 'data'; data: Data }
  | { type: 'done'; result: unknown }
  | { type: 'error'; error: ErrorInfo; fatal?: boolean };

/**
 * Threads one kind of extraction runs at once: the cores less one (1..4, so 1 on a 2-core
 * machine), one subject at most that many, plus one place that only a subject holding none can
 * take — so another subject's document never waits for a running one of somebody else.
 */
export const MAX_WORKERS_PER_SUBJECT = Math.max(1, Math.min(4, availableParallelism() - 1));
export const MAX_WORKERS = MAX_WORKERS_PER_SUBJECT + 1;

export interface WorkerPoolOptions {
  /** For messages: "PDF", "Markdown". */
  what: string;
  /** The thread's entry (a file URL, or code to eval under tsx). */
  entry: { entry: URL | string; eval: boolean };
  limits: ResourceLimits;
  /** The code of a crash or exit of the thread (and of running out of its heap, unless outOfMemoryCode). */
  failureCode: string;
  outOfMemoryCode?: string;
  /** Error codes that refuse the document itself: the thread that reported one is sound. */
  refusals: ReadonlySet<string>;
}

export interface WorkerJob<Data> {
  /** The job's message; `transfer` lists what is moved rather than cloned. */
  message: unknown;
  transfer?: ArrayBuffer[];
  /** Fair-queueing key: the subject the document is ingested for. */
  key: string;
  signal?: AbortSignal;
  /** From the moment the thread begins the document ('started'). */
  timeoutMs: number;
  onProgress?: () => void;
  onData?: (data: Data) => void;
  /** Test hooks: a fresh, never reused thread with this data / these limits. */
  workerData?: unknown;
  resourceLimits?: ResourceLimits;
}

const IDLE_MS = 60_000;
const RECYCLE_AFTER = 100;
/** What a new thread may take to load its parser (pdf.js: about 0.3 s, seconds on a loaded machine) before the time limit starts. */
const STARTUP_MS = 30_000;

interface Warm {
  worker: Worker;
  jobs: number;
  timer: NodeJS.Timeout;
  onExit: () => void;
}

export class WorkerPool {
  private readonly slots = new FairQueue(MAX_WORKERS, MAX_WORKERS_PER_SUBJECT);
  private readonly idle: Warm[] = [];

  constructor(private readonly options: WorkerPoolOptions) {}

  /** Threads working now, documents waiting for one, warm threads idle (for tests and diagnostics). */
  stats(): { running: number; waiting: number; idle: number } {
    const { held, waiting } = this.slots.stats;
    return { running: held, waiting, idle: this.idle.length };
  }

  async run<Result, Data = never>(job: WorkerJob<Data>): Promise<Result> {
    const release = await this.slots.acquire(job.key, job.signal);
    try {
      throwIfAborted(job.signal);
    } catch (error) {
      release();
      throw error;
    }
    return this.start<Result, Data>(job, release);
  }

  private spawn(job: WorkerJob<unknown>): Worker {
    const { entry } = this.options;
    return new Worker(entry.entry, {
      eval: entry.eval,
      workerData: job.workerData ?? {},
      resourceLimits: job.resourceLimits ?? this.options.limits,
      stdin: false,
    });
  }

  private take(job: WorkerJob<unknown>): { worker: Worker; jobs: number; reusable: boolean } {
    const reusable = job.workerData === undefined && job.resourceLimits === undefined;
    const warm = reusable ? this.idle.pop() : undefined;
    if (warm) {
      clearTimeout(warm.timer);
      warm.worker.off('exit', warm.onExit);
      warm.worker.ref();
      return { worker: warm.worker, jobs: warm.jobs, reusable };
    }
    return { worker: this.spawn(job), jobs: 0, reusable };
  }

  private keepWarm(worker: Worker, jobs: number): void {
    if (jobs >= RECYCLE_AFTER) return void worker.terminate();
    worker.unref();
    const entry: Warm = { worker, jobs, timer: setTimeout(() => this.retire(entry), IDLE_MS).unref(), onExit: () => this.retire(entry) };
    this.idle.push(entry);
    worker.once('exit', entry.onExit);
  }

  private retire(entry: Warm): void {
    const index = this.idle.indexOf(entry);
    if (index < 0) return;
    this.idle.splice(index, 1);
    clearTimeout(entry.timer);
    void entry.worker.terminate();
  }

  private start<Result, Data>(job: WorkerJob<Data>, release: () => void): Promise<Result> {
    const { what, failureCode, refusals } = this.options;
    const { worker, jobs, reusable } = this.take(job as WorkerJob<unknown>);
    const { signal } = job;
    return new Promise<Result>((resolve, reject) => {
      let settled = false;
      const settle = (error: DriverError | undefined, result?: Result, how: 'kept' | 'exited' | 'end' = 'end') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        // A thread that finished its document (or refused it) is kept for the next; any other is
        // ended, and its place in the line is given back once it is gone, not before.
        if (how === 'kept' && reusable) {
          this.keepWarm(worker, jobs + 1);
          release();
        } else if (how === 'exited') {
          release();
        } else {
          worker.once('exit', release);
          void worker.terminate();
        }
        if (error) reject(error);
        else resolve(result as Result);
      };
      const failed = (message: string) => new DriverError(failureCode, message.slice(0, 300));
      const onAbort = () => settle(abortError(signal!));
      const onTimeout = () => settle(new DriverError('TIMEOUT', `The ${what} extraction took longer than its time limit (${job.timeoutMs} ms).`));
      let timer = setTimeout(onTimeout, STARTUP_MS + job.timeoutMs);
      const onMessage = (message: WorkerMessage<Data>) => {
        if (settled) return;
        switch (message.type) {
          case 'started':
            clearTimeout(timer);
            timer = setTimeout(onTimeout, job.timeoutMs);
            return;
          case 'progress':
            job.onProgress?.();
            return;
          case 'data':
            job.onData?.(message.data);
            job.onProgress?.();
            return;
          case 'done':
            settle(undefined, message.result as Result, 'kept');
            return;
          case 'error': {
            const error = DriverError.from(message.error);
            const sound = !message.fatal && refusals.has(error.code);
            settle(error, undefined, sound ? 'kept' : 'end');
          }
        }
      };
      const onError = (error: Error & { code?: string }) => {
        if (error.code !== 'ERR_WORKER_OUT_OF_MEMORY') return settle(failed(`The ${what} worker failed: ${error.message}`));
        const message = `The ${what} worker failed: it ran out of memory (${error.message})`;
        settle(this.options.outOfMemoryCode ? new DriverError(this.options.outOfMemoryCode, message.slice(0, 300)) : failed(message));
      };
      const onExit = (code: number) => settle(failed(`The ${what} worker stopped (exit code ${code}) before it finished.`), undefined, 'exited');
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(job.message, job.transfer ?? []);
    });
  }
}

/**
 * The thread's entry for `file` (a module next to this one, named without extension). Built,
 * it is dist/…/<file>.js. Under tsx (tests, bench) this file is a .ts and Node 20 does not
 * apply tsx's loader to a worker's entry, so a small bootstrap registers tsx in the thread
 * and then imports <file>.ts; `preload` (JavaScript promise expressions, see nativeImport)
 * runs first, natively: through tsx's loader pdf.js's 2 MB modules take seconds per thread.
 */
export function workerEntry(file: string, preload: string[] = []): { entry: URL | string; eval: boolean } {
  if (!import.meta.url.endsWith('.ts')) return { entry: new URL(`./${file}.js`, import.meta.url), eval: false };
  const worker = JSON.stringify(new URL(`./${file}.ts`, import.meta.url).href);
  return {
    entry: `Promise.all([${preload.join(', ')}]).then(() => import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})).then((api) => { api.register(); return import(${worker}); });`,
    eval: true,
  };
}

/** A preload that imports `specifier` natively (a missing module is reported by the worker, not here). */
export function nativeImport(specifier: string): string[] {
  try {
    return [`import(${JSON.stringify(import.meta.resolve(specifier))}).catch(() => {})`];
  } catch {
    return [];
  }
}
