/** Serializes a case's event list into SSE bytes exactly as the case asks (BOM, line endings, multi-line data). */
import type { ConformanceCase } from './fixtures.js';

interface StreamShape {
  events: unknown[];
  lineEnding?: string;
  multiline?: boolean;
  bom?: boolean;
  repeatText?: { character: string; count: number };
}

export function sseBytes(shape: StreamShape): Buffer {
  const eol = shape.lineEnding ?? '\n';
  const frames = shape.events.map((event) => {
    const payload = withRepeatedText(event, shape.repeatText);
    // Pretty-printing puts line breaks only between JSON tokens, so the joined data lines parse back to the same value.
    const json = shape.multiline ? JSON.stringify(payload, null, 1) : JSON.stringify(payload);
    return json.split('\n').map((line) => `data: ${line}`).join(eol) + eol + eol;
  });
  return Buffer.from((shape.bom ? '\uFEFF' : '') + frames.join(''), 'utf8');
}

/** The body a stream case sends: `rawHex`, `raw`, or its events (default `baseEvents`). */
export function streamCaseBody(testCase: ConformanceCase, baseEvents: unknown[]): Buffer {
  if (testCase.rawHex !== undefined) return Buffer.from(testCase.rawHex, 'hex');
  if (testCase.raw !== undefined) return Buffer.from(testCase.raw, 'utf8');
  return sseBytes({
    events: testCase.events ?? baseEvents,
    lineEnding: testCase.lineEnding,
    multiline: testCase.multiline,
    bom: testCase.bom,
    repeatText: testCase.repeatText,
  });
}

function withRepeatedText(event: unknown, repeat: StreamShape['repeatText']): unknown {
  if (!repeat || !isRecord(event) || event.type !== 'text.delta') return event;
  return { ...event, text: repeat.character.repeat(repeat.count) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
