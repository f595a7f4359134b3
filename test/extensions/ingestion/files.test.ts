import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  documentFromFile,
  ingestionPolicy,
  prepareDocument,
  sourceForFile,
  sourceIdForPath,
} from '../../../src/extensions/retrieval/ingestion/index.js';
import { htmlToText } from '../../../src/extensions/retrieval/ingestion/html-text.js';
import type { IngestDocument } from '../../../src/protocol/schemas.js';
import { assertWellFormed, rejectsWith } from './helpers.js';
import { makePdf } from './pdfs.js';

const policy = ingestionPolicy();
const OPAQUE_KEY = /^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$/;
const bytes = (text: string) => Buffer.from(text, 'utf8');

async function prepareFile(path: string, data: Uint8Array) {
  const document = await documentFromFile(path, data, sourceForFile(path, data));
  return { document, prepared: await prepareDocument({ corpus: 'default', document }, policy) };
}

const FIRST = [
  'From: Grace Hopper <grace@example.com>',
  'To: Ada Lovelace <ada@example.com>',
  'Subject: Launch review',
  'Date: Mon, 30 Nov 2026 09:15:00 +0000',
  'Message-ID: <launch-1@example.com>',
  'MIME-Version: 1.0',
  'Content-Type: multipart/alternative; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Can we move the launch review to Thursday? The caf=C3=A9 is booked.',
  '',
  '--b1',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Can we move the launch review to <b>Thursday</b>?</p>',
  '--b1--',
  '',
].join('\r\n');

const REPLY = [
  'From: Ada Lovelace <ada@example.com>',
  'To: Grace Hopper <grace@example.com>',
  'Subject: Re: Launch review',
  'Date: Mon, 30 Nov 2026 10:02:00 +0000',
  'Message-ID: <launch-2@example.com>',
  'In-Reply-To: <launch-1@example.com>',
  'References: <launch-1@example.com>',
  'MIME-Version: 1.0',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<html><head><title>x</title><style>p { color: red }</style></head><body>',
  '<p>Thursday works &amp; the budget sheet is attached.</p><script>alert("no")</script>',
  '<ul><li>agenda</li><li>budget</li></ul><!-- hidden --></body></html>',
  '',
].join('\r\n');

describe('files → ingest documents', () => {
  it('derives stable OpaqueKey source ids from paths, hashing what does not fit', () => {
    assert.equal(sourceIdForPath('docs/guide.md'), 'docs:guide.md');
    assert.equal(sourceIdForPath('./docs/guide.md'), 'docs:guide.md');
    assert.equal(sourceIdForPath('docs\\guide.md'), 'docs:guide.md');
    const odd = ['notes/my notes (1).md', '.hidden/x.md', 'a:b.md', `${'deep/'.repeat(40)}file.md`, 'naïve/café.txt'];
    const ids = odd.map(sourceIdForPath);
    for (const id of ids) assert.match(id, OPAQUE_KEY);
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual(odd.map(sourceIdForPath), ids);
    // 'a:b.md' must not collide with 'a/b.md'.
    assert.notEqual(sourceIdForPath('a:b.md'), sourceIdForPath('a/b.md'));
    const source = sourceForFile('docs/guide.md', bytes('# Hi\n'));
    assert.deepEqual(source, { id: 'docs:guide.md', revision: createHash('sha256').update('# Hi\n').digest('hex').slice(0, 16), title: 'guide.md' });
  });

  it('reads .md, .markdown and .txt as UTF-8 text and .pdf as base64', async () => {
    const md = await prepareFile('guide.markdown', bytes('\uFEFF# Title\nBody\n'));
    assert.equal(md.prepared.ingestion.format, 'markdown');
    assert.equal(md.prepared.chunks[0]!.location.section, 'Title');
    assert.equal((await prepareFile('README.MD', bytes('# A\nb'))).prepared.ingestion.format, 'markdown');
    const txt = await prepareFile('notes.txt', bytes('plain\r\ntext'));
    assert.equal(txt.prepared.chunks[0]!.text, 'plain\ntext');
    assert.equal(txt.prepared.source.title, 'notes.txt');
    const pdfBytes = await makePdf([['Hello from a file']]);
    const pdf = await prepareFile('scan/report.pdf', pdfBytes);
    assertWellFormed(pdf.prepared);
    assert.equal(pdf.prepared.chunks[0]!.text, 'Hello from a file');
    assert.equal(pdf.prepared.source.id, 'scan:report.pdf');
  });

  it('refuses unknown extensions, invalid UTF-8 and empty files with clear messages', async () => {
    const source = sourceForFile('x', bytes('x'));
    await rejectsWith(documentFromFile('slides.pptx', bytes('x'), source), 'INVALID_DOCUMENT', /slides\.pptx: cannot ingest "\.pptx"; supported are \.md, \.markdown, \.txt, \.pdf, \.eml/);
    await rejectsWith(documentFromFile('Makefile', bytes('x'), source), 'INVALID_DOCUMENT', /files without an extension/);
    await rejectsWith(documentFromFile('bad.txt', Buffer.from([0x61, 0xff, 0xfe, 0x62]), source), 'INVALID_DOCUMENT', /bad\.txt is not valid UTF-8/);
    await rejectsWith(documentFromFile('empty.md', bytes(' \n'), source), 'EMPTY_DOCUMENT');
    await rejectsWith(documentFromFile('empty.pdf', new Uint8Array(0), source), 'INVALID_DOCUMENT');
  });

  it('reads an .eml as one message of its thread: the text part, headers first', async () => {
    const { document, prepared } = await prepareFile('mail/launch-1.eml', bytes(FIRST));
    const email = document as Extract<IngestDocument, { type: 'email' }>;
    assert.equal(email.threadId, 'launch-1:example.com');
    assert.deepEqual(email.messages.map((message) => message.id), ['launch-1:example.com']);
    assert.equal(
      email.messages[0]!.text.trim(),
      [
        'From: Grace Hopper <grace@example.com>',
        'To: Ada Lovelace <ada@example.com>',
        'Date: 2026-11-30T09:15:00.000Z',
        'Subject: Launch review',
        '',
        'Can we move the launch review to Thursday? The café is booked.',
      ].join('\n'),
    );
    assertWellFormed(prepared);
    assert.deepEqual(prepared.ingestion.messages, { total: 1, empty: 0 });
    assert.equal(prepared.chunks[0]!.location.threadId, 'launch-1:example.com');
  });

  it('puts a reply in the thread of the message it refers to, and turns an HTML-only body into text', async () => {
    const { document } = await prepareFile('mail/launch-2.eml', bytes(REPLY));
    const email = document as Extract<IngestDocument, { type: 'email' }>;
    assert.equal(email.threadId, 'launch-1:example.com');
    assert.equal(email.messages[0]!.id, 'launch-2:example.com');
    const body = email.messages[0]!.text.split('\n\n').slice(1).join('\n\n');
    assert.equal(body, 'Thursday works & the budget sheet is attached.\n\n- agenda\n- budget');
  });

  it('converts HTML linearly: skipped blocks, comments, entities, stray angle brackets', () => {
    assert.equal(htmlToText('a < b &lt;c&gt; &#x1F600; &#0; &bogus; <br>next'), 'a < b <c> 😀 &bogus;\nnext');
    assert.equal(htmlToText('<p>kept</p><script>never closed'), 'kept');
    assert.equal(htmlToText('<!-- unterminated comment'), '');
    // Many unterminated tags: one pass (a quadratic scan would run the test out of time).
    assert.equal(htmlToText(`x${'<script'.repeat(50_000)}${'<a'.repeat(50_000)}`), 'x');
  });
});
