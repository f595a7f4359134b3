/**
 * The one text analysis both engines' lexical search uses, so that SQLite and PostgreSQL index
 * and match exactly the same terms: lower case, compatibility-decomposed with the marks removed
 * (`Café` → `cafe`), runs of letters and digits, camelCase words also split into their parts
 * (`certFile` → `certfile`, `cert`, `file`), each stemmed with the Porter stemmer (`configured`,
 * `configuring` → `configur`) and cut at 64 characters.
 */
import { stemmer } from 'stemmer';

const MAX_TERM_CHARS = 64;
const WORDS = /[\p{L}\p{N}]+/gu;
/** A lower-case letter or digit followed by an upper-case letter: a camelCase boundary. */
const CAMEL = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})/u;

/**
 * Function words and the words of question phrasing ("how do I …", "what is the …"): left out
 * of a query (never of a passage), so that they do not outrank the rare term that carries its
 * meaning. English only; a query of nothing but these keeps them all.
 */
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can cannot could did do does doing done down during each either else ever every few for from further get gets getting got had has have having ' +
    'he her here hers herself him himself his how i if in into is it its itself just let lets may me might more most must my myself need needs ' +
    'no nor not now of off on once one only or other ought our ours ourselves out over own please same shall she should so some such than that ' +
    'the their theirs them themselves then there these they this those through to too under until up upon us very was way we were what ' +
    'whatever when where whether which while who whom whose why will with within without would yes yet you your yours yourself yourselves'
  ).split(' '),
);

function stem(word: string): string {
  const term = /^\p{N}+$/u.test(word) ? word : stemmer(word);
  return term.length > MAX_TERM_CHARS ? term.slice(0, MAX_TERM_CHARS) : term;
}

function fold(word: string): string {
  return word.toLowerCase().normalize('NFKD').replace(/\p{M}+/gu, '');
}

/** Every term of a text in order, repeats included (a passage's term frequencies come from these). */
export function textTerms(text: string): string[] {
  const terms: string[] = [];
  for (const [word] of text.normalize('NFKC').matchAll(WORDS)) {
    const parts = word.split(CAMEL);
    for (const part of parts.length > 1 ? [word, ...parts] : [word]) {
      for (const [piece] of fold(part).matchAll(WORDS)) terms.push(stem(piece));
    }
  }
  return terms;
}

/** A passage's term frequencies and its length in terms (what BM25 reads). */
export function termFrequencies(text: string): { length: number; frequencies: Map<string, number> } {
  const terms = textTerms(text);
  const frequencies = new Map<string, number>();
  for (const term of terms) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
  return { length: terms.length, frequencies };
}

/** A query's distinct terms without stop words (all of them when nothing else is left), at most `max`. */
export function queryTerms(query: string, max: number): string[] {
  const all = new Set<string>();
  const content = new Set<string>();
  for (const [word] of query.normalize('NFKC').matchAll(WORDS)) {
    const stop = STOP_WORDS.has(fold(word));
    for (const term of textTerms(word)) {
      all.add(term);
      if (!stop) content.add(term);
    }
  }
  return [...(content.size > 0 ? content : all)].slice(0, max);
}
