/**
 * Server-sent events for one run: `id:`, `event:` and one-line `data:` frames, a
 * `: heartbeat` comment while nothing else is written (never counted as progress), and
 * write back-pressure honoured.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { RunEvent } from '../protocol/schemas.js';

export function frameEvent(event: RunEvent): string {
  return `id: ${event.sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Pulls the first event before committing headers, so nothing but a started run ever
 * answers 200; everything after arrives as events.
 */
export async function writeEventStream(reply: FastifyReply, events: AsyncGenerator<RunEvent>, heartbeatMs: number): Promise<void> {
  const first = await events.next();
  reply.hijack();
  const res = reply.raw;
  res.on('error', () => undefined);
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const heartbeat = setInterval(() => {
    if (!res.writableNeedDrain && !res.destroyed) res.write(': heartbeat\n\n');
  }, heartbeatMs);
  try {
    if (!first.done) await write(res, frameEvent(first.value));
    for await (const event of events) await write(res, frameEvent(event));
  } finally {
    clearInterval(heartbeat);
    if (!res.destroyed) res.end();
  }
}

/** Frames written in the same tick leave in one socket write. */
async function write(res: ServerResponse, frame: string): Promise<void> {
  if (res.destroyed) return;
  if (!res.writableCorked) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  if (!res.write(frame)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
}
