/**
 * The docs name only what exists, and name all of it (issue 26): every `agenticdriver …`
 * command and flag written in docs/ (and the README) exists in the command tree, and every
 * command and flag of the tree is in docs/host.md; every client method named in
 * docs/client.md's tables exists in that language's client, and every public method of the
 * four clients is named there.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);

// ---------------------------------------------------------------------------------------------
// The CLI

/** Every command of the tree by its path (`jobs list`), with its long flags. */
function commandTree(): Map<string, Set<string>> {
  const tree = new Map<string, Set<string>>();
  const walk = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      const here = [...path, sub.name()];
      tree.set(here.join(' '), new Set(sub.options.map((option) => option.long!).filter(Boolean)));
      walk(sub, here);
    }
  };
  walk(buildProgram('0.0.0'), []);
  return tree;
}

interface Mention {
  where: string;
  command: string;
  flags: string[];
}

/** Fenced blocks that hold commands (others hold code, JSON or a folder tree). */
const SHELL_BLOCKS = /^```(sh|bash|shell|console|text)$/;

/** `agenticdriver …` as written in code: inline code spans and the lines of shell blocks (comments dropped). */
function mentions(path: string): Mention[] {
  const text = read(path);
  const snippets: string[] = [];
  let fence: 'shell' | 'other' | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) {
      fence = fence ? undefined : SHELL_BLOCKS.test(line.trim()) ? 'shell' : 'other';
      continue;
    }
    if (fence === 'shell') snippets.push(line.replace(/\s#\s.*$/, ''));
    else if (fence) continue;
    else for (const match of line.matchAll(/`([^`]+)`/g)) snippets.push(match[1]!);
  }
  const tree = commandTree();
  const found: Mention[] = [];
  for (const snippet of snippets) {
    for (const match of snippet.matchAll(/(?:^|[\s;&|(])(?:npx )?(?:agenticdriver|node dist\/cli\/main\.js) ([a-z][^;&|]*)/g)) {
      const words = match[1]!.split(/\s+/);
      // The longest run of words that names a command (the rest are arguments and flags).
      let command = '';
      for (let length = words.length; length > 0 && !command; length -= 1) {
        const candidate = words.slice(0, length).join(' ');
        if (tree.has(candidate)) command = candidate;
      }
      found.push({ where: `${path}: ${snippet.trim()}`, command: command || words[0]!, flags: words.filter((word) => word.startsWith('--')).map((word) => word.replace(/[=,.)\]].*$/, '')) });
    }
  }
  return found;
}

describe('the docs and the CLI', () => {
  const tree = commandTree();

  it('name only commands and flags that exist', () => {
    const wrong: string[] = [];
    let count = 0;
    for (const path of [...docs, 'README.md']) {
      for (const mention of mentions(path)) {
        count += 1;
        const flags = tree.get(mention.command);
        if (!flags) wrong.push(`${mention.where}: no command ${mention.command}`);
        else for (const flag of mention.flags) if (!flags.has(flag)) wrong.push(`${mention.where}: ${mention.command} has no ${flag}`);
      }
    }
    assert.ok(count > 40, `only ${count} mentions found: the scan is broken`);
    assert.deepEqual(wrong, []);
  });

  it('document every command and flag in docs/host.md', () => {
    const text = read('docs/host.md');
    const section = text.slice(text.indexOf('## Commands'), text.indexOf('\n## ', text.indexOf('## Commands') + 1));
    assert.match(section, /Every command takes `--config PATH`/);
    const rows = new Map<string, { flags: Set<string>; client: boolean }>();
    let heading = '';
    for (const line of section.split('\n')) {
      if (line.startsWith('### ')) heading = line;
      const row = /^\| `agenticdriver ([^`]+)` \|/.exec(line);
      if (!row) continue;
      const words = row[1]!.replaceAll('\\|', '|').split(/\s+/);
      const command = words.filter((word) => /^[a-z][a-z-]*$/.test(word)).join(' ');
      const path = [...tree.keys()].filter((candidate) => command.startsWith(candidate)).sort((a, b) => b.length - a.length)[0];
      assert.ok(path, `a row for an unknown command: ${row[1]}`);
      rows.set(path, { flags: new Set(words.map((word) => word.replace(/^\[/, '').replace(/[\]…]+$/, '')).filter((word) => word.startsWith('--'))), client: heading === '### Client commands' });
    }
    const missing: string[] = [];
    for (const [path, flags] of tree) {
      const groups = [...tree.keys()].some((other) => other.startsWith(`${path} `));
      if (groups) continue; // a command group: its commands have the rows
      const row = rows.get(path);
      if (!row) {
        missing.push(`agenticdriver ${path}`);
        continue;
      }
      for (const flag of flags) {
        const shared = flag === '--config' || (row.client && (flag === '--url' || flag === '--token-id'));
        if (!shared && !row.flags.has(flag)) missing.push(`agenticdriver ${path} ${flag}`);
      }
      for (const flag of row.flags) if (!flags.has(flag)) missing.push(`documented but gone: agenticdriver ${path} ${flag}`);
    }
    assert.deepEqual(missing, []);
  });
});

// ---------------------------------------------------------------------------------------------
// The clients

type Language = 'TypeScript' | 'Go' | 'Python' | 'Rust';

/** The lines of a block from its opening line to the first line that closes it at column 0. */
function block(text: string, opening: RegExp, close: RegExp): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => opening.test(line));
  assert.ok(start >= 0, `no ${opening}`);
  const end = lines.findIndex((line, index) => index > start && close.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

const names = (lines: string[], pattern: RegExp) => lines.flatMap((line) => (pattern.exec(line)?.[1] ? [pattern.exec(line)![1]!] : []));

/** Lifecycle methods, not operations: constructors and closing the connection pool. */
const LIFECYCLE = new Set(['constructor', 'new', 'builder', 'close', 'aclose']);

/** The public methods of each language's main client (what the table must name). */
function clientMethods(): Record<Language, Set<string>> {
  const ts = block(read('src/client/client.ts'), /^export class AgenticClient\b/, /^}/);
  const go = readdirSync(join(root, 'clients/go')).filter((name) => name.endsWith('.go') && !name.endsWith('_test.go')).map((name) => read(`clients/go/${name}`)).join('\n');
  const python = [
    ...block(read('clients/python/src/agenticdriver/_sync.py'), /^class AgenticClient\b/, /^\S/),
    ...block(read('clients/python/src/agenticdriver/_async.py'), /^class AsyncAgenticClient\b/, /^\S/),
  ];
  const rust = [...block(read('clients/rust/src/async_client.rs'), /^impl AsyncAgenticClient \{/, /^}/), ...block(read('clients/rust/src/blocking.rs'), /^impl AgenticClient \{/, /^}/)];
  const publicOnly = (list: string[]) => new Set(list.filter((name) => !LIFECYCLE.has(name) && !name.startsWith('_')));
  return {
    TypeScript: publicOnly(names(ts, /^ {2}(?:async \*?|\*)?([a-zA-Z]\w*)(?:<[^>]*>)?\(/)),
    Go: publicOnly(names(go.split('\n'), /^func \(c \*Client\) ([A-Z]\w*)\(/)),
    Python: publicOnly(names(python, /^ {4}(?:async )?def ([a-z]\w*)\(/)),
    Rust: publicOnly(names(rust, /^ {4}pub (?:async )?fn ([a-z]\w*)/)),
  };
}

/** Everything a table cell may name in a language: methods of any client type, functions and types. */
function vocabulary(): Record<Language, Set<string>> {
  const files = (dir: string, ext: string): string =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith(ext) && !name.endsWith(`_test${ext}`) && !name.includes('test'))
      .map((name) => read(`${dir}/${name}`))
      .join('\n');
  const collect = (text: string, patterns: RegExp[]) => new Set(patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!)));
  const ts = files('src/client', '.ts') + read('src/protocol/schemas.ts');
  return {
    TypeScript: collect(ts, [/^ {2}(?:async \*?|\*|static )?([a-zA-Z]\w*)(?:<[^>]*>)?\(/gm, /export (?:class|interface|type|function|const) (\w+)/g, /^ {2}([A-Z]\w*),$/gm]),
    Go: collect(files('clients/go', '.go'), [/^func (?:\(\w+ \*?\w+\) )?([A-Z]\w*)\(/gm, /^type ([A-Z]\w*)/gm]),
    Python: collect(files('clients/python/src/agenticdriver', '.py'), [/^\s*(?:async )?def ([a-z]\w*)\(/gm, /^class (\w+)/gm]),
    Rust: collect(files('clients/rust/src', '.rs'), [/pub (?:async )?fn ([a-z]\w*)/g, /pub (?:struct|enum|trait|type) (\w+)/g, /^pub mod (\w+)/gm]),
  };
}

/** The cross-language table of docs/client.md: per language, the code spans of each row. */
function shapeTable(): { row: string; cells: Record<Language, string[]> }[] {
  const text = read('docs/client.md');
  const lines = text.split('\n');
  const header = lines.findIndex((line) => line.startsWith('| thing | TypeScript | Go | Python | Rust |'));
  assert.ok(header >= 0, 'docs/client.md has the cross-language table');
  const rows = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
    const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    rows.push({ row: cells[0]!, cells: { TypeScript: spans(cells[1]!), Go: spans(cells[2]!), Python: spans(cells[3]!), Rust: spans(cells[4]!) } });
  }
  return rows;
}

/** What a code span names: identifiers called (`readJob(id)` → readJob), or the span itself when it is one identifier. */
function named(span: string): string[] {
  let text = span;
  // Arguments name parameters, not API: each (possibly nested) argument list becomes one mark.
  while (/\([^()]*\)/.test(text)) text = text.replace(/\([^()]*\)/g, '\u0001');
  const called = [...text.matchAll(/([A-Za-z_]\w*)\u0001/g)].map((match) => match[1]!);
  if (/^[A-Za-z_]\w*$/.test(span)) called.push(span);
  return called;
}

/** Rows that describe types and fields, not methods. */
const TYPE_ROWS = new Set(['your functions', 'what a function sees']);

describe('the docs and the clients', () => {
  const methods = clientMethods();
  const known = vocabulary();
  const table = shapeTable();

  it('found the clients and the table (the scan is not empty)', () => {
    for (const language of Object.keys(methods) as Language[]) assert.ok(methods[language].size > 15, `${language}: ${[...methods[language]].join(', ')}`);
    assert.ok(table.length > 10);
  });

  it('name only methods, functions and types that exist', () => {
    const wrong: string[] = [];
    for (const { row, cells } of table) {
      if (TYPE_ROWS.has(row)) continue;
      for (const language of Object.keys(cells) as Language[]) {
        for (const name of cells[language].flatMap(named)) if (!known[language].has(name)) wrong.push(`${row} / ${language}: ${name}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it("name every public method of each language's client", () => {
    const missing: string[] = [];
    for (const language of Object.keys(methods) as Language[]) {
      const mentioned = new Set(table.flatMap(({ cells }) => cells[language].flatMap((span) => [...span.matchAll(/[A-Za-z_]\w*/g)].map((match) => match[0]))));
      for (const method of methods[language]) if (!mentioned.has(method)) missing.push(`${language}: ${method}`);
    }
    assert.deepEqual(missing, []);
  });

  it('describe every public method of the TypeScript client in its own table', () => {
    const text = read('docs/client.md');
    const section = text.slice(text.indexOf('| method | what it does |'), text.indexOf('## The same shape in every language'));
    const described = new Set([...section.matchAll(/`([a-zA-Z]\w*)\(/g)].map((match) => match[1]!));
    assert.deepEqual([...methods.TypeScript].filter((method) => !described.has(method)), []);
  });
});
