/** Real PDFs for the tests and the benchmark, written with pdf-lib. */
import { createHash } from 'node:crypto';
import { PDFDocument, PDFHexString, StandardFonts } from 'pdf-lib';

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
