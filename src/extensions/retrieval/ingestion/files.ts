/**
 * Files → ingest documents, for the CLI (`agenticdriver ingest PATH…`): the format by file
 * extension, a source id from the path under the ingested root, the revision from the bytes.
 */
import { createHash } from 'node:crypto';
import { basename, extname } from 'node:path';
import PostalMime from 'postal-mime';
import { DriverError } from '../../../protocol/errors.js';
import type { ContextSource, IngestDocument } from '../../../protocol/schemas.js';
import { htmlToText } from './html-text.js';
import { decodeUtf8 } from './text.js';

export const INGESTIBLE_EXTENSIONS = ['.md', '.markdown', '.txt', '.pdf', '.eml'] as const;

const OPAQUE_KEY = /^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$/;
const MAX_TEXT_CHARS = 1_048_576;
/** What the wire's base64 field can carry (44,739,244 characters). */
const MAX_PDF_BYTES = 33_554_432;

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/**
 * A stable OpaqueKey for a path relative to the ingested root: the path itself with `/` as `:`
 * when that is a valid key, else a digest of the path with a readable tail.
 */
export function sourceIdForPath(relativePath: string): string {
  const path = relativePath.replaceAll('\\', '/').replace(/^(\.\/)+/, '');
  const plain = path.replaceAll('/', ':');
  if (!path.includes(':') && OPAQUE_KEY.test(plain)) return plain;
  const tail = plain.replace(/[^a-zA-Z0-9._:-]/g, '_').slice(-80);
  return `h:${sha256(path).slice(0, 32)}:${tail}`;
}

/** The context source of a file: id from its path under the root, revision from its bytes, title = file name. */
export function sourceForFile(relativePath: string, bytes: Uint8Array): ContextSource {
  return { id: sourceIdForPath(relativePath), revision: sha256(bytes).slice(0, 16), title: Array.from(basename(relativePath)).slice(0, 256).join('') };
}

/** The ingest document for a file's bytes, chosen by its extension. */
export async function documentFromFile(path: string, bytes: Uint8Array, source: ContextSource): Promise<IngestDocument> {
  const extension = extname(path).toLowerCase();
  switch (extension) {
    case '.md':
    case '.markdown':
      return { type: 'text', mediaType: 'text/markdown', source, text: fileText(path, bytes) };
    case '.txt':
      return { type: 'text', mediaType: 'text/plain', source, text: fileText(path, bytes) };
    case '.pdf':
      if (bytes.length === 0) throw new DriverError('INVALID_DOCUMENT', `${path} is empty.`);
      if (bytes.length > MAX_PDF_BYTES) throw new DriverError('DOCUMENT_LIMIT', `${path} is ${bytes.length} bytes; a PDF can be at most ${MAX_PDF_BYTES}.`);
      return { type: 'pdf', mediaType: 'application/pdf', source, data: Buffer.from(bytes).toString('base64') };
    case '.eml':
      return emailDocument(path, bytes, source);
    default:
      throw new DriverError(
        'INVALID_DOCUMENT',
        `${path}: cannot ingest "${extension || 'files without an extension'}"; supported are ${INGESTIBLE_EXTENSIONS.join(', ')}.`,
      );
  }
}

function fileText(path: string, bytes: Uint8Array): string {
  const text = decodeUtf8(bytes, path);
  if (text.trim() === '') throw new DriverError('EMPTY_DOCUMENT', `${path} has no text.`);
  if (text.length > MAX_TEXT_CHARS && Array.from(text).length > MAX_TEXT_CHARS) {
    throw new DriverError('DOCUMENT_LIMIT', `${path} has more than ${MAX_TEXT_CHARS} characters.`);
  }
  return text;
}

/** One .eml is one message of its thread; the thread is named after the first message it refers to. */
async function emailDocument(path: string, bytes: Uint8Array, source: ContextSource): Promise<IngestDocument> {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    email = await PostalMime.parse(bytes);
  } catch (error) {
    throw new DriverError('INVALID_DOCUMENT', `${path} is not a readable email message.`, { cause: error });
  }
  const messageId = firstMessageId(email.messageId);
  const root = firstMessageId(email.references) ?? firstMessageId(email.inReplyTo) ?? messageId;
  const body = email.text?.trim() ? email.text : email.html ? htmlToText(email.html) : '';
  const header = [
    email.from?.address ? `From: ${formatAddress(email.from)}` : undefined,
    email.to?.length ? `To: ${email.to.map(formatAddress).join(', ')}` : undefined,
    email.date ? `Date: ${email.date}` : undefined,
    email.subject ? `Subject: ${email.subject}` : undefined,
  ].filter((line): line is string => line !== undefined);
  const text = [...header, ...(header.length > 0 ? [''] : []), body].join('\n');
  if (text.length > MAX_TEXT_CHARS) throw new DriverError('DOCUMENT_LIMIT', `${path}: the message text is more than ${MAX_TEXT_CHARS} characters.`);
  const ownKey = messageId ? messageKey(messageId) : `m-${sha256(bytes).slice(0, 32)}`;
  return {
    type: 'email',
    source,
    threadId: root ? messageKey(root) : ownKey,
    messages: [{ id: ownKey, text }],
  };
}

function firstMessageId(header: string | undefined): string | undefined {
  const match = /<([^<>\s]+)>/.exec(header ?? '') ?? /\S+/.exec(header ?? '');
  return match ? (match[1] ?? match[0]) : undefined;
}

/** A Message-ID as an OpaqueKey: `local@domain` → `local:domain` when that fits, else its digest. */
function messageKey(id: string): string {
  const key = id.replace('@', ':');
  return OPAQUE_KEY.test(key) ? key : `m-${sha256(id).slice(0, 32)}`;
}

function formatAddress(address: { name: string; address?: string | undefined; group?: { name: string; address: string }[] | undefined }): string {
  if (address.group) return `${address.name}: ${address.group.map(formatAddress).join(', ')}`;
  return address.name ? `${address.name} <${address.address ?? ''}>` : (address.address ?? '');
}
