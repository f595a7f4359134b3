/**
 * An AG-UI `RunAgentInput` as we read it, and what it asks for: a new run (its last message is
 * the user's), or the next part of a run that paused — the answers of the frontend tools it
 * called (trailing tool messages) or of its interrupts (`resume`). The ids we handed out name
 * the job and the event that paused it (`agd:<job id>:<sequence>`), so any replica can continue it.
 */
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DriverError } from '../../protocol/errors.js';
import type { ApplicationToolDefinition, HistoryMessage, RunRequest } from '../../protocol/schemas.js';
import type { AgUiConfig } from './config.js';

const Text = Type.String({ maxLength: 100_000 });
const Id = Type.String({ minLength: 1, maxLength: 256 });
const Part = Type.Object({ type: Type.String({ maxLength: 64 }), text: Type.Optional(Text) });
const Message = Type.Object({
  id: Id,
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system'), Type.Literal('developer'), Type.Literal('tool'), Type.Literal('activity'), Type.Literal('reasoning')]),
  content: Type.Optional(Type.Union([Text, Type.Array(Part, { maxItems: 64 })])),
  toolCallId: Type.Optional(Id),
  error: Type.Optional(Type.String({ maxLength: 10_000 })),
});
export const RunAgentInput = Type.Object({
  threadId: Id,
  runId: Id,
  messages: Type.Array(Message, { maxItems: 200 }),
  tools: Type.Array(Type.Object({ name: Type.String({ maxLength: 64 }), description: Type.String({ maxLength: 10_000 }), parameters: Type.Optional(Type.Unknown()) }), { maxItems: 32 }),
  context: Type.Array(Type.Object({ description: Type.String({ maxLength: 10_000 }), value: Text }), { maxItems: 32 }),
  forwardedProps: Type.Optional(Type.Unknown()),
  resume: Type.Optional(Type.Array(Type.Object({ interruptId: Id, status: Type.Union([Type.Literal('resolved'), Type.Literal('cancelled')]), payload: Type.Optional(Type.Unknown()) }), { maxItems: 32 })),
});
export type RunAgentInput = Static<typeof RunAgentInput>;
type Message = Static<typeof Message>;

export function parseInput(body: unknown): RunAgentInput {
  if (Value.Check(RunAgentInput, body)) return body;
  const first = Value.Errors(RunAgentInput, body).First();
  throw new DriverError('INVALID_REQUEST', `The AG-UI run input is invalid${first ? ` at ${first.path || '/'}: ${first.message}` : ''}.`);
}

/** Where a paused run is continued: the job, and the event it paused at. */
export interface PausePoint {
  jobId: string;
  sequence: number;
}

export function pauseId(point: PausePoint): string {
  return `agd:${point.jobId}:${point.sequence}`;
}

export function pausePoint(id: string): PausePoint | undefined {
  const match = /^agd:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([1-9][0-9]{0,14})$/.exec(id);
  return match ? { jobId: match[1]!, sequence: Number(match[2]) } : undefined;
}

/** The answers to a paused run: its frontend tools' results, its interrupts' decisions. */
export interface Answers {
  tools: { point: PausePoint; output: unknown; failed: boolean }[];
  interrupts: { point: PausePoint; approve: boolean }[];
}

/** What the input answers of a run we paused; undefined when it starts a new run. */
export function answersOf(input: RunAgentInput): Answers | undefined {
  const trailing: Message[] = [];
  for (let i = input.messages.length - 1; i >= 0 && input.messages[i]!.role === 'tool'; i -= 1) trailing.unshift(input.messages[i]!);
  const tools = trailing.flatMap((message) => {
    const point = message.toolCallId === undefined ? undefined : pausePoint(message.toolCallId);
    return point ? [{ point, output: outputOf(message), failed: message.error !== undefined }] : [];
  });
  const interrupts = (input.resume ?? []).map((entry) => {
    const point = pausePoint(entry.interruptId);
    if (!point) throw new DriverError('INVALID_REQUEST', `No interrupt ${entry.interruptId} of this host.`);
    return { point, approve: entry.status === 'resolved' && (entry.payload as { approved?: unknown } | undefined)?.approved === true };
  });
  if (tools.length === 0 && interrupts.length === 0) return undefined;
  if (new Set([...tools, ...interrupts].map(({ point }) => point.jobId)).size > 1) throw new DriverError('INVALID_REQUEST', 'The answers name more than one run.');
  return { tools, interrupts };
}

/**
 * A new run's request: the last user message is the input; earlier text is its history; system
 * text and context its instructions; the input's tools its application tools (frontend tools).
 * `forwardedProps` may name the provider, the model and host tools (`tools`). A run with tools
 * asks for interactive approvals when the host has them (an approval is an interrupt).
 */
export function runRequestOf(input: RunAgentInput, defaults: AgUiConfig, options: { approvals: boolean }): RunRequest {
  const last = input.messages.at(-1);
  if (last?.role !== 'user') throw new DriverError('INVALID_REQUEST', 'The last message must be the user\'s, or the answers of the tools the previous run called.');
  const forwarded = (typeof input.forwardedProps === 'object' && input.forwardedProps !== null ? input.forwardedProps : {}) as Record<string, unknown>;
  const provider = typeof forwarded.provider === 'string' ? forwarded.provider : defaults.provider;
  const model = typeof forwarded.model === 'string' ? forwarded.model : defaults.model;
  if (provider === undefined || model === undefined) throw new DriverError('INVALID_REQUEST', 'Name the provider and model in forwardedProps (or configure agUi.provider and agUi.model).');
  const history: HistoryMessage[] = input.messages.slice(0, -1).flatMap((message): HistoryMessage[] => {
    if (message.role !== 'user' && message.role !== 'assistant') return [];
    const content = textOf(message);
    return content === '' ? [] : [{ role: message.role, content }];
  });
  const instructions = [
    ...input.messages.filter((message) => message.role === 'system' || message.role === 'developer').map(textOf),
    ...input.context.map((item) => `${item.description}: ${item.value}`),
  ].filter((text) => text !== '');
  const applicationTools: ApplicationToolDefinition[] = input.tools.map((tool) => ({
    name: tool.name,
    description: tool.description === '' ? tool.name : tool.description,
    inputSchema: (typeof tool.parameters === 'object' && tool.parameters !== null ? tool.parameters : { type: 'object', properties: {} }) as Record<string, unknown>,
  }));
  const hostTools = Array.isArray(forwarded.tools) ? forwarded.tools : [];
  const tools = [...applicationTools.map((tool) => tool.name), ...hostTools];
  return {
    provider,
    model,
    input: textOf(last),
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && options.approvals ? { approvals: { mode: 'interactive', idlePolicy: 'pause' } } : {}),
    ...(history.length > 0 ? { history } : {}),
    ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
    ...(applicationTools.length > 0 ? { applicationTools } : {}),
  } as RunRequest;
}

/** The job key of an AG-UI run: the same thread and run id is the same job. */
export function jobKeyOf(input: RunAgentInput): string {
  return `ag-ui:${createHash('sha256').update(`${input.threadId}\n${input.runId}`).digest('hex').slice(0, 48)}`;
}

function textOf(message: Message): string {
  const { content } = message;
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  const other = content.find((part) => part.type !== 'text');
  if (other) throw new DriverError('UNSUPPORTED_MODALITY', `Message ${message.id} has a ${other.type} part; AG-UI runs take text.`);
  return content.map((part) => part.text ?? '').join('');
}

/** A tool message's content as the tool's output: its JSON when it is JSON, else the text. */
function outputOf(message: Message): unknown {
  const text = textOf(message);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
