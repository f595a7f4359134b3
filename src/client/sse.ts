/**
 * Server-sent events framing over raw bytes: LF, CRLF and lone CR line endings (also split
 * across chunks), a leading UTF-8 BOM, comments, multi-line `data`. Frames are capped in
 * UTF-8 bytes (field names and comments included, terminators and BOM excluded).
 *
 * Each read is handled in bulk: the complete lines of a read are decoded in one call and
 * only an unfinished last line is carried to the next read. A read too short to take any
 * frame past the cap is split on its text alone; otherwise line ends are found on the bytes
 * too, so that each line is counted against the cap as it comes.
 */
import { DriverError } from '../protocol/errors.js';

export const MAX_FRAME_BYTES = 2_000_000;

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];
const EMPTY = new Uint8Array(0);

export class SseFrameReader {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** Bytes of an unfinished line, carried to the next read. */
  private pending: Uint8Array = EMPTY;
  private frameBytes = 0;
  private data: string | undefined = undefined;
  private afterCR = false;
  private firstLine = true;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Feeds bytes; returns the `data` payload of every frame they complete. */
  push(chunk: Uint8Array): string[] {
    const frames: string[] = [];
    let bytes = chunk;
    if (this.pending.length > 0) {
      bytes = new Uint8Array(this.pending.length + chunk.length);
      bytes.set(this.pending, 0);
      bytes.set(chunk, this.pending.length);
      this.pending = EMPTY;
    }
    let start = 0;
    if (this.afterCR && bytes.length > 0) {
      // The LF of a CRLF pair whose CR ended the previous read's last line.
      if (bytes[0] === LF) start = 1;
      this.afterCR = false;
    }
    // A CR ends the last line only when it comes after the last LF: look for one only there.
    const lastLF = bytes.lastIndexOf(LF);
    const lastCR = bytes.subarray(lastLF + 1).lastIndexOf(CR);
    const last = lastCR === -1 ? lastLF : lastLF + 1 + lastCR;
    if (last >= start) {
      let text: string;
      try {
        // Streaming mode is the fast path of Node's decoder; the bytes end with a line
        // terminator, so no partial sequence is ever carried in it.
        text = this.decoder.decode(bytes.subarray(start, last + 1), { stream: true });
      } catch {
        this.linesOneByOne(bytes, start, last + 1, frames);
        throw invalidUtf8();
      }
      this.lines(bytes, start, last + 1, text, frames);
      start = last + 1;
    }
    if (start < bytes.length) {
      this.pending = bytes.slice(start);
      if (this.frameBytes + this.pending.length > this.maxFrameBytes + (this.firstLine ? BOM.length : 0)) {
        throw this.oversized(this.pending);
      }
    }
    return frames;
  }

  /**
   * The slow path for a read that is not valid UTF-8: line by line, so the fault reported
   * is the first in the stream (an earlier line's, or the cap before a bad byte) whatever
   * the chunking.
   */
  private linesOneByOne(bytes: Uint8Array, from: number, to: number, frames: string[]): void {
    let b = from;
    while (b < to) {
      let end = b;
      while (bytes[end] !== LF && bytes[end] !== CR) end++;
      const next = bytes[end] === CR && end + 1 < to && bytes[end + 1] === LF ? end + 2 : end + 1;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(b, next));
      } catch {
        throw this.oversized(bytes.subarray(b, end));
      }
      this.lines(bytes, b, next, text, frames);
      b = next;
    }
  }

  /**
   * The fault of a line that is not valid UTF-8 or does not fit the frame: whichever comes
   * first in the stream, a byte that is not UTF-8 or the byte past the cap.
   */
  private oversized(line: Uint8Array): DriverError {
    const bom = this.firstLine && hasBom(line, 0, line.length) ? BOM.length : 0;
    const room = bom + this.maxFrameBytes - this.frameBytes;
    if (line.length <= room || !isUtf8Prefix(line.subarray(0, room))) return invalidUtf8();
    return new DriverError('RESPONSE_TOO_LARGE', `An event frame is larger than ${this.maxFrameBytes} bytes.`);
  }

  /** Call at end of body: a partial line or undispatched data means the stream was cut. */
  end(): void {
    // A body that is only a BOM is an empty stream: the BOM is not the start of a line.
    const onlyBom = this.firstLine && this.pending.length === BOM.length && hasBom(this.pending, 0, BOM.length);
    if ((this.pending.length > 0 && !onlyBom) || this.data !== undefined) {
      throw new DriverError('INCOMPLETE_STREAM', 'The event stream ended inside an unfinished frame.');
    }
  }

  /**
   * The complete lines of `bytes[from, to)` (which ends with a line terminator) and the
   * same lines decoded as `text`: terminators are ASCII, so both hold them in the same order.
   */
  private lines(bytes: Uint8Array, from: number, to: number, text: string, frames: string[]): void {
    if (text.indexOf('\r') === -1) {
      this.lfLines(bytes, from, to, text, frames);
      return;
    }
    let b = from;
    let t = 0;
    let bLF = bytes.indexOf(LF, b);
    let bCR = bytes.indexOf(CR, b);
    let tLF = text.indexOf('\n');
    let tCR = text.indexOf('\r');
    while (b < to) {
      if (bLF !== -1 && bLF < b) bLF = bytes.indexOf(LF, b);
      if (bCR !== -1 && bCR < b) bCR = bytes.indexOf(CR, b);
      if (tLF !== -1 && tLF < t) tLF = text.indexOf('\n', t);
      if (tCR !== -1 && tCR < t) tCR = text.indexOf('\r', t);
      const bEnd = bCR !== -1 && (bLF === -1 || bCR < bLF) ? bCR : bLF;
      const tEnd = tCR !== -1 && (tLF === -1 || tCR < tLF) ? tCR : tLF;
      const bom = this.openingBom(bytes, b, bEnd);
      const frame = this.line(text, bom === 0 ? t : t + 1, tEnd, bEnd - b - bom);
      if (frame !== undefined) frames.push(frame);
      if (bytes[bEnd] === CR) {
        if (bEnd + 1 < to) {
          const crlf = bytes[bEnd + 1] === LF;
          b = bEnd + (crlf ? 2 : 1);
          t = tEnd + (crlf ? 2 : 1);
        } else {
          this.afterCR = true;
          b = bEnd + 1;
          t = tEnd + 1;
        }
      } else {
        b = bEnd + 1;
        t = tEnd + 1;
      }
    }
  }

  /**
   * `lines` for the usual text without CR. A read that cannot make any frame reach the cap is
   * split on the text alone, and the bytes of the frame it leaves open are counted once, at
   * its end; otherwise each line is counted as it is found.
   */
  private lfLines(bytes: Uint8Array, from: number, to: number, text: string, frames: string[]): void {
    if (!this.firstLine && this.frameBytes + (to - from) <= this.maxFrameBytes) {
      let t = 0;
      let open = 0;
      let openLines = 0;
      while (t < text.length) {
        const end = text.indexOf('\n', t);
        if (end === t) {
          const frame = this.dispatch();
          if (frame !== undefined) frames.push(frame);
          open = end + 1;
          openLines = 0;
        } else {
          this.field(text, t, end);
          openLines++;
        }
        t = end + 1;
      }
      // The open frame's lines, terminators excluded: every byte of the read when no frame ended in it.
      this.frameBytes = open === 0 ? this.frameBytes + (to - from) - openLines : utf8Length(text, open, text.length) - openLines;
      return;
    }
    let b = from;
    let t = 0;
    while (b < to) {
      const bEnd = bytes.indexOf(LF, b);
      const tEnd = text.indexOf('\n', t);
      const bom = this.openingBom(bytes, b, bEnd);
      const frame = this.line(text, bom === 0 ? t : t + 1, tEnd, bEnd - b - bom);
      if (frame !== undefined) frames.push(frame);
      b = bEnd + 1;
      t = tEnd + 1;
    }
  }

  /** The length of a BOM opening the stream's first line (0 otherwise); only the first line may have one. */
  private openingBom(bytes: Uint8Array, at: number, end: number): number {
    if (!this.firstLine) return 0;
    this.firstLine = false;
    return hasBom(bytes, at, end) ? BOM.length : 0;
  }

  /** One complete line of `lineBytes` bytes (terminator excluded); returns a frame's data when the line was blank. */
  private line(text: string, start: number, end: number, lineBytes: number): string | undefined {
    if (lineBytes === 0) return this.dispatch();
    this.frameBytes += lineBytes;
    if (this.frameBytes > this.maxFrameBytes) {
      throw new DriverError('RESPONSE_TOO_LARGE', `An event frame is larger than ${this.maxFrameBytes} bytes.`);
    }
    this.field(text, start, end);
    return undefined;
  }

  /** A blank line: ends the frame, returning its data if it had any. */
  private dispatch(): string | undefined {
    this.frameBytes = 0;
    const data = this.data;
    this.data = undefined;
    return data;
  }

  /** A field or comment line: only `data` is kept. */
  private field(text: string, start: number, end: number): void {
    if (end - start < 4 || !text.startsWith('data', start)) return;
    const after = start + 4;
    let value: string;
    if (after === end) value = '';
    else if (text.charCodeAt(after) !== 58 /* : */) return;
    else value = text.slice(text.charCodeAt(after + 1) === 32 && after + 1 < end ? after + 2 : after + 1, end);
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }
}

/** The UTF-8 length of `text[from, to)`, text decoded from valid UTF-8 (so without lone surrogates). */
function utf8Length(text: string, from: number, to: number): number {
  let bytes = to - from;
  for (let i = from; i < to; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit < 0xdc00) {
      // A surrogate pair: two units, four bytes.
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

function invalidUtf8(): DriverError {
  return new DriverError('INVALID_STREAM', 'The event stream is not valid UTF-8.');
}

/** Whether the bytes are valid UTF-8, allowing a sequence cut short at the end. */
function isUtf8Prefix(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Whether `bytes[at, end)` starts with a UTF-8 BOM. */
function hasBom(bytes: Uint8Array, at: number, end: number): boolean {
  return end - at >= BOM.length && bytes[at] === BOM[0] && bytes[at + 1] === BOM[1] && bytes[at + 2] === BOM[2];
}
