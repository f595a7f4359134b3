/**
 * Parity of the four clients with the contract: every operation of protocol/operations.json
 * must be a method of each language's client class(es), under its generated name. The TypeScript
 * and Python classes are inspected at run time; the Go and Rust sources are read.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgenticClient, OperatorClient } from '../../src/client/index.js';
import type { OperationsDocument } from './operations.js';

export type Language = 'typescript' | 'go' | 'python' | 'rust';

/** Per language, per client kind: the classes that must all carry the methods, each with its method names. */
export type ClientMethods = Record<Language, Record<'agent' | 'operator', Record<string, string[]>>>;

/** What a language calls its client classes (a class missing from the map lacks every method). */
const CLASSES: Record<Language, Record<'agent' | 'operator', string[]>> = {
  typescript: { agent: ['AgenticClient'], operator: ['OperatorClient'] },
  go: { agent: ['Client'], operator: ['OperatorClient'] },
  python: { agent: ['AgenticClient', 'AsyncAgenticClient'], operator: ['OperatorClient', 'AsyncOperatorClient'] },
  rust: { agent: ['AsyncAgenticClient', 'blocking::AgenticClient'], operator: ['AsyncOperatorClient', 'blocking::OperatorClient'] },
};

/** One line per operation a client class lacks (also when it has it under another name). */
export function parityProblems(document: OperationsDocument, methods: ClientMethods): string[] {
  const problems: string[] = [];
  for (const language of Object.keys(CLASSES) as Language[]) {
    for (const operation of document.operations) {
      for (const className of CLASSES[language][operation.client]) {
        const present = methods[language][operation.client][className] ?? [];
        for (const method of operation.methods[language]) {
          if (!present.includes(method)) problems.push(`${language}: ${className} lacks ${method} (operation ${operation.id})`);
        }
      }
    }
  }
  return problems;
}

const goSources = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.go') && !name.endsWith('_test.go')).map((name) => readFileSync(join(dir, name), 'utf8'));

/** Exported methods by receiver type, from Go source files. */
export function goMethods(dir: string): Record<string, string[]> {
  const byType: Record<string, string[]> = {};
  for (const text of goSources(dir)) {
    for (const match of text.matchAll(/^func \(\w+ \*?(\w+)\) ([A-Z]\w*)\(/gm)) (byType[match[1]!] ??= []).push(match[2]!);
  }
  return byType;
}

/** Public methods of each `impl Type {` block, by `module::Type` (`Type` at the crate root's modules that re-export it). */
export function rustMethods(srcDir: string): Record<string, string[]> {
  const byType: Record<string, string[]> = {};
  const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.rs') && !name.startsWith('generated'));
  for (const file of files) {
    const text = readFileSync(join(srcDir, file), 'utf8');
    const module = file === 'blocking.rs' ? 'blocking::' : '';
    for (const block of text.matchAll(/^impl (\w+) \{\n([\s\S]*?)^\}/gm)) {
      const names = [...block[2]!.matchAll(/^ {4}pub (?:async )?fn (\w+)/gm)].map((match) => match[1]!);
      (byType[`${module}${block[1]!}`] ??= []).push(...names);
    }
  }
  return byType;
}

/** Public methods of the Python client classes (imported from the source tree). */
export function pythonMethods(srcDir: string, classes: string[]): Record<string, string[]> {
  const script = `import json, agenticdriver as a\nprint(json.dumps({n: [m for m in dir(getattr(a, n)) if not m.startswith('_')] for n in ${JSON.stringify(classes)} if hasattr(a, n)}))`;
  const output = execFileSync(process.env.AGENTICDRIVER_PYTHON ?? 'python3', ['-c', script], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: srcDir } });
  return JSON.parse(output) as Record<string, string[]>;
}

/** The methods of this repository's clients. */
export function repositoryMethods(root: string): ClientMethods {
  const classes: Record<string, { prototype: object }> = { AgenticClient, OperatorClient };
  const ts = (name: string) => Object.getOwnPropertyNames(classes[name]?.prototype ?? {});
  const pythonSrc = join(root, 'clients/python/src');
  const python = existsSync(pythonSrc) ? pythonMethods(pythonSrc, [...CLASSES.python.agent, ...CLASSES.python.operator]) : {};
  const go = goMethods(join(root, 'clients/go'));
  const rust = rustMethods(join(root, 'clients/rust/src'));
  const pick = (language: Language, found: Record<string, string[]>) => ({
    agent: Object.fromEntries(CLASSES[language].agent.map((name) => [name, found[name] ?? []])),
    operator: Object.fromEntries(CLASSES[language].operator.map((name) => [name, found[name] ?? []])),
  });
  return {
    typescript: pick('typescript', Object.fromEntries([...CLASSES.typescript.agent, ...CLASSES.typescript.operator].map((name) => [name, ts(name)]))),
    go: pick('go', go),
    python: pick('python', python),
    rust: pick('rust', rust),
  };
}
