/**
 * Stand-ins for pdf.js, imported inside the PDF worker thread in place of pdfjs-dist (the mode
 * is the import URL's `?mode=`): the real pdf.js with its document altered, or one that fails
 * the thread itself. Only tests use it.
 */
import * as real from 'pdfjs-dist/legacy/build/pdf.mjs';

const mode = new URL(import.meta.url).searchParams.get('mode');
if (mode === 'missing') throw new Error("Cannot find package 'pdfjs-dist'");

export const { VerbosityLevel, version } = real;

type Document = Record<string, unknown>;
const altered = (change: (document: Document) => void) => (options: Parameters<typeof real.getDocument>[0]) => {
  const task = real.getDocument(options);
  const promise = task.promise.then((document) => {
    change(document as unknown as Document);
    return document;
  });
  return { promise, destroy: () => task.destroy() };
};

const modes: Record<string, (options: Parameters<typeof real.getDocument>[0]) => unknown> = {
  'failing-page': altered((document) => {
    const getPage = (document.getPage as (n: number) => Promise<unknown>).bind(document);
    document.getPage = (n: number) => (n === 2 ? Promise.reject(new TypeError('glyph table exploded')) : getPage(n));
  }),
  'no-pages': altered((document) => Object.defineProperty(document, 'numPages', { value: 0 })),
  // pdf.js stuck in a synchronous loop: only terminating the thread stops it.
  spin: () => {
    for (;;);
  },
  exit: () => process.exit(7),
  'uncaught-throw': () => {
    setImmediate(() => {
      throw new Error('pdf.js blew up outside any promise');
    });
    return { promise: new Promise(() => {}), destroy: () => Promise.resolve() };
  },
  'out-of-memory': () => {
    const hoard: number[][] = [];
    for (;;) hoard.push(Array.from({ length: 10_000 }, (_, i) => i * 1.5));
  },
};

export const getDocument = modes[mode ?? ''] ?? real.getDocument;

