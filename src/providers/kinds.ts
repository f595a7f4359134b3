/** Every provider kind the host can configure. Add a kind here to make it configurable. */
import { claudeCodeKind, codexKind, geminiCliKind } from './cli/index.js';
import { mockKind } from './mock.js';
import type { ProviderKind } from './registry.js';

export const PROVIDER_KINDS: ProviderKind[] = [mockKind, codexKind, claudeCodeKind, geminiCliKind];

export function providerKind(kind: string): ProviderKind | undefined {
  return PROVIDER_KINDS.find((candidate) => candidate.kind === kind);
}
