/**
 * The run as one plain-text prompt for a CLI (which keeps its own conversation format):
 * a single bare user message is sent as is; anything richer becomes labelled sections.
 */
import type { ProviderRequest } from '../contract/v1.js';

export function renderPrompt(request: ProviderRequest): string {
  const only = request.messages[0];
  if (request.messages.length === 1 && only?.role === 'user' && !request.instructions && !only.context?.length) return only.content;
  const sections: string[] = [];
  if (request.instructions) sections.push(`instructions:\n${request.instructions}`);
  for (const message of request.messages) {
    if (message.role === 'tool') {
      sections.push(`tool result (${message.name}):\n${message.content}`);
      continue;
    }
    const context = message.role === 'user' ? (message.context ?? []).filter((item) => item.text !== undefined) : [];
    for (const item of context) sections.push(`context (${item.mediaType}):\n${item.text}`);
    sections.push(`${message.role}:\n${message.content}`);
  }
  return sections.join('\n\n');
}
