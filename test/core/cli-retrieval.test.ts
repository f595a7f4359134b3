/**
 * The newcomer's path end to end, with real processes: `init` (a `default` corpus the local token
 * may search and index), `serve`, `ingest` of a folder (Markdown, text, an email, a PDF made with
 * pdf-lib, one unsupported file named explicitly), then `run --retrieval default` prints the
 * grounded answer and its sources.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { CLI_MAIN, cli, killAll, ROOT, spawnHost } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

async function pdf(pages: string[]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = document.addPage([400, 300]);
    if (text !== '') page.drawText(text, { x: 20, y: 250, size: 12, font });
  }
  return document.save();
}

describe('agenticdriver ingest and run --retrieval against a live serve', () => {
  const children: ChildProcess[] = [];
  let dir: string;
  let config: string;
  let url: string;

  before(async () => {
    dir = tempDir('agenticdriver-cli-retrieval-');
    config = join(dir, 'config', 'config.json');
    assert.equal(cli(['init', '--config', config, '--json']).status, 0);
    const docs = join(dir, 'docs');
    mkdirSync(join(docs, 'team'), { recursive: true });
    writeFileSync(join(docs, 'handbook.md'), '# Office\n\nThe office opens at nine.\n\n## Expenses\n\nExpense reports are due on the first Monday of each month.\n');
    writeFileSync(join(docs, 'team', 'notes.txt'), 'The team standup is at ten every weekday.\n');
    writeFileSync(
      join(docs, 'team', 'thread.eml'),
      'From: ada@example.com\r\nTo: bob@example.com\r\nSubject: Parking\r\nMessage-ID: <p1@example.com>\r\nContent-Type: text/plain\r\n\r\nThe parking garage closes at midnight.\r\n',
    );
    writeFileSync(join(docs, 'guide.pdf'), await pdf(['The printer lives on the second floor.', '', 'Toner is in the supply cabinet.']));
    writeFileSync(join(docs, 'ignored.png'), 'not ingested: not an ingestible extension');
    writeFileSync(join(dir, 'strange.csv'), 'a,b\n');
    const host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--port', '0', '--json'], process.env, children);
    url = host.url;
  });

  after(() => killAll(children));

  it('ingests a folder recursively, reports each file and a summary, and fails for a file it cannot ingest', () => {
    const result = cli(['ingest', join(dir, 'docs'), join(dir, 'strange.csv'), '--config', config, '--url', url]);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /indexed +docs\/handbook\.md/);
    assert.match(result.stdout, /indexed +docs\/guide\.pdf/);
    assert.match(result.stdout, /indexed +docs\/team\/thread\.eml/);
    assert.doesNotMatch(result.stdout, /ignored\.png/);
    assert.match(result.stdout, /4 indexed, 0 unchanged, 1 failed \(corpus default\)/);
    assert.match(result.stderr, /failed +strange\.csv: INVALID_DOCUMENT/);
    const again = cli(['ingest', join(dir, 'docs'), '--config', config, '--url', url, '--json']);
    assert.equal(again.status, 0, again.stderr);
    const lines = again.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    assert.deepEqual(lines.at(-1), { summary: { corpus: 'default', files: 4, indexed: 0, unchanged: 4, failed: 0 } });
  });

  it('runs grounded on the default corpus and prints the sources after the answer', () => {
    const result = cli(['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--retrieval', 'default', '--input', 'When are expense reports due?']);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /From the supplied sources:/);
    assert.match(result.stdout, /first Monday/);
    assert.match(result.stdout, /Sources:\n {2}\[source:p-[0-9a-f]{64}\] handbook\.md \(§ Expenses, lines \d+-\d+\)/);
    const pdfRun = cli(['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--retrieval', 'default', '--input', 'Where is the toner?']);
    assert.equal(pdfRun.status, 0, pdfRun.stderr);
    assert.match(pdfRun.stdout, /guide\.pdf \(p\. 3/);
  });

  it('reports retrieval in doctor', () => {
    const doctor = cli(['doctor', '--config', config, '--json']);
    const report = JSON.parse(doctor.stdout) as { retrieval: unknown };
    assert.deepEqual(report.retrieval, { enabled: true, corpora: [{ id: 'default', namespace: 'shared', embedder: 'builtin', ranking: 'bm25' }], pdf: true, engine: 'sqlite-fts5' });
  });
});

describe("the README's walk-through: agenticdriver ingest ./docs, then a question", () => {
  const children: ChildProcess[] = [];
  let config: string;
  let url: string;

  before(async () => {
    config = join(tempDir('agenticdriver-cli-docs-'), 'config', 'config.json');
    assert.equal(cli(['init', '--config', config, '--json']).status, 0);
    const host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--port', '0', '--json'], process.env, children);
    url = host.url;
  });

  after(() => killAll(children));

  it("answers 'How do I configure TLS?' from host.md's TLS passage, ranked first", () => {
    const ingested = cli(['ingest', join(ROOT, 'docs'), '--config', config, '--url', url]);
    assert.equal(ingested.status, 0, ingested.stderr);
    assert.match(ingested.stdout, /indexed +docs\/host\.md/);
    const result = cli(['run', '--config', config, '--url', url, '--provider', 'mock', '--model', 'demo', '--retrieval', 'default', '--input', 'How do I configure TLS?']);
    assert.equal(result.status, 0, result.stderr);
    const sources = result.stdout.slice(result.stdout.lastIndexOf('Sources:')).split('\n').slice(1).filter((line) => line.trim() !== '');
    assert.match(sources[0]!, /\[source:[^\]]+\] host\.md \(§ TLS, lines \d+-\d+\)/, result.stdout);
    assert.match(result.stdout, /To serve HTTPS, configure TLS on the listener/);
  });
});
