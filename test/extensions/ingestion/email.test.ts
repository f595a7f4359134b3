import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ingestionPolicy, prepareDocument } from '../../../src/extensions/retrieval/ingestion/index.js';
import type { IngestRequest } from '../../../src/protocol/schemas.js';
import { assertWellFormed, rejectsWith } from './helpers.js';

const policy = ingestionPolicy();

function thread(messages: { id: string; text: string }[], threadId = 'thread-42'): IngestRequest {
  return { corpus: 'default', document: { type: 'email', source: { id: 'mail-thread-42', revision: 'r1' }, threadId, messages } };
}

const MESSAGES = [
  { id: 'msg-1', text: 'Hi Ada,\r\n\r\nCan we move the launch review to Thursday?\r\n\r\nGrace' },
  { id: 'msg-2', text: '   \n' },
  { id: 'msg-3', text: '> Can we move the launch review to Thursday?\nThursday works. The budget sheet is attached.\nAda' },
];

describe('email threads', () => {
  it('makes one segment per message, located by thread and message, and counts empty messages', async () => {
    const prepared = await prepareDocument(thread(MESSAGES), policy);
    assertWellFormed(prepared);
    assert.deepEqual(
      prepared.chunks.map((chunk) => chunk.location),
      [
        { documentId: 'mail-thread-42', threadId: 'thread-42', messageId: 'msg-1', startLine: 1, endLine: 5 },
        { documentId: 'mail-thread-42', threadId: 'thread-42', messageId: 'msg-3', startLine: 1, endLine: 3 },
      ],
    );
    assert.equal(prepared.chunks[0]!.text, 'Hi Ada,\n\nCan we move the launch review to Thursday?\n\nGrace');
    const canonical = JSON.stringify({ threadId: 'thread-42', messages: MESSAGES });
    assert.deepEqual(prepared.ingestion.messages, { total: 3, empty: 1 });
    assert.equal(prepared.ingestion.inputSha256, createHash('sha256').update(canonical).digest('hex'));
    assert.equal(prepared.ingestion.inputBytes, Buffer.byteLength(canonical));
    assert.deepEqual(prepared.ingestion.extractor, { id: 'email-plain-text', version: '1' });
    assert.equal(prepared.ingestion.format, 'email');
  });

  it('never joins two messages into one chunk', async () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ id: `m${i}`, text: `short message ${i}` }));
    const prepared = await prepareDocument(thread(many), policy);
    assert.equal(prepared.chunks.length, 20);
    assert.deepEqual(
      prepared.chunks.map((chunk) => chunk.location.messageId),
      many.map((message) => message.id),
    );
  });

  it('refuses duplicate message ids, too many messages, oversized threads, NUL text and an all-empty thread', async () => {
    await rejectsWith(prepareDocument(thread([MESSAGES[0]!, MESSAGES[0]!]), policy), 'INVALID_INGESTION', /twice/);
    await rejectsWith(prepareDocument(thread(MESSAGES), ingestionPolicy({ maxMessages: 2 })), 'DOCUMENT_LIMIT', /3 messages/);
    await rejectsWith(prepareDocument(thread(MESSAGES), ingestionPolicy({ maxDocumentBytes: 100 })), 'DOCUMENT_LIMIT', /bytes/);
    await rejectsWith(prepareDocument(thread(MESSAGES), ingestionPolicy({ maxTextBytes: 50 })), 'DOCUMENT_LIMIT', /text/);
    await rejectsWith(prepareDocument(thread([{ id: 'a', text: 'bad\u0000' }]), policy), 'INVALID_DOCUMENT', /Message "a".*NUL/);
    await rejectsWith(prepareDocument(thread([{ id: 'a', text: '' }, { id: 'b', text: ' ' }]), policy), 'EMPTY_DOCUMENT');
  });
});
