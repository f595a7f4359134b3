/**
 * Server-sent events for one run: `id:`, `event:` and one-line `data:` frames (the operator's
 * update feed: `event:` and `data:`), a
 * `: heartbeat` comment while nothing else is written (never counted as progress), and
 * write back-pressure honoured — but never waited on forever: a client that stops reading
 * for `writeStallMs` loses its connection, which ends the run and frees its slot.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { RunEvent } from '../protocol/schemas.js';
import { eventJson } from '../shared/event-json.js';

export const DEFAULT_WRITE_STALL_MS = 30_000;

export interface EventStreamOptions {
  heartbeatMs: number;
  /** How long one write may wait for the client to read before the connection is destroyed. */
  writeStallMs: number;
  /** Extra response headers (e.g. `connection: close` while the host drains). */
  headers?: Record<string, string>;
  /** Send the headers at once instead of after the first event (a stream that may wait long for it). */
  headersFirst?: boolean;
}

export function frameEvent(event: RunEvent): string {
  return `id: ${event.sequence}\nevent: ${event.type}\ndata: ${eventJson(event)}\n\n`;
}

/** An update of the operator's feed: no `id:` (the feed is not resumable; a new connection starts with a snapshot). */
export function frameUpdate(update: { type: string }): string {
  return `event: ${update.type}\ndata: ${JSON.stringify(update)}\n\n`;
}

/**
 * Pulls the first event before committing headers, so nothing but a started run ever
 * answers 200; everything after arrives as events. Returns once the last frame has been
 * handed to the operating system (or the connection is gone).
 */
export function writeEventStream(reply: FastifyReply, events: AsyncGenerator<RunEvent>, options: EventStreamOptions): Promise<void> {
  return writeFrames(reply, events, frameEvent, options);
}

export async function writeFrames<T>(reply: FastifyReply, events: AsyncGenerator<T>, frame: (event: T) => string, options: EventStreamOptions): Promise<void> {
  const first: IteratorResult<T> = options.headersFirst ? { done: false, value: undefined as never } : await events.next();
  reply.hijack();
  const res = reply.raw;
  res.on('error', () => undefined);
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'x-accel-buffering': 'no',
    ...options.headers,
  });
  res.flushHeaders();
  const heartbeat = setInterval(() => {
    if (!res.writableNeedDrain && !res.destroyed) res.write(': heartbeat\n\n');
  }, options.heartbeatMs);
  try {
    if (!first.done && !options.headersFirst) await write(res, frame(first.value), options.writeStallMs);
    for await (const event of events) await write(res, frame(event), options.writeStallMs);
  } finally {
    clearInterval(heartbeat);
    if (!res.destroyed) {
      res.end();
      await drained(res, options.writeStallMs, 'finish');
    }
  }
}

/** Frames written in the same tick leave in one socket write. */
async function write(res: ServerResponse, frame: string, stallMs: number): Promise<void> {
  if (res.destroyed) return;
  if (!res.writableCorked) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  if (!res.write(frame)) await drained(res, stallMs, 'drain');
}

/**
 * Waits for `event` (or the connection closing) with one listener set that is always
 * removed, so back-pressure episodes never accumulate listeners. When the client has not
 * read for `stallMs`, the connection is destroyed.
 */
function drained(res: ServerResponse, stallMs: number, event: 'drain' | 'finish'): Promise<void> {
  if (event === 'finish' && res.writableFinished) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off(event, done);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      res.destroy();
      done();
    }, stallMs);
    res.on(event, done);
    res.on('close', done);
  });
}

/** The host's event streams: its heartbeat and write-stall bounds, and `connection: close` while it drains. */
export class EventStreams {
  constructor(
    private readonly heartbeatMs: number,
    private writeStallMs: number,
    private readonly closing: () => boolean,
  ) {}

  /** A new write-stall bound for streams opened from now on (a config reload). */
  setWriteStall(ms: number): void {
    this.writeStallMs = ms;
  }

  write(reply: FastifyReply, events: AsyncGenerator<RunEvent>, options: { headersFirst?: boolean } = {}): Promise<void> {
    return this.writeFrames(reply, events, frameEvent, options);
  }

  /** Frames of another kind than run events (the operator's update feed). */
  writeFrames<T>(reply: FastifyReply, events: AsyncGenerator<T>, frame: (event: T) => string, options: { headersFirst?: boolean } = {}): Promise<void> {
    return writeFrames(reply, events, frame, {
      heartbeatMs: this.heartbeatMs,
      writeStallMs: this.writeStallMs,
      ...(options.headersFirst ? { headersFirst: true } : {}),
      ...(this.closing() ? { headers: { connection: 'close' } } : {}),
    });
  }
}
