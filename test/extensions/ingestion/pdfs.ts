/** Real PDFs for the tests and the benchmark, written with pdf-lib (and zlib for the hostile ones). */
import { createHash } from 'node:crypto';
import { constants, deflateRawSync } from 'node:zlib';
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, StandardFonts } from 'pdf-lib';

/** One page per entry; each page's lines are drawn top-down; an empty array is a page with no text. */
export async function makePdf(pages: string[][]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = document.addPage([612, 792]);
    lines.forEach((line, index) => page.drawText(line, { x: 50, y: 740 - index * 14, size: 11, font }));
  }
  return document.save({ useObjectStreams: false });
}

const PASSWORD_PADDING = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');

function rc4(key: Uint8Array, data: Uint8Array): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let k = 0, i = 0, j = 0; k < data.length; k++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[k] = data[k]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

/**
 * A PDF with a standard security handler (revision 2, RC4 40-bit). `openable`: the user
 * password is empty (any reader opens it); otherwise it needs a password nobody knows.
 */
export async function makeEncryptedPdf(openable: boolean): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage().drawText('Secret text', { x: 50, y: 700, size: 12, font });
  const id = Buffer.alloc(16, 0xab);
  const owner = Buffer.alloc(32, 0x5a);
  const permissions = -4;
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const key = createHash('md5').update(Buffer.concat([PASSWORD_PADDING, owner, p, id])).digest().subarray(0, 5);
  const user = openable ? rc4(key, PASSWORD_PADDING) : Buffer.alloc(32, 0x11);
  const encrypt = document.context.obj({
    Filter: 'Standard',
    V: 1,
    R: 2,
    O: PDFHexString.of(owner.toString('hex')),
    U: PDFHexString.of(user.toString('hex')),
    P: permissions,
  });
  document.context.trailerInfo.Encrypt = document.context.register(encrypt);
  document.context.trailerInfo.ID = document.context.obj([PDFHexString.of(id.toString('hex')), PDFHexString.of(id.toString('hex'))]);
  return document.save({ useObjectStreams: false });
}

const MIB = 1024 * 1024;

/**
 * A zlib stream of `mib` MiB of one byte value, about 1 KiB per MiB: one deflate block of 1 MiB
 * of it, flushed so it does not refer back, repeated; then the final block and the Adler-32 of
 * the whole.
 */
export function deflatedRun(mib: number, byte: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(MIB, byte), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const length = BigInt(mib) * BigInt(MIB);
  const value = BigInt(byte);
  const a = (1n + value * length) % 65521n;
  const b = (length + (value * length * (length + 1n)) / 2n) % 65521n;
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(Number((b << 16n) | a));
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array.from({ length: mib }, () => block), Buffer.from([0x03, 0x00]), trailer]);
}

/**
 * A decompression bomb: one page with real text and a second content stream of `mib` MiB of
 * white space in about `mib` KiB. `predictor`: NUL bytes behind a PNG predictor (rows of 1,024
 * with predictor 0), which pdf.js decodes synchronously with its own inflate; without, spaces
 * that it inflates through DecompressionStream.
 */
export async function makeBombPdf(mib: number, options: { predictor?: boolean; text?: string } = {}): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  const page = document.addPage([612, 792]);
  page.drawText(options.text ?? 'A page before the bomb', { x: 50, y: 740, size: 11, font });
  const data = options.predictor ? deflatedRun(mib, 0) : deflatedRun(mib, 0x20);
  const dict = document.context.obj({
    Filter: 'FlateDecode',
    Length: data.length,
    ...(options.predictor ? { DecodeParms: { Predictor: 12, Columns: 1023 } } : {}),
  });
  const bomb = document.context.register(PDFRawStream.of(dict, data));
  page.node.addContentStream(bomb);
  return document.save({ useObjectStreams: false });
}

/**
 * A PDF pdf.js takes long over: `pages` pages, each with `operators` text-showing operators
 * of one glyph (compressed, so the file stays small).
 */
export async function makeSlowPdf(pages: number, operators: number): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let index = 0; index < pages; index++) {
    const page = document.addPage([612, 792]);
    page.drawText(`Slow page ${index + 1}`, { x: 50, y: 740, size: 11, font });
    const fonts = page.node.normalizedEntries().Resources.lookup(PDFName.of('Font'), PDFDict);
    const ops = `BT ${fonts.keys()[0]!.asString()} 11 Tf 50 700 Td ${'(x) Tj 1 0 Td '.repeat(operators)}ET`;
    page.node.addContentStream(document.context.register(document.context.flateStream(ops)));
  }
  return document.save({ useObjectStreams: false });
}
