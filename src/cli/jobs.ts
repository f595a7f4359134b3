/** `agenticdriver jobs …` and `agenticdriver sessions …`: durable jobs and sessions through the TypeScript client. */
import { DriverError } from '../protocol/errors.js';
import type { JobInfo, RunEvent, RunRequest } from '../protocol/schemas.js';
import { connect, readStdin, unreachable, type ClientOptions } from './remote.js';
import { printJson, printLines, table, wantsJson } from './output.js';

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export async function submitJobCommand(options: ClientOptions & { key: string; provider: string; model: string; input?: string; tool?: string[]; tail?: boolean; json?: boolean }): Promise<void> {
  const request: RunRequest = { provider: options.provider, model: options.model, input: options.input ?? (await readStdin()) };
  if (options.tool && options.tool.length > 0) request.tools = options.tool;
  const client = await connect(options);
  const job = await client.submitJob({ key: options.key, request }).catch(unreachable);
  if (!options.tail) return print(job);
  process.stderr.write(`job ${job.id}\n`);
  await tail(client, job.id, 0, options.json ?? false);
}

export async function listJobsCommand(options: ClientOptions & { state?: string; limit?: number; json?: boolean }): Promise<void> {
  const request = { ...(options.state !== undefined ? { state: options.state as JobInfo['state'] } : {}), ...(options.limit !== undefined ? { limit: options.limit } : {}) };
  const jobs = await (await connect(options)).listJobs(request).catch(unreachable);
  if (wantsJson(options)) return printJson({ jobs });
  if (jobs.length === 0) return printLines(['No jobs.']);
  printLines(table(['id', 'state', 'provider', 'model', 'events', 'updated'], jobs.map((job) => [job.id, job.cancelRequested && job.state === 'running' ? 'cancelling' : job.state, job.provider, job.model, String(job.cursor), job.updatedAt]), new Set([4])));
}

export async function readJobCommand(id: string, options: ClientOptions): Promise<void> {
  print(await (await connect(options)).readJob(id).catch(unreachable));
}

export async function cancelJobCommand(id: string, options: ClientOptions): Promise<void> {
  print(await (await connect(options)).cancelJob(id).catch(unreachable));
}

export async function tailJobCommand(id: string, options: ClientOptions & { after?: number; json?: boolean }): Promise<void> {
  await tail(await connect(options), id, options.after ?? 0, options.json ?? false);
}

/** Follows the job's events to its end (reconnecting by itself): text, or JSONL events with --json. */
async function tail(client: Awaited<ReturnType<typeof connect>>, id: string, after: number, json: boolean): Promise<void> {
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  let last: RunEvent | undefined;
  try {
    for await (const event of client.tailJob(id, { after, signal: controller.signal })) {
      last = event;
      if (json) print(event);
      else if (event.type === 'text.delta') process.stdout.write(event.text);
    }
    if (!json) process.stdout.write('\n');
  } catch (error) {
    // Stopping the tail never stops the job: say where to resume.
    if (last) process.stderr.write(`Resume with: agenticdriver jobs tail ${id} --after ${last.sequence}\n`);
    if (controller.signal.aborted) throw new DriverError('CANCELLED', 'The tail was interrupted; the job goes on.');
    unreachable(error);
  } finally {
    process.off('SIGINT', interrupt);
  }
  if (last && (last.type === 'run.failed' || last.type === 'run.cancelled')) throw DriverError.from(last.error);
}

export async function createSessionCommand(options: ClientOptions & { provider: string; model: string; instructions?: string; native?: boolean }): Promise<void> {
  const snapshot = await (await connect(options))
    .createSession({ provider: options.provider, model: options.model, mode: options.native ? 'native' : 'history', ...(options.instructions !== undefined ? { instructions: options.instructions } : {}) })
    .catch(unreachable);
  print(snapshot);
}

export async function listSessionsCommand(options: ClientOptions & { limit?: number; json?: boolean }): Promise<void> {
  const sessions = await (await connect(options)).listSessions(options.limit !== undefined ? { limit: options.limit } : {}).catch(unreachable);
  if (wantsJson(options)) return printJson({ sessions });
  if (sessions.length === 0) return printLines(['No sessions.']);
  printLines(
    table(
      ['continue with --session', 'state', 'mode', 'provider', 'model', 'updated'],
      sessions.map((session) => [`${session.id}:${session.revision}`, session.state, session.mode, session.provider, session.model, session.updatedAt]),
    ),
  );
}

export async function readSessionCommand(id: string, options: ClientOptions): Promise<void> {
  print(await (await connect(options)).readSession(id).catch(unreachable));
}

export async function deleteSessionCommand(id: string, options: ClientOptions): Promise<void> {
  print(await (await connect(options)).deleteSession(id).catch(unreachable));
}
