/**
 * Server-sent events framing over raw bytes: LF, CRLF and lone CR line endings (also split
 * across chunks), a leading UTF-8 BOM, comments, multi-line `data`. Frames are capped in
 * UTF-8 bytes (field names and comments included, terminators and BOM excluded).
 */
import { DriverError } from '../protocol/errors.js';

export const MAX_FRAME_BYTES = 2_000_000;

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

export class SseFrameReader {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private partial: Uint8Array[] = [];
  private partialBytes = 0;
  private frameBytes = 0;
  private dataLines: string[] = [];
  private afterCR = false;
  private firstLine = true;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Feeds bytes; returns the `data` payload of every frame they complete. */
  push(chunk: Uint8Array): string[] {
    const frames: string[] = [];
    let start = 0;
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index]!;
      if (byte !== LF && byte !== CR) continue;
      if (byte === LF && this.afterCR && index === start) {
        // The LF of a CRLF pair whose CR ended the previous line (possibly in the previous chunk).
        this.afterCR = false;
        start = index + 1;
        continue;
      }
      this.appendPartial(chunk.subarray(start, index));
      const frame = this.endLine();
      if (frame !== undefined) frames.push(frame);
      this.afterCR = byte === CR;
      start = index + 1;
    }
    if (start < chunk.length) {
      this.afterCR = false;
      this.appendPartial(chunk.subarray(start));
    }
    return frames;
  }

  /** Call at end of body: a partial line or undispatched data means the stream was cut. */
  end(): void {
    // A body that is only a BOM is an empty stream: the BOM is not the start of a line.
    const pending = this.firstLine && this.partialBytes === BOM.length ? concat(this.partial, this.partialBytes) : undefined;
    const onlyBom = pending !== undefined && BOM.every((value, index) => pending[index] === value);
    if ((this.partialBytes > 0 && !onlyBom) || this.dataLines.length > 0) {
      throw new DriverError('INCOMPLETE_STREAM', 'The event stream ended inside an unfinished frame.');
    }
  }

  private appendPartial(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.partial.push(bytes.slice());
    this.partialBytes += bytes.length;
    if (this.frameBytes + this.partialBytes > this.maxFrameBytes + (this.firstLine ? BOM.length : 0)) {
      throw new DriverError('RESPONSE_TOO_LARGE', `An event frame is larger than ${this.maxFrameBytes} bytes.`);
    }
  }

  /** Completes the buffered line; returns a frame's data when the line was blank. */
  private endLine(): string | undefined {
    let bytes = concat(this.partial, this.partialBytes);
    this.partial = [];
    this.partialBytes = 0;
    if (this.firstLine) {
      this.firstLine = false;
      if (BOM.every((value, index) => bytes[index] === value)) bytes = bytes.subarray(BOM.length);
    }
    if (bytes.length === 0) return this.dispatch();
    this.frameBytes += bytes.length;
    if (this.frameBytes > this.maxFrameBytes) {
      throw new DriverError('RESPONSE_TOO_LARGE', `An event frame is larger than ${this.maxFrameBytes} bytes.`);
    }
    let line: string;
    try {
      line = this.decoder.decode(bytes);
    } catch {
      throw new DriverError('INVALID_STREAM', 'The event stream is not valid UTF-8.');
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data') return undefined;
    const value = colon === -1 ? '' : line.slice(colon + 1);
    this.dataLines.push(value.startsWith(' ') ? value.slice(1) : value);
    return undefined;
  }

  private dispatch(): string | undefined {
    this.frameBytes = 0;
    if (this.dataLines.length === 0) return undefined;
    const data = this.dataLines.join('\n');
    this.dataLines = [];
    return data;
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}
