/** The shared vectors as the peer and the TypeScript driver read them. */
import { readFileSync } from 'node:fs';

export interface ConformanceCase {
  id: string;
  operation?: string;
  expectedError?: string;
  expectTransportError?: boolean;
  events?: unknown[];
  raw?: string;
  rawHex?: string;
  chunkSizes?: number[];
  lineEnding?: string;
  multiline?: boolean;
  bom?: boolean;
  repeatText?: { character: string; count: number };
  contentType?: string;
  redirect?: boolean;
  cancel?: boolean;
  json?: unknown;
  status?: number;
  [field: string]: unknown;
}

export interface ConformanceVectors {
  wireVersion: string;
  maxEventBytes: number;
  baseEvents: unknown[];
  cases: ConformanceCase[];
}

export interface VersioningCase {
  id: string;
  headers?: Record<string, string>;
  events?: unknown[];
  expectedTypes?: string[];
  expectedError?: string;
  status?: number;
  json?: unknown;
  retryable?: boolean;
}

export interface VersioningVectors {
  wireVersion: string;
  cases: VersioningCase[];
}

/** protocol/fixtures/base-url.json: URLs a client is made with, and whether it must refuse them. */
export interface BaseUrlVectors {
  description: string;
  token: string;
  cases: { id: string; url: string; expectedError?: string }[];
}

export interface SkipList {
  operations: Record<string, string>;
  cases: Record<string, string>;
}

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** The reason a case is skipped, or undefined when it runs. */
export function skipReason(skip: SkipList, testCase: { id: string; operation?: string }): string | undefined {
  return skip.cases[testCase.id] ?? (testCase.operation ? skip.operations[testCase.operation] : undefined);
}
