/**
 * A native-mode session turn: a one-shot CLI process in the session's private folder that
 * resumes the CLI's own conversation when the folder holds the one the session last saved,
 * and otherwise starts a new one from the replayed history. A resume that fails before any
 * output (the CLI lost or refuses the conversation) falls back to the replay, once.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderContinuation, ProviderPart, ProviderRequest } from '../contract/v1.js';
import type { CliInstance } from './instance.js';
import type { ToolBridge } from './mcp-bridge.js';
import type { NativeToolProfile } from './native-tools.js';
import { streamOneShot } from './one-shot.js';
import type { SessionFolder } from './session-folder.js';

export interface SessionTurnTools {
  bridge: ToolBridge | undefined;
  nativeTools: NativeToolProfile;
  /** Fills the session's private home (again after a reset); resolves to the variables that point the CLI at it. */
  prepareHome(home: string): Promise<Record<string, string>>;
}

export async function* streamSessionTurn(
  cli: CliInstance,
  request: ProviderRequest,
  continuation: ProviderContinuation,
  folder: SessionFolder,
  tools: SessionTurnTools,
  signal: AbortSignal,
): AsyncGenerator<ProviderPart> {
  const resumeId = folder.nativeId !== undefined && folder.nativeId === continuation.state ? folder.nativeId : undefined;
  if (resumeId !== undefined) {
    let output = false;
    try {
      for await (const part of attempt(cli, resumed(request, continuation), continuation, folder, tools, { resumeId, newId: resumeId }, signal)) {
        if (part.type !== 'progress') output = true;
        yield part;
      }
      return;
    } catch (error) {
      const lostConversation = !output && !signal.aborted && error instanceof DriverError && error.code === 'CLI_FAILED';
      if (!lostConversation) throw error;
    }
  }
  await folder.reset();
  yield* attempt(cli, request, continuation, folder, tools, { newId: randomUUID() }, signal);
}

/** Only the turn's own messages: the rest is in the resumed conversation (run instructions only with an output schema). */
function resumed(request: ProviderRequest, continuation: ProviderContinuation): ProviderRequest {
  const { instructions, ...rest } = request;
  return { ...rest, ...(request.outputSchema && instructions !== undefined ? { instructions } : {}), messages: request.messages.slice(continuation.historyLength) };
}

async function* attempt(
  cli: CliInstance,
  request: ProviderRequest,
  continuation: ProviderContinuation,
  folder: SessionFolder,
  tools: SessionTurnTools,
  conversation: { resumeId?: string; newId: string },
  signal: AbortSignal,
): AsyncGenerator<ProviderPart> {
  let conversationId = (): string | undefined => undefined;
  const homeEnv = await tools.prepareHome(folder.home);
  const parts = streamOneShot(cli, request, folder, { bridge: tools.bridge, nativeTools: tools.nativeTools, homeEnv, conversation, onParser: (parser) => (conversationId = () => parser.conversationId?.()) }, signal);
  for await (const part of parts) {
    if (part.type === 'finish') {
      // The conversation is saved before the turn ends, so the session commits it with the exchange.
      const id = conversationId() ?? conversation.resumeId ?? conversation.newId;
      await folder.record(id);
      continuation.save(id);
    }
    yield part;
  }
}
