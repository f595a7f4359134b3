/**
 * A stream's parts a whole upstream read at a time (`partBatches` over a dialect's parser): one
 * batch per read with every part the read completed, in order; a read's parts before a bad
 * event still go out before its error; a step that finished leaves the rest unread; a stream
 * that ends early is incomplete.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChatCompletion } from '../../../src/providers/api/chat-completions.js';
import { parseGenerateContent } from '../../../src/providers/api/gemini.js';
import { partBatches, type SseEvent } from '../../../src/providers/api/transport.js';
import type { ProviderPart } from '../../../src/providers/contract/v1.js';

const chunk = (content: string, finish?: string): SseEvent => ({ event: undefined, data: JSON.stringify({ choices: [{ delta: { content }, ...(finish ? { finish_reason: finish } : {}) }] }) });
const DONE: SseEvent = { event: undefined, data: '[DONE]' };

async function* reads(list: SseEvent[][], log: string[] = []): AsyncGenerator<SseEvent[]> {
  for (const [index, read] of list.entries()) {
    log.push(`read ${index}`);
    yield read;
  }
}

async function batches(list: SseEvent[][], parser = parseChatCompletion(), log: string[] = []): Promise<ProviderPart[][]> {
  const out: ProviderPart[][] = [];
  for await (const batch of partBatches(reads(list, log), parser)) out.push(batch);
  return out;
}

const types = (batch: ProviderPart[]) => batch.map((part) => (part.type === 'text-delta' ? `text:${part.text}` : part.type));

describe('part batches', () => {
  it('hands over every part of a read at once, a batch per read that completed any', async () => {
    const got = await batches([[chunk('Hel'), chunk('lo')], [], [chunk(' wörld', 'stop'), DONE]]);
    assert.deepEqual(got.map(types), [['text:Hel', 'text:lo'], ['text: wörld', 'finish']]);
  });

  it('sends a read\'s parts before the bad event\'s error', async () => {
    const parts: ProviderPart[][] = [];
    await assert.rejects(async () => {
      for await (const batch of partBatches(reads([[chunk('ok'), { event: undefined, data: '{not json' }]]), parseChatCompletion())) parts.push(batch);
    }, { code: 'INVALID_PROVIDER_RESPONSE' });
    assert.deepEqual(parts.map(types), [['text:ok']]);
  });

  it('stops reading once the step finished, and calls a stream that ends before it incomplete', async () => {
    const log: string[] = [];
    await batches([[chunk('a', 'stop'), DONE], [chunk('never')]], parseChatCompletion(), log);
    assert.deepEqual(log, ['read 0']);
    await assert.rejects(batches([[chunk('a')]]), { code: 'INCOMPLETE_STREAM' });
  });

  it('lets a dialect that finishes at the stream\'s end push its last parts then', async () => {
    const gemini = (text: string, finishReason?: string): SseEvent => ({ event: undefined, data: JSON.stringify({ candidates: [{ content: { parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }] }) });
    const got = await batches([[gemini('Hi'), gemini('!', 'STOP')]], parseGenerateContent());
    assert.deepEqual(got.map(types), [['text:Hi', 'text:!'], ['usage', 'finish']]);
  });
});
