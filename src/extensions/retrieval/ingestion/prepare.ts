/**
 * One ingest request → the chunks and manifest the retrieval service indexes. Pure: no store,
 * no HTTP; the caller authorises first and indexes after.
 */
import { createHash } from 'node:crypto';
import { DriverError } from '../../../protocol/errors.js';
import { IngestRequest, type ContextSource, type IngestionManifest } from '../../../protocol/schemas.js';
import { validatorFor } from '../../../protocol/validate.js';
import { throwIfAborted, type IngestionProgress } from './abort.js';
import { CHUNKER_ID, chunkSegments } from './chunker.js';
import { EMAIL_EXTRACTOR, extractEmailThread } from './email.js';
import { MARKDOWN_EXTRACTOR, markdownChunks } from './markdown.js';
import { extractPdfPages } from './pdf.js';
import { PLAIN_TEXT_EXTRACTOR, plainTextSegments } from './plain-text.js';
import type { IngestionPolicy } from './policy.js';
import type { Segment } from './segment.js';
import { normalizeText, utf8Bytes } from './text.js';
import type { ExtractorIdentity, PreparedChunk, PreparedDocument } from './types.js';

type Document = IngestRequest['document'];
type TextDocument = Extract<Document, { type: 'text' }>;
type PdfDocument = Extract<Document, { type: 'pdf' }>;

/** What an extractor hands the chunker (or the chunks, when it chunked in its thread) and the manifest. */
interface Extraction {
  format: IngestionManifest['format'];
  raw: Uint8Array;
  extractor: ExtractorIdentity;
  segments: Segment[];
  chunks?: PreparedChunk[];
  extractedTextBytes: number;
  pages?: NonNullable<IngestionManifest['pages']>;
  messages?: NonNullable<IngestionManifest['messages']>;
}

const MAX_POSITION = 1_000_000;
const isIngestRequest = validatorFor<IngestRequest>(IngestRequest);

export async function prepareDocument(request: IngestRequest, policy: IngestionPolicy, options: IngestionProgress = {}): Promise<PreparedDocument> {
  if (!isIngestRequest(request)) throw new DriverError('INVALID_INGESTION', `The ingest request ${isIngestRequest.explain(request)}.`);
  return prepareValidDocument(request, policy, options);
}

/**
 * `prepareDocument` for a request already checked against the IngestRequest schema (the host's
 * route does): a 1 MiB document is not walked by the validator a second time on the host thread.
 */
export async function prepareValidDocument(request: IngestRequest, policy: IngestionPolicy, options: IngestionProgress = {}): Promise<PreparedDocument> {
  throwIfAborted(options.signal);
  const { document } = request;
  const maxBytes = Math.min(policy.maxChunkBytes, request.chunking?.maxBytes ?? policy.maxChunkBytes);
  const chunking = { sourceId: document.source.id, maxBytes, maxChunks: policy.maxChunks };
  const extraction =
    document.type === 'text'
      ? await extractText(document, policy, chunking, options)
      : document.type === 'pdf'
        ? await extractPdf(document, policy, options)
        : extractEmail(document, policy);
  throwIfAborted(options.signal);
  const chunks = extraction.chunks ?? chunkSegments(extraction.segments, { ...chunking, ...options });
  const ingestion: IngestionManifest = {
    format: extraction.format,
    inputSha256: createHash('sha256').update(extraction.raw).digest('hex'),
    inputBytes: extraction.raw.length,
    extractor: extraction.extractor,
    chunker: { id: CHUNKER_ID, maxBytes },
    extractedTextBytes: extraction.extractedTextBytes,
    indexedTextBytes: chunks.reduce((sum, chunk) => sum + utf8Bytes(chunk.text), 0),
    chunks: chunks.length,
  };
  if (extraction.pages) ingestion.pages = extraction.pages;
  if (extraction.messages) ingestion.messages = extraction.messages;
  return { source: document.source, chunks, ingestion };
}

function checkRawBytes(bytes: number, policy: IngestionPolicy): void {
  if (bytes > policy.maxDocumentBytes) {
    throw new DriverError('DOCUMENT_LIMIT', `The document is ${bytes} bytes; at most ${policy.maxDocumentBytes} are allowed.`);
  }
}

function checkTextBytes(bytes: number, policy: IngestionPolicy): void {
  if (bytes > policy.maxTextBytes) {
    throw new DriverError('DOCUMENT_LIMIT', `The document's text is ${bytes} bytes; at most ${policy.maxTextBytes} are allowed.`);
  }
}

async function extractText(document: TextDocument, policy: IngestionPolicy, chunking: { sourceId: string; maxBytes: number; maxChunks: number }, options: IngestionProgress): Promise<Extraction> {
  const raw = Buffer.from(document.text, 'utf8');
  const text = normalizeText(document.text, 'The document');
  checkRawBytes(raw.length, policy);
  const extractedTextBytes = utf8Bytes(text);
  checkTextBytes(extractedTextBytes, policy);
  const lineOffset = (document.source.location?.startLine ?? 1) - 1;
  if (document.mediaType === 'text/markdown') {
    const chunks = await markdownChunks(text, { lineOffset, ...chunking }, policy, options);
    return { format: 'markdown', raw, extractor: { ...MARKDOWN_EXTRACTOR }, segments: [], chunks, extractedTextBytes };
  }
  return { format: 'text', raw, extractor: { ...PLAIN_TEXT_EXTRACTOR }, segments: plainTextSegments(text, lineOffset), extractedTextBytes };
}

function extractEmail(document: Extract<Document, { type: 'email' }>, policy: IngestionPolicy): Extraction {
  const email = extractEmailThread(document, policy);
  return {
    format: 'email',
    raw: email.raw,
    extractor: { ...EMAIL_EXTRACTOR },
    segments: email.segments,
    extractedTextBytes: email.extractedTextBytes,
    messages: email.messages,
  };
}

async function extractPdf(document: PdfDocument, policy: IngestionPolicy, options: IngestionProgress): Promise<Extraction> {
  // Refuse an oversized payload before decoding it.
  const padding = document.data.endsWith('==') ? 2 : document.data.endsWith('=') ? 1 : 0;
  checkRawBytes(Math.floor((document.data.length * 3) / 4) - padding, policy);
  const raw = Buffer.from(document.data, 'base64');
  if (raw.length === 0) throw new DriverError('INVALID_DOCUMENT', 'The PDF data is empty.');
  const pdf = await extractPdfPages(raw, policy, options);
  const shift = (document.source.location?.page ?? 1) - 1;
  if (pdf.pages.length + shift > MAX_POSITION) throw new DriverError('DOCUMENT_LIMIT', `Page numbers would pass ${MAX_POSITION}.`);
  const empty: number[] = [];
  const segments: Segment[] = [];
  for (const [index, text] of pdf.pages.entries()) {
    if (text.trim() === '') {
      empty.push(index + 1);
      continue;
    }
    const page = index + 1 + shift;
    segments.push({ location: { page, pageEnd: page }, text, firstLine: 1 });
  }
  if (segments.length === 0) throw new DriverError('EMPTY_EXTRACTION', 'No page of the PDF has extractable text (scanned pages need OCR, which this host does not do).');
  if (empty.length > 0 && !policy.allowEmptyPdfPages) {
    throw new DriverError('OCR_REQUIRED', `Pages ${empty.join(', ')} have no text layer and this host has no OCR; allow empty pages to index the rest.`);
  }
  return {
    format: 'pdf',
    raw,
    extractor: pdf.extractor,
    segments,
    extractedTextBytes: pdf.textBytes,
    pages: { total: pdf.pages.length, ocr: [], empty },
  };
}
