/**
 * Citation check: the `[source:ID]` references a model wrote into a run result must name
 * sources the result lists. It checks identity only, never whether the source supports the text.
 *
 * Grammar (the same in every client): every occurrence of the literal `[source:` opens a
 * citation; it must be followed by an ID and `]`. ID is the wire's OpaqueKey syntax,
 * `[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}`. Anything else after `[source:` (an empty or longer
 * ID, a forbidden character, no `]`) is a malformed citation. Scanned: `result.text`, then
 * each artifact's `content` in order.
 */
import { DriverError } from '../protocol/errors.js';
import type { RunResult } from '../protocol/schemas.js';

export type SourceManifest = NonNullable<RunResult['sources']>[number];

const OPEN = '[source:';
const ID = /^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$/;

/** The cited IDs of one text, in order; throws INVALID_CITATION on a malformed citation. */
export function citedIds(text: string): string[] {
  const ids: string[] = [];
  for (let at = text.indexOf(OPEN); at !== -1; at = text.indexOf(OPEN, at + OPEN.length)) {
    const start = at + OPEN.length;
    const end = text.indexOf(']', start);
    const id = end === -1 ? '' : text.slice(start, end);
    if (!ID.test(id)) throw new DriverError('INVALID_CITATION', `Malformed citation at offset ${at}: [source: must be followed by an id ([a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}) and ].`);
    ids.push(id);
  }
  return ids;
}

/**
 * Checks every `[source:ID]` in the result's text and artifact contents against
 * `result.sources[].id`. Returns the cited source manifests in order of first citation;
 * an unknown or malformed citation → INVALID_CITATION.
 */
export function checkCitations(result: Pick<RunResult, 'text' | 'sources' | 'artifacts'>): SourceManifest[] {
  const byId = new Map((result.sources ?? []).map((source) => [source.id, source]));
  const cited = new Map<string, SourceManifest>();
  for (const text of [result.text, ...(result.artifacts ?? []).map((artifact) => artifact.content)]) {
    for (const id of citedIds(text)) {
      const source = byId.get(id);
      if (!source) throw new DriverError('INVALID_CITATION', `The result cites [source:${id}], which is not one of its sources.`);
      if (!cited.has(id)) cited.set(id, source);
    }
  }
  return [...cited.values()];
}
