import type { Segment } from './segment.js';

export const PLAIN_TEXT_EXTRACTOR = { id: 'plain-text', version: '1' } as const;

/** Plain text is one segment; `lineOffset` shifts its line numbers. */
export function plainTextSegments(text: string, lineOffset: number): Segment[] {
  return [{ location: {}, text, firstLine: 1 + lineOffset }];
}
