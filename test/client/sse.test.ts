/** The TypeScript client's SSE framing: every split of a tricky body gives the same frames; each malformed body its code. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_FRAME_BYTES, SseFrameReader } from '../../src/client/sse.js';

function decode(body: Uint8Array, width: number, max?: number): string[] {
  const reader = new SseFrameReader(max);
  const frames: string[] = [];
  for (let offset = 0; offset < body.length; offset += width) frames.push(...reader.push(body.subarray(offset, offset + width)));
  reader.end();
  return frames;
}
const bytes = (text: string) => new TextEncoder().encode(text);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return 'no error';
};

describe('client SSE framing', () => {
  it('gives the same frames for every split of CR, LF, CRLF, a BOM, comments and multi-line data', () => {
    const body = bytes('\ufeff: comment\r\nid: 1\r\ndata: {"a":\r\ndata:"🌍"}\r\n\r\nevent: x\rdata: 2\r\rdata:3\n\ndata\ndatum: no\ndata:  two spaces\n\n: only a comment\n\n');
    for (let width = 1; width <= body.length; width += 1) {
      assert.deepEqual(decode(body, width), ['{"a":\n"🌍"}', '2', '3', '\n two spaces'], `width ${width}`);
    }
  });

  it('keeps a BOM that is not at the start, and a first line that only looks like one', () => {
    assert.deepEqual(decode(bytes('data: a\ufeff\n\n'), 3), ['a\ufeff']);
    assert.deepEqual(decode(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('data: x\n\n')]), 1), ['x']);
  });

  it('fails malformed bodies with their codes', () => {
    assert.equal(codeOf(() => decode(new Uint8Array([...bytes('data: '), 0xff, 0x0a, 0x0a]), 3)), 'INVALID_STREAM');
    assert.equal(codeOf(() => decode(new Uint8Array([...bytes('data: '), 0xf0, 0x9f, 0x0a, 0x0a]), 2)), 'INVALID_STREAM');
    assert.equal(codeOf(() => decode(bytes('data: {}'), 3)), 'INCOMPLETE_STREAM');
    assert.equal(codeOf(() => decode(bytes('data: {}\n'), 3)), 'INCOMPLETE_STREAM');
  });

  it('caps a frame in UTF-8 bytes, field names and comments included, whether or not its line is finished', () => {
    const max = 64;
    const line = (n: number) => `data: ${'é'.repeat(n)}`; // 6 + 2n bytes
    assert.deepEqual(decode(bytes(`${line(29)}\n\n`), 7, max), ['é'.repeat(29)]); // 64 bytes: fits
    assert.equal(codeOf(() => decode(bytes(`: c\n${line(29)}\n\n`), 7, max)), 'RESPONSE_TOO_LARGE'); // the comment counts
    assert.equal(codeOf(() => decode(bytes(line(31)), 100, max)), 'RESPONSE_TOO_LARGE'); // unfinished line (the first line may carry a BOM on top)
    assert.equal(MAX_FRAME_BYTES, 2_000_000);
  });

  it('counts a frame exactly whatever the reads: a cap at the largest frame passes, one byte less fails', () => {
    // Small frames, then one of five lines of 2-, 3- and 4-byte characters (15 bytes each without
    // terminators, 75 in all), so that reads end frames and carry the next one's lines in every way.
    const line = 'data: é€😀';
    const body = bytes(`${'data: a\n\n'.repeat(4)}${`${line}\n`.repeat(5)}\n`);
    const cap = 5 * bytes(line).length;
    assert.equal(cap, 75);
    for (let width = 1; width <= body.length; width += 1) {
      assert.deepEqual(decode(body, width, cap), ['a', 'a', 'a', 'a', Array(5).fill('é€😀').join('\n')], `width ${width}`);
      assert.equal(codeOf(() => decode(body, width, cap - 1)), 'RESPONSE_TOO_LARGE', `width ${width}`);
    }
  });
});
