/**
 * Retrieval ingestion (issue 18), extraction side: 1,000 generated PDF pages and 10,000
 * Markdown sections through `prepareDocument` (extraction + chunking, no store), pages/s and
 * sections/s. A source holds at most 256 chunks, so the pages come as 200-page PDFs and the
 * sections as 200-section Markdown files. Documents are generated once (pdf-lib) before
 * timing; each round runs them all in turn; the median round is reported.
 *
 *   npx tsx bench/retrieval-ingest.ts [--pdf-pages N] [--sections N] [--rounds R] [--json FILE]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ingestionPolicy, prepareDocument } from '../src/extensions/retrieval/ingestion/index.js';
import type { IngestRequest } from '../src/protocol/schemas.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1]! : fallback;
};
const PDF_PAGES = Number(option('pdf-pages', '1000'));
const SECTIONS = Number(option('sections', '10000'));
const ROUNDS = Number(option('rounds', '3'));
const JSON_OUT = option('json', new URL('./results/retrieval-ingest.json', import.meta.url).pathname);
const PAGES_PER_PDF = 200;
const SECTIONS_PER_FILE = 200;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const WORDS = 'retrieval index chunk page section budget launch review thursday corpus source revision manifest extractor'.split(' ');
/** Deterministic filler text: `count` words from a fixed list, varied by `seed`. */
function words(seed: number, count: number): string {
  return Array.from({ length: count }, (_, i) => WORDS[(seed * 7 + i * 3) % WORDS.length]).join(' ');
}

async function makePdf(pages: number, offset: number): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let page = 0; page < pages; page++) {
    const sheet = document.addPage([612, 792]);
    sheet.drawText(`Page ${offset + page + 1}`, { x: 50, y: 740, size: 14, font });
    for (let line = 0; line < 20; line++) sheet.drawText(words(offset + page + line, 12), { x: 50, y: 710 - line * 14, size: 10, font });
  }
  return document.save({ useObjectStreams: false });
}

function makeMarkdown(sections: number, offset: number): string {
  const parts: string[] = [];
  for (let section = 0; section < sections; section++) {
    const n = offset + section + 1;
    if (section % 10 === 5) parts.push(`Section ${n}\n----------\n\n${words(n, 30)}\n`); // setext
    else parts.push(`## Section ${n}\n\n${words(n, 30)}\n${words(n + 1, 20)}\n`);
    if (section % 25 === 0) parts.push('```sh\n# a comment, not a heading\necho hi\n```\n');
  }
  return parts.join('\n');
}

const source = (id: string) => ({ id, revision: 'r1' });
const pdfRequests: IngestRequest[] = [];
for (let offset = 0; offset < PDF_PAGES; offset += PAGES_PER_PDF) {
  const pages = Math.min(PAGES_PER_PDF, PDF_PAGES - offset);
  const data = Buffer.from(await makePdf(pages, offset)).toString('base64');
  pdfRequests.push({ corpus: 'bench', document: { type: 'pdf', mediaType: 'application/pdf', source: source(`pdf-${offset}`), data } });
}
const markdownRequests: IngestRequest[] = [];
for (let offset = 0; offset < SECTIONS; offset += SECTIONS_PER_FILE) {
  const text = makeMarkdown(Math.min(SECTIONS_PER_FILE, SECTIONS - offset), offset);
  markdownRequests.push({ corpus: 'bench', document: { type: 'text', mediaType: 'text/markdown', source: source(`md-${offset}`), text } });
}

const policy = ingestionPolicy();

interface Timing {
  seconds: number;
  units: number;
  chunks: number;
  inputMB: number;
}

async function timeAll(requests: IngestRequest[], count: (ingestion: Awaited<ReturnType<typeof prepareDocument>>) => number): Promise<Timing> {
  let units = 0;
  let chunks = 0;
  let inputMB = 0;
  const started = performance.now();
  for (const request of requests) {
    const prepared = await prepareDocument(request, policy);
    units += count(prepared);
    chunks += prepared.chunks.length;
    inputMB += prepared.ingestion.inputBytes / 1e6;
  }
  return { seconds: (performance.now() - started) / 1000, units, chunks, inputMB };
}

const sectionsOf = (prepared: Awaited<ReturnType<typeof prepareDocument>>) => new Set(prepared.chunks.map((chunk) => chunk.location.section)).size;

// Warm-up: pdf.js loads its worker code on first use.
await prepareDocument(pdfRequests[0]!, policy);
await prepareDocument(markdownRequests[0]!, policy);

const pdfRounds: Timing[] = [];
const markdownRounds: Timing[] = [];
for (let round = 0; round < ROUNDS; round++) {
  pdfRounds.push(await timeAll(pdfRequests, (prepared) => prepared.ingestion.pages!.total));
  markdownRounds.push(await timeAll(markdownRequests, sectionsOf));
}

function row(metric: string, unit: string, rounds: Timing[], documents: number) {
  const seconds = median(rounds.map((timing) => timing.seconds));
  const { units, chunks, inputMB } = rounds[0]!;
  return { metric, unit, value: units / seconds, units, documents, chunks, seconds, inputMB, rounds: rounds.map((timing) => timing.seconds) };
}

const rows = [row('pdf-pages-per-s', 'pages', pdfRounds, pdfRequests.length), row('markdown-sections-per-s', 'sections', markdownRounds, markdownRequests.length)];
console.log(`retrieval ingestion, extraction + chunking (node ${process.version}, ${ROUNDS} rounds, median)`);
for (const r of rows) {
  console.log(
    `  ${r.unit.padEnd(8)} ${r.units.toLocaleString('en-US').padStart(6)} in ${r.documents} documents → ${r.chunks.toLocaleString('en-US')} chunks: ` +
      `${r.seconds.toFixed(2)} s, ${Math.round(r.value).toLocaleString('en-US')} ${r.unit}/s, ${(r.inputMB / r.seconds).toFixed(1)} MB/s of input`,
  );
}
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, `${JSON.stringify({ at: new Date().toISOString(), node: process.version, rows }, null, 2)}\n`);
console.log(`wrote ${JSON_OUT}`);
