/**
 * `mock`: the embedded default provider. Deterministic and offline: its answer is the
 * run input verbatim, unless the input is a JSON object with a top-level `mockScript`,
 * which scripts every step (see docs/mock.md).
 */
import { Type, type Static } from '@sinclair/typebox';
import { DriverError } from '../protocol/errors.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describe } from '../protocol/validate.js';
import { sleep } from '../shared/abort.js';
import { isoTimestamp, systemClock, type Clock } from '../shared/clock.js';
import type { ProviderAdapter, ProviderInfo, ProviderInspection, ProviderMessage, ProviderPart, ProviderRequest } from './contract/v1.js';
import { defineProviderKind } from './registry.js';
import { ModelId, ProviderId } from '../protocol/schemas.js';

const strict = { additionalProperties: false } as const;

const MockAction = Type.Union([
  Type.Object({ text: Type.String() }, strict),
  Type.Object({ stallMs: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }) }, strict),
  Type.Object({ hang: Type.Literal(true) }, strict),
  Type.Object({ progress: Type.Integer({ minimum: 1, maximum: 10_000 }), everyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })) }, strict),
  Type.Object(
    {
      toolCall: Type.Object(
        { name: Type.String(), arguments: Type.Unknown(), id: Type.Optional(Type.String()) },
        strict,
      ),
    },
    strict,
  ),
  Type.Object({ usage: Type.Record(Type.String(), Type.Unknown()) }, strict),
  Type.Object(
    {
      error: Type.Object(
        {
          code: Type.String({ minLength: 1 }),
          message: Type.Optional(Type.String()),
          retryable: Type.Optional(Type.Boolean()),
          outcome: Type.Optional(Type.Literal('uncertain')),
        },
        strict,
      ),
    },
    strict,
  ),
  Type.Object({ echoToolResults: Type.Literal(true) }, strict),
  Type.Object({ advisory: Type.Object({ type: Type.String({ minLength: 1 }) }) }, strict),
]);

const MockStep = Type.Object(
  {
    actions: Type.Array(MockAction, { maxItems: 10_000 }),
    finishReason: Type.Optional(Type.Union([Type.Literal('stop'), Type.Literal('length')])),
  },
  strict,
);

export const MockScript = Type.Object({ steps: Type.Array(MockStep, { minItems: 1, maxItems: 64 }) }, strict);
export type MockScript = Static<typeof MockScript>;
type MockAction = Static<typeof MockAction>;

// Not a wire schema, so not among the ahead-of-time validators: compiled on the first scripted run.
let compiledScript: ValidateFunction<MockScript> | undefined;
const scriptValidator = (): ValidateFunction<MockScript> => (compiledScript ??= new Ajv2020({ strict: false, allErrors: false }).compile<MockScript>(MockScript));

export const MockProviderConfig = Type.Object(
  {
    kind: Type.Literal('mock'),
    id: ProviderId,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    models: Type.Array(ModelId, { maxItems: 1000, uniqueItems: true }),
  },
  strict,
);

export interface MockProviderOptions {
  id?: string;
  name?: string;
  models?: string[];
  clock?: Clock;
}

/** The script in an input, or undefined when the input is plain text to echo. */
export function parseMockScript(input: string): MockScript | undefined {
  if (!input.trimStart().startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !('mockScript' in parsed)) return undefined;
  const script = (parsed as { mockScript: unknown }).mockScript;
  const validateScript = scriptValidator();
  if (!validateScript(script)) {
    throw new DriverError('INVALID_REQUEST', `The mockScript is invalid: ${describe(validateScript.errors)}.`);
  }
  return script;
}

/** Deterministic stand-in for token counts: one token per four characters. */
const tokens = (text: string) => Math.ceil(text.length / 4);

export class MockProvider implements ProviderAdapter {
  readonly info: ProviderInfo;
  private readonly clock: Clock;

  constructor(options: MockProviderOptions = {}) {
    this.info = {
      id: options.id ?? 'mock',
      name: options.name ?? 'Mock provider',
      vendor: 'mock',
      authMode: 'none',
      usageSource: 'synthetic',
      capabilities: { tools: true, textStreaming: true },
      models: options.models ?? ['demo'],
    };
    this.clock = options.clock ?? systemClock;
  }

  /** An echo's parts in one batch; a script's one at a time (its actions may wait between them). */
  async *streamBatches(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart[]> {
    signal.throwIfAborted();
    const { input } = currentTurn(request.messages);
    if (!parseMockScript(input)) {
      yield echoed(request, input);
      return;
    }
    for await (const part of this.stream(request, signal)) yield [part];
  }

  async inspect(): Promise<ProviderInspection> {
    return {
      health: { status: 'ready', code: 'READY', message: 'The mock provider is always ready.', checkedAt: isoTimestamp(this.clock) },
      modelCatalog: { source: 'configured', models: [...this.info.models], complete: true },
    };
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    signal.throwIfAborted();
    const { input, turn } = currentTurn(request.messages);
    const script = parseMockScript(input);
    if (!script) {
      yield* echoed(request, input);
      return;
    }
    const step = script.steps[turn];
    if (!step) throw new DriverError('PROVIDER_ERROR', `The mockScript has no step ${turn + 1}.`);
    let callIndex = 0;
    for (const action of step.actions) {
      signal.throwIfAborted();
      yield* this.perform(action, request, turn, () => (callIndex += 1), signal);
    }
    yield { type: 'finish', finishReason: step.finishReason ?? 'stop' };
  }

  private async *perform(
    action: MockAction,
    request: ProviderRequest,
    turn: number,
    nextCall: () => number,
    signal: AbortSignal,
  ): AsyncGenerator<ProviderPart> {
    if ('text' in action) yield { type: 'text-delta', text: action.text };
    else if ('stallMs' in action) await sleep(action.stallMs, signal, this.clock);
    else if ('hang' in action) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    else if ('progress' in action) {
      for (let i = 0; i < action.progress; i += 1) {
        if (i > 0 && action.everyMs) await sleep(action.everyMs, signal, this.clock);
        yield { type: 'progress' };
      }
    } else if ('toolCall' in action) {
      const index = nextCall();
      const call = { id: action.toolCall.id ?? `call_${turn + 1}_${index}`, name: action.toolCall.name, arguments: action.toolCall.arguments as Record<string, unknown> };
      yield { type: 'tool-call', call };
    } else if ('usage' in action) yield { type: 'usage', usage: action.usage };
    else if ('error' in action) {
      const { code, message, retryable, outcome } = action.error;
      throw new DriverError(code, message ?? `Scripted failure ${code}.`, { ...(retryable !== undefined ? { retryable } : {}), ...(outcome ? { outcome } : {}) });
    } else if ('echoToolResults' in action) {
      const results = toolResultsOfTurn(request.messages).map((m) => JSON.parse(m.content) as unknown);
      yield { type: 'text-delta', text: JSON.stringify(results) };
    } else if ('advisory' in action) yield { type: 'advisory', event: action.advisory };
  }
}

/** With text context (attachments, retrieved passages): one cited line per source, so the echo visibly uses them. */
function groundedNotes(messages: readonly ProviderMessage[]): string {
  const user = [...messages].reverse().find((message) => message.role === 'user');
  const items = (user && 'context' in user ? (user.context ?? []) : []).filter((item) => item.text !== undefined);
  if (items.length === 0) return '';
  const lines = items.map((item) => {
    const excerpt = item.text!.replace(/\s+/g, ' ').trim();
    return `- ${excerpt.length > 160 ? `${excerpt.slice(0, 157)}...` : excerpt} [source:${item.source.id}]`;
  });
  return `\n\nFrom the supplied sources:\n${lines.join('\n')}`;
}

/** The latest user input and how many model steps this run has already taken. */
function currentTurn(messages: readonly ProviderMessage[]): { input: string; turn: number } {
  let lastUser = -1;
  messages.forEach((message, index) => {
    if (message.role === 'user') lastUser = index;
  });
  const input = lastUser >= 0 ? messages[lastUser]!.content : '';
  const turn = messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
  return { input, turn };
}

function toolResultsOfTurn(messages: readonly ProviderMessage[]): Extract<ProviderMessage, { role: 'tool' }>[] {
  const results: Extract<ProviderMessage, { role: 'tool' }>[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'tool'; i -= 1) results.unshift(messages[i] as Extract<ProviderMessage, { role: 'tool' }>);
  return results;
}

export const mockKind = defineProviderKind({
  kind: 'mock',
  configSchema: MockProviderConfig,
  create: (entry) => new MockProvider({ id: entry.id, models: entry.models, ...(entry.name ? { name: entry.name } : {}) }),
});

/** Without a script, the mock answers with the input (and the passages it was given). */
function echoed(request: ProviderRequest, input: string): ProviderPart[] {
  const inputTokens = tokens(request.messages.map((m) => m.content).join('\n') + (request.instructions ?? ''));
  const answer = input + groundedNotes(request.messages);
  return [
    { type: 'text-delta', text: answer },
    { type: 'usage', usage: { inputTokens, outputTokens: tokens(answer) } },
    { type: 'finish', finishReason: 'stop' },
  ];
}
