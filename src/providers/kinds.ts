/** Every provider kind the host can configure. Add a kind here to make it configurable. */
import { anthropicKind, geminiKind, openAICompatibleKind, openaiKind, xaiKind } from './api/index.js';
import { claudeCodeKind, codexKind, geminiCliKind } from './cli/index.js';
import { mockKind } from './mock.js';
import type { ProviderKind } from './registry.js';

export const PROVIDER_KINDS: ProviderKind[] = [mockKind, openaiKind, anthropicKind, geminiKind, xaiKind, openAICompatibleKind, codexKind, claudeCodeKind, geminiCliKind];

export function providerKind(kind: string): ProviderKind | undefined {
  return PROVIDER_KINDS.find((candidate) => candidate.kind === kind);
}
