/**
 * Keeps the fakes honest: the vendors' official SDKs must parse every scripted stream
 * into the text, tool calls, usage and finish reason the script describes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import {
  startAnthropicMessagesServer,
  startChatCompletionsServer,
  startGeminiServer,
  startOpenAIResponsesServer,
  type VendorServer,
} from './index.js';
import { HONESTY_TURNS } from './honesty-turns.js';


const KEY = 'sk-honesty-key';

describe('official SDKs parse the fakes', () => {
  const servers: VendorServer[] = [];
  after(async () => Promise.all(servers.map((s) => s.close())));
  const track = async (server: Promise<VendorServer>) => {
    const started = await server;
    servers.push(started);
    return started;
  };

  it('openai Responses', async () => {
    const server = await track(startOpenAIResponsesServer({ apiKey: KEY, script: Object.values(HONESTY_TURNS).map((turn) => ({ turn })) }));
    const client = new OpenAI({ apiKey: KEY, baseURL: server.url.replace(/\/$/, ''), maxRetries: 0 });
    const finals = [];
    for (let i = 0; i < 3; i += 1) {
      // The SDK's stream helper rebuilds the response from the events and checks they agree.
      const stream = client.responses.stream({ model: 'gpt-x', input: 'hi', store: false });
      let text = '';
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
      finals.push({ text, final: (await stream.finalResponse()) as any });
    }
    assert.equal(finals[0]!.text, 'Hello wörld');
    assert.deepEqual(finals[0]!.final.usage.input_tokens_details, { cached_tokens: 4 });
    assert.equal(finals[0]!.final.output_text, 'Hello wörld');
    const calls = finals[1]!.final.output.filter((item: any) => item.type === 'function_call');
    assert.deepEqual(
      calls.map((c: any) => [c.call_id, c.name, JSON.parse(c.arguments)]),
      [['call_a', 'lookup', { city: 'Zürich', days: 3 }], ['call_b', 'clock', {}]],
    );
    assert.equal(finals[2]!.final.status, 'incomplete');
    assert.equal(finals[2]!.final.incomplete_details.reason, 'max_output_tokens');
  });

  it('openai Chat Completions', async () => {
    const server = await track(startChatCompletionsServer({ apiKey: KEY, script: Object.values(HONESTY_TURNS).map((turn) => ({ turn })) }));
    const client = new OpenAI({ apiKey: KEY, baseURL: server.url.replace(/\/$/, ''), maxRetries: 0 });
    const results = [];
    for (let i = 0; i < 3; i += 1) {
      const stream = client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } });
      results.push(await stream.finalChatCompletion());
    }
    assert.equal(results[0]!.choices[0]!.message.content, 'Hello wörld');
    assert.equal(results[0]!.usage?.prompt_tokens_details?.cached_tokens, 4);
    const calls = results[1]!.choices[0]!.message.tool_calls!;
    assert.deepEqual(
      calls.map((c: any) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [['call_a', 'lookup', { city: 'Zürich', days: 3 }], ['call_b', 'clock', {}]],
    );
    assert.equal(results[1]!.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(results[2]!.choices[0]!.finish_reason, 'length');
  });

  it('anthropic Messages', async () => {
    const server = await track(startAnthropicMessagesServer({ apiKey: KEY, script: Object.values(HONESTY_TURNS).map((turn) => ({ turn: { ...turn, pings: true, reasoning: 'hmm' } })) }));
    const client = new Anthropic({ apiKey: KEY, baseURL: server.origin, maxRetries: 0 });
    const messages = [];
    for (let i = 0; i < 3; i += 1) {
      messages.push(await client.messages.stream({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage());
    }
    const text = (m: any) => m.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join('');
    assert.equal(text(messages[0]), 'Hello wörld');
    assert.equal(messages[0]!.usage.cache_read_input_tokens, 4);
    assert.equal(messages[0]!.content[0]!.type, 'thinking');
    const calls = messages[1]!.content.filter((b: any) => b.type === 'tool_use') as any[];
    assert.deepEqual(calls.map((c) => [c.id, c.name, c.input]), [['call_a', 'lookup', { city: 'Zürich', days: 3 }], ['call_b', 'clock', {}]]);
    assert.equal(messages[1]!.stop_reason, 'tool_use');
    assert.equal(messages[2]!.stop_reason, 'max_tokens');
  });

  it('google genai', async () => {
    const server = await track(startGeminiServer({ apiKey: KEY, script: Object.values(HONESTY_TURNS).map((turn) => ({ turn })) }));
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: server.origin } });
    const results = [];
    for (let i = 0; i < 3; i += 1) {
      const stream = await ai.models.generateContentStream({ model: 'gemini-x', contents: 'hi' });
      let text = '';
      const calls: unknown[] = [];
      let finish: string | undefined;
      let usage: any;
      for await (const chunk of stream) {
        text += chunk.text ?? '';
        for (const call of chunk.functionCalls ?? []) calls.push([call.id, call.name, call.args]);
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
        usage = chunk.usageMetadata ?? usage;
      }
      results.push({ text, calls, finish, usage });
    }
    assert.equal(results[0]!.text, 'Hello wörld');
    assert.equal(results[0]!.usage.thoughtsTokenCount, 2);
    assert.deepEqual(results[1]!.calls, [['call_a', 'lookup', { city: 'Zürich', days: 3 }], ['call_b', 'clock', {}]]);
    assert.equal(results[2]!.finish, 'MAX_TOKENS');
    assert.ok(server.generations.every((r) => !r.search.includes('key=')), 'the SDK sends the key in a header');
  });
});
