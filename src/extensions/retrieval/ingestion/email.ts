/** An email thread: one segment per message, located by thread and message id. */
import { DriverError } from '../../../protocol/errors.js';
import type { IngestionPolicy } from './policy.js';
import type { Segment } from './segment.js';
import { normalizeText, utf8Bytes } from './text.js';

export const EMAIL_EXTRACTOR = { id: 'email-plain-text', version: '1' } as const;

export interface EmailThread {
  threadId: string;
  messages: { id: string; text: string }[];
}

export interface EmailExtraction {
  /** The canonical thread JSON: what `inputSha256` and `inputBytes` describe. */
  raw: Buffer;
  segments: Segment[];
  extractedTextBytes: number;
  messages: { total: number; empty: number };
}

export function extractEmailThread(thread: EmailThread, policy: IngestionPolicy): EmailExtraction {
  if (thread.messages.length > policy.maxMessages) {
    throw new DriverError('DOCUMENT_LIMIT', `The thread has ${thread.messages.length} messages; at most ${policy.maxMessages} are allowed.`);
  }
  const ids = new Set<string>();
  for (const { id } of thread.messages) {
    if (ids.has(id)) throw new DriverError('INVALID_INGESTION', `The thread lists message "${id}" twice.`);
    ids.add(id);
  }
  const raw = Buffer.from(JSON.stringify({ threadId: thread.threadId, messages: thread.messages.map(({ id, text }) => ({ id, text })) }), 'utf8');
  if (raw.length > policy.maxDocumentBytes) {
    throw new DriverError('DOCUMENT_LIMIT', `The thread is ${raw.length} bytes; at most ${policy.maxDocumentBytes} are allowed.`);
  }
  let extractedTextBytes = 0;
  let empty = 0;
  const segments: Segment[] = [];
  for (const message of thread.messages) {
    const text = normalizeText(message.text, `Message "${message.id}"`);
    extractedTextBytes += utf8Bytes(text);
    if (text.trim() === '') empty++;
    segments.push({ location: { threadId: thread.threadId, messageId: message.id }, text, firstLine: 1 });
  }
  if (extractedTextBytes > policy.maxTextBytes) {
    throw new DriverError('DOCUMENT_LIMIT', `The thread's text is ${extractedTextBytes} bytes; at most ${policy.maxTextBytes} are allowed.`);
  }
  return { raw, segments, extractedTextBytes, messages: { total: thread.messages.length, empty } };
}
