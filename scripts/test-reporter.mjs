// The node:test reporter of `npm test`: node's spec reporter, but what a test file prints (the
// JSON log lines of the hosts it starts, mostly) is held back and shown only when one of that
// file's tests fails — then all of it, from the start, and what the file prints afterwards.
import { resolve } from 'node:path';
import { Transform } from 'node:stream';
import { spec as Spec } from 'node:test/reporters';

export default class HeldOutputReporter extends Transform {
  #spec = new Spec();
  /** file -> its output events not shown yet */
  #held = new Map();
  /** files with a failed test: their output passes through */
  #failing = new Set();

  constructor() {
    super({ writableObjectMode: true });
    this.#spec.on('data', (chunk) => this.push(chunk));
  }

  _transform(event, _encoding, done) {
    // Node 24 names a file relative to the working directory in output events and absolute in
    // test events; both are keyed by the absolute path.
    const file = event.data?.file && resolve(event.data.file);
    if ((event.type === 'test:stdout' || event.type === 'test:stderr') && file && !this.#failing.has(file)) {
      this.#held.set(file, [...(this.#held.get(file) ?? []), event]);
      return done();
    }
    if (event.type === 'test:fail' && file && !this.#failing.has(file)) {
      this.#failing.add(file);
      const held = this.#held.get(file) ?? [];
      this.#held.delete(file);
      if (held.length > 0) {
        this.#spec.write({ type: 'test:stdout', data: { file, message: `\n--- what ${file} printed (shown because a test in it failed):\n` } });
        for (const output of held) this.#spec.write(output);
        this.#spec.write({ type: 'test:stdout', data: { file, message: `--- end of what ${file} printed\n` } });
      }
    }
    // A file that finished without a failure: its output is dropped.
    if (event.type === 'test:complete' && file && event.data.nesting === 0 && resolve(event.data.name) === file) this.#held.delete(file);
    this.#spec.write(event);
    done();
  }

  _flush(done) {
    this.#spec.once('end', () => done());
    this.#spec.end();
  }
}
