/**
 * The recorded event stream the client-decoder benchmarks read: ~100 MB of host SSE frames
 * written by the host's own encoder (`frameEvent`) in a realistic mix — runs of many small
 * `text.delta` events (ASCII, accented, CJK and emoji text), progress and tool events with
 * JSON arguments, usage, a `run.completed` carrying the whole text, and heartbeat comments.
 * Deterministic (seeded), so every language reads the same bytes.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { frameEvent } from '../../src/http/sse.js';
import type { RunEvent } from '../../src/protocol/schemas.js';

export const STREAM_FILE = new URL('../results/events-100mb.sse', import.meta.url).pathname;
const TARGET_BYTES = 100 * 1024 * 1024;

const WORDS = ['the', 'model', ' streams', ' tokens', ',', ' café', ' naïve', ' 東京', ' データ', ' 🚀', ' "quoted"', ' back\\slash', '\n', ' über', ' 42', ' {json}', ' résumé', ' 😀👍'];

export function ensureStream(path = STREAM_FILE): { path: string; bytes: number } {
  if (existsSync(path) && statSync(path).size >= TARGET_BYTES) return { path, bytes: statSync(path).size };
  let seed = 17;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const parts: string[] = [];
  let bytes = 0;
  const timestamp = '2026-12-01T21:00:00.000Z';
  for (let run = 0; bytes < TARGET_BYTES; run += 1) {
    const runId = `00000000-0000-4000-8000-${String(run).padStart(12, '0')}`;
    let sequence = 0;
    const frames: string[] = [];
    const emit = (event: Record<string, unknown>) => frames.push(frameEvent({ runId, sequence: (sequence += 1), timestamp, ...event } as unknown as RunEvent));
    emit({ type: 'run.started', provider: 'openai', model: 'gpt-5.5' });
    let text = '';
    for (let step = 1; step <= 2; step += 1) {
      emit({ type: 'step.started', step });
      const deltas = 150 + Math.floor(random() * 150);
      for (let i = 0; i < deltas; i += 1) {
        let delta = '';
        const words = 1 + Math.floor(random() * 4);
        for (let w = 0; w < words; w += 1) delta += WORDS[Math.floor(random() * WORDS.length)];
        text += delta;
        emit({ type: 'text.delta', text: delta });
        if (i % 50 === 25) emit({ type: 'run.progress', phase: 'model' });
        if (i % 97 === 0) frames.push(': heartbeat\n\n');
      }
      if (step === 1) {
        const call = { id: `call_${run}`, name: 'lookup', arguments: { city: 'Zürich', days: 3, filters: { units: 'metric', fields: ['temp', 'wind', 'rain'] } } };
        emit({ type: 'tool.called', step, call });
        emit({ type: 'tool.completed', step, callId: call.id, name: call.name, output: JSON.stringify({ found: true, forecast: [{ day: 1, temp: 21.5 }, { day: 2, temp: 19 }, { day: 3, temp: 23.25 }] }) });
      }
      emit({ type: 'usage.reported', step, usage: { inputTokens: 1200 + run, outputTokens: 300, cachedInputTokens: 800, reasoningTokens: 40 } });
    }
    emit({ type: 'run.completed', result: { runId, provider: 'openai', model: 'gpt-5.5', text, usage: { inputTokens: 2400, outputTokens: 600 }, steps: 2, finishReason: 'stop' } });
    const chunk = frames.join('');
    parts.push(chunk);
    bytes += Buffer.byteLength(chunk);
  }
  mkdirSync(dirname(path), { recursive: true });
  const body = Buffer.from(parts.join(''));
  writeFileSync(path, body);
  return { path, bytes: body.length };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(ensureStream()));
