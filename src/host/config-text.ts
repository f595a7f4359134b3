/**
 * Where in a config file's text a problem is: the line and column of a JSON syntax error, or
 * of the value a JSON pointer names. Loaded only when a config is wrong (or being edited).
 */
import { findNodeAtLocation, parse, parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';

export interface TextPosition {
  line: number;
  column: number;
}

/** Strict JSON: no comments, no trailing commas. */
export const STRICT_JSON = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false } as const;

const SYNTAX_PROBLEMS: Record<string, string> = {
  InvalidSymbol: 'an unexpected character',
  InvalidNumberFormat: 'a malformed number',
  PropertyNameExpected: 'a property name in double quotes was expected (a trailing comma?)',
  ValueExpected: 'a value was expected (a trailing comma?)',
  ColonExpected: 'a colon was expected',
  CommaExpected: 'a comma was expected',
  CloseBraceExpected: 'a closing } was expected',
  CloseBracketExpected: 'a closing ] was expected',
  EndOfFileExpected: 'the file should end here',
  InvalidCommentToken: 'JSON allows no comments',
  UnexpectedEndOfComment: 'JSON allows no comments',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number is cut off',
  InvalidUnicode: 'an invalid \\u escape',
  InvalidEscapeCharacter: 'an invalid escape in a string',
  InvalidCharacter: 'a control character inside a string',
};

/** 1-based line and column of a UTF-16 offset. */
export function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < offset && index < text.length; index += 1) {
    if (text.charCodeAt(index) === 10) {
      line += 1;
      lineStart = index + 1;
    }
  }
  return { line, column: Math.min(offset, text.length) - lineStart + 1 };
}

/** `line L, column C: what is wrong`, for text that is not strict JSON; undefined when it is. */
export function describeSyntaxError(text: string): string | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, STRICT_JSON);
  const first = errors[0];
  if (!first) return undefined;
  const { line, column } = positionOf(text, first.offset);
  const code = printParseErrorCode(first.error);
  return `line ${line}, column ${column}: ${SYNTAX_PROBLEMS[code] ?? code}`;
}

/** Where the value at a JSON pointer (`/providers/1/kind`) starts, or its nearest existing parent. */
export function locatePointer(text: string, pointer: string): TextPosition | undefined {
  const root = parseTree(text, [], STRICT_JSON);
  if (!root) return undefined;
  const segments = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
  for (let length = segments.length; length >= 0; length -= 1) {
    const node = findNodeAtLocation(root, segments.slice(0, length));
    if (node) return positionOf(text, node.parent?.type === 'property' ? node.parent.offset : node.offset);
  }
  return undefined;
}
