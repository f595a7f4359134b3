/**
 * Property tests of the client's SSE decoder (src/client/sse.ts) with fast-check.
 *
 * Streams are generated from a model (frames of data lines, comments, other fields, blank
 * lines, any line ending, an optional BOM), serialised to bytes and fed in random chunks;
 * the decoder must give exactly the model's frames. Arbitrary bytes must give a typed
 * DriverError or frames, never another exception, and the whole client must settle.
 *
 * Bounded for CI: AGENTICDRIVER_PROPERTY_RUNS (default 200 per property) raises the count
 * for a long run, e.g. `AGENTICDRIVER_PROPERTY_RUNS=20000 npx tsx --test test/client/sse-properties.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AgenticClient, DriverError } from '../../src/client/index.js';
import { SseFrameReader } from '../../src/client/sse.js';

const RUNS = Number(process.env.AGENTICDRIVER_PROPERTY_RUNS ?? 200);
const BOM = [0xef, 0xbb, 0xbf];
const DECODER_CODES = new Set(['INVALID_STREAM', 'RESPONSE_TOO_LARGE', 'INCOMPLETE_STREAM']);
const encoder = new TextEncoder();

type Ending = '\n' | '\r\n' | '\r';
/** One line of a frame: its text (no terminator) and, for data lines, the value it carries. */
interface Line {
  text: string;
  data?: string;
}
interface Model {
  bom: boolean;
  /** Each frame's lines; a frame is dispatched by the blank line after it. */
  frames: Line[][];
  /** Extra blank lines (heartbeats of nothing) after each frame. */
  gaps: number[];
}

// Line content: any characters but CR and LF (astral ones included, so chunks split UTF-8 sequences).
const lineText = fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => text.replace(/[\r\n]/g, ''));

const dataLine: fc.Arbitrary<Line> = fc.oneof(
  lineText.map((value) => ({ text: `data: ${value}`, data: value })),
  lineText.filter((value) => !value.startsWith(' ')).map((value) => ({ text: `data:${value}`, data: value })),
  // A bare field name is a data line with an empty value.
  fc.constant({ text: 'data', data: '' }),
  fc.constant({ text: 'data:', data: '' }),
);
const ignoredLine: fc.Arbitrary<Line> = fc.oneof(
  lineText.map((text) => ({ text: `:${text}` })), // comments and heartbeats
  fc.constant({ text: ': heartbeat' }),
  fc.constantFrom('event', 'id', 'retry', 'Data', 'DATA', 'datum', 'data ', 'dat', 'x-data').chain((field) =>
    lineText.map((value) => ({ text: `${field}:${value}` })),
  ),
  fc.constantFrom('event', 'id', 'datax', 'data-').map((field) => ({ text: field })),
);
const frameLines = fc.array(fc.oneof({ weight: 2, arbitrary: dataLine }, { weight: 1, arbitrary: ignoredLine }), { maxLength: 6 });
const model: fc.Arbitrary<Model> = fc
  .record({ bom: fc.boolean(), frames: fc.array(frameLines, { maxLength: 6 }) })
  .chain(({ bom, frames }) => fc.array(fc.nat(2), { minLength: frames.length, maxLength: frames.length }).map((gaps) => ({ bom, frames, gaps })));

function expected(value: Model): string[] {
  return value.frames
    .map((lines) => lines.filter((line) => line.data !== undefined).map((line) => line.data!))
    .filter((data) => data.length > 0)
    .map((data) => data.join('\n'));
}

/** The model's lines in order: '' is a blank line. */
function lines(value: Model): string[] {
  return value.frames.flatMap((frame, index) => [...frame.map((line) => line.text), '', ...Array<string>(value.gaps[index]!).fill('')]);
}

/**
 * Serialises with one ending per line. A CR ending followed by an empty line ending in LF
 * would read as one CRLF, so that LF becomes CRLF.
 */
function serialise(value: Model, endings: (index: number) => Ending): Uint8Array {
  let text = '';
  let previous: Ending | undefined;
  lines(value).forEach((line, index) => {
    let ending = endings(index);
    if (previous === '\r' && line === '' && ending === '\n') ending = '\r\n';
    text += line + ending;
    previous = ending;
  });
  const bytes = encoder.encode(text);
  return value.bom ? Uint8Array.from([...BOM, ...bytes]) : bytes;
}

/** Cuts bytes at the given offsets (sorted, deduplicated, within range). */
function chunk(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    pieces.push(bytes.subarray(start, point)); // empty pieces included: reads may be empty
    start = point;
  }
  return pieces;
}

function decode(pieces: Uint8Array[], maxFrameBytes?: number): string[] {
  const reader = new SseFrameReader(maxFrameBytes);
  const frames = pieces.flatMap((piece) => reader.push(piece));
  reader.end();
  return frames;
}

/** Frames delivered before the outcome, and the typed error code (or undefined). Rethrows anything untyped. */
function outcome(pieces: Uint8Array[], maxFrameBytes?: number): { frames: string[]; code: string | undefined } {
  const reader = new SseFrameReader(maxFrameBytes);
  const frames: string[] = [];
  try {
    for (const piece of pieces) frames.push(...reader.push(piece));
    reader.end();
    return { frames, code: undefined };
  } catch (error) {
    if (!(error instanceof DriverError) || !DECODER_CODES.has(error.code)) throw error;
    return { frames, code: error.code };
  }
}

const ending = fc.constantFrom<Ending>('\n', '\r\n', '\r');
const cuts = fc.array(fc.nat(), { maxLength: 12 });

describe('SSE decoder properties (fast-check)', () => {
  it('decodes any generated stream to the model frames, whatever the chunking', () => {
    fc.assert(
      fc.property(model, fc.array(ending, { minLength: 1, maxLength: 8 }), cuts, (value, endings, cutAt) => {
        const bytes = serialise(value, (index) => endings[index % endings.length]!);
        assert.deepEqual(decode([bytes]), expected(value));
        assert.deepEqual(decode(chunk(bytes, cutAt)), expected(value));
      }),
      { numRuns: RUNS },
    );
  });

  it('decodes a stream fed one byte at a time like the whole body', () => {
    fc.assert(
      fc.property(model, ending, (value, end) => {
        const bytes = serialise(value, () => end);
        assert.deepEqual(decode([...bytes].map((byte) => Uint8Array.of(byte))), decode([bytes]));
      }),
      { numRuns: RUNS },
    );
  });

  it('treats LF, CRLF and CR line endings alike', () => {
    fc.assert(
      fc.property(model, cuts, (value, cutAt) => {
        const [lf, crlf, cr] = (['\n', '\r\n', '\r'] as const).map((end) => decode(chunk(serialise(value, () => end), cutAt)));
        assert.deepEqual(crlf, lf);
        assert.deepEqual(cr, lf);
      }),
      { numRuns: RUNS },
    );
  });

  it('drops one leading BOM, even split across reads, and only at the start', () => {
    fc.assert(
      fc.property(model, ending, cuts, (value, end, cutAt) => {
        const plain = serialise({ ...value, bom: false }, () => end);
        const withBom = serialise({ ...value, bom: true }, () => end);
        assert.deepEqual(decode(chunk(withBom, cutAt)), decode([plain]));
        // A second BOM is content: it makes the first field name unknown (or the data value start with U+FEFF).
        const twice = Uint8Array.from([...BOM, ...BOM, ...encoder.encode(`data: x${end}${end}`)]);
        assert.deepEqual(decode(chunk(twice, cutAt)), []);
        const inValue = Uint8Array.from([...encoder.encode('data:'), ...BOM, ...encoder.encode(`x${end}${end}`)]);
        assert.deepEqual(decode(chunk(inValue, cutAt)), ['\uFEFFx']);
      }),
      { numRuns: RUNS },
    );
  });

  it('ignores comments, heartbeats, other fields and extra blank lines wherever they are inserted', () => {
    fc.assert(
      fc.property(model, fc.array(fc.tuple(fc.nat(), ignoredLine), { maxLength: 8 }), ending, (value, inserts, end) => {
        const noisy: Model = { ...value, frames: value.frames.map((frame) => [...frame]) };
        for (const [at, line] of inserts) {
          if (noisy.frames.length === 0) break;
          const frame = noisy.frames[at % noisy.frames.length]!;
          frame.splice(at % (frame.length + 1), 0, line);
        }
        assert.deepEqual(decode([serialise(noisy, () => end)]), expected(value));
      }),
      { numRuns: RUNS },
    );
  });

  it('fails arbitrary bytes only with a typed error, the same for any chunking', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      // Mostly SSE-shaped bytes, so the interesting paths are reached.
      fc
        .array(fc.constantFrom(...['data', ':', ' ', '\r', '\n', '\uFEFF', 'x', '\u00e9', '🌍'].map((part) => encoder.encode(part)), Uint8Array.of(0xff), Uint8Array.of(0xf0, 0x9f)), { maxLength: 40 })
        .map((parts) => Uint8Array.from(parts.flatMap((part) => [...part]))),
    );
    fc.assert(
      fc.property(bytes, cuts, fc.integer({ min: 1, max: 24 }), (body, cutAt, limit) => {
        const whole = outcome([body], limit);
        const split = outcome(chunk(body, cutAt), limit);
        assert.equal(split.code, whole.code);
        // A throwing push loses the frames of that read, so more pieces may deliver more before the error.
        assert.deepEqual(split.frames.slice(0, whole.frames.length), whole.frames);
        if (whole.code === undefined) assert.deepEqual(split.frames, whole.frames);
        for (const frame of split.frames) assert.ok(encoder.encode(frame).length <= limit);
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('a body that is only a BOM is an empty stream, like an empty body (regression)', () => {
    for (const pieces of [[Uint8Array.from(BOM)], BOM.map((byte) => Uint8Array.of(byte)), []]) {
      assert.deepEqual(decode(pieces), []);
    }
    // An unfinished BOM is not a BOM: bytes of an unfinished line.
    assert.equal(outcome([Uint8Array.of(0xef, 0xbb)]).code, 'INCOMPLETE_STREAM');
  });

  it('the client settles on any body with a run or a typed error, never anything else', async () => {
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 96 }),
      fc.array(fc.constantFrom('data: {"type":"run.started"}', 'data: {}', ': hb', '', 'data', '\uFEFF', 'data: [1,'), { maxLength: 8 }).map((parts) => encoder.encode(parts.join('\n'))),
    );
    await fc.assert(
      fc.asyncProperty(body, cuts, async (bytes, cutAt) => {
        const pieces = chunk(bytes, cutAt);
        const fetch = (async () =>
          new Response(
            new ReadableStream<Uint8Array>({
              start(controller) {
                for (const piece of pieces) controller.enqueue(piece);
                controller.close();
              },
            }),
            { status: 200, headers: { 'content-type': 'text/event-stream', 'agenticdriver-version': '1.0' } },
          )) as typeof globalThis.fetch;
        const client = new AgenticClient({ url: 'http://127.0.0.1:9', token: 'property-token', fetch });
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          client.run({ provider: 'mock', model: 'demo', input: 'Hello' }).then(
            () => 'resolved',
            (error: unknown) => error,
          ),
          new Promise((resolve) => (timer = setTimeout(() => resolve('hung'), 5_000))),
        ]);
        clearTimeout(timer);
        assert.ok(settled instanceof DriverError, `the client settled with ${String(settled)}`);
      }),
      { numRuns: Math.max(20, RUNS / 4) },
    );
  });
  it('delivers a generated valid run whole in any reads; the same run damaged or cut short fails with a typed stream error', async () => {
    const at = '2026-09-20T12:00:00.000Z';
    const deltas = fc.array(fc.tuple(lineText, fc.boolean()), { maxLength: 4 });
    const streamCodes = new Set(['INVALID_STREAM', 'INCOMPLETE_STREAM', 'RESPONSE_TOO_LARGE', 'UNSUPPORTED_EVENT']);
    const runBody = (parts: [string, boolean][], end: Ending): Uint8Array => {
      const events: Record<string, unknown>[] = [{ type: 'run.started', runId: 'r1', sequence: 1, timestamp: at, provider: 'mock', model: 'demo' }];
      for (const [text, optional] of parts) {
        if (optional) events.push({ type: 'x.future', optional: true, runId: 'r1', sequence: events.length + 1, timestamp: at });
        events.push({ type: 'text.delta', runId: 'r1', sequence: events.length + 1, timestamp: at, text });
      }
      const result = { runId: 'r1', provider: 'mock', model: 'demo', text: parts.map(([text]) => text).join(''), usage: {}, steps: 1, finishReason: 'stop' };
      events.push({ type: 'run.completed', runId: 'r1', sequence: events.length + 1, timestamp: at, result });
      return encoder.encode(events.map((event) => `: hb${end}data: ${JSON.stringify(event)}${end}${end}`).join(''));
    };
    const streamTypes = async (pieces: Uint8Array[]): Promise<string[]> => {
      const fetch = (async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (const piece of pieces) controller.enqueue(piece);
              controller.close();
            },
          }),
          { status: 200, headers: { 'content-type': 'text/event-stream', 'agenticdriver-version': '1.0' } },
        )) as typeof globalThis.fetch;
      const client = new AgenticClient({ url: 'http://127.0.0.1:9', token: 'property-token', fetch });
      const types: string[] = [];
      for await (const event of client.stream({ provider: 'mock', model: 'demo', input: 'Hello' })) types.push(event.type);
      return types;
    };
    await fc.assert(
      fc.asyncProperty(deltas, ending, cuts, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), fc.nat(), async (parts, end, cutAt, damage, cutOff) => {
        const body = runBody(parts, end);
        assert.deepEqual(await streamTypes(chunk(body, cutAt)), ['run.started', ...parts.map(() => 'text.delta'), 'run.completed']);
        const damaged = body.slice();
        for (const [where, byte] of damage) damaged[where % damaged.length] = byte;
        try {
          await streamTypes(chunk(damaged.subarray(0, cutOff % (damaged.length + 1)), cutAt));
        } catch (error) {
          assert.ok(error instanceof DriverError && streamCodes.has(error.code), `not a typed stream error: ${String(error)}`);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
