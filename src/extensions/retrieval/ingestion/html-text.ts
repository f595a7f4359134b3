/**
 * HTML mail bodies as plain text for indexing: tags dropped, blocks and line breaks kept as
 * newlines, script/style/head skipped, entities decoded. One linear pass (no backtracking
 * regular expressions over untrusted markup).
 */

const BLOCKS = new Set([
  'p', 'div', 'br', 'tr', 'table', 'ul', 'ol', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'blockquote', 'pre', 'hr', 'section', 'article', 'header', 'footer', 'dt', 'dd',
]);
const SKIPPED = new Set(['script', 'style', 'head', 'title', 'template']);
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', copy: '©' };
const TAG_START = /[a-zA-Z/!?]/;

export function htmlToText(html: string): string {
  const lower = html.toLowerCase();
  let out = '';
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf('<', i);
    if (open < 0) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, open);
    if (!TAG_START.test(html.charAt(open + 1))) {
      out += '<';
      i = open + 1;
      continue;
    }
    if (lower.startsWith('<!--', open)) {
      const end = html.indexOf('-->', open + 4);
      i = end < 0 ? html.length : end + 3;
      continue;
    }
    const close = html.indexOf('>', open);
    if (close < 0) break; // an unterminated tag ends the text
    const closing = html.charAt(open + 1) === '/';
    const name = /^[a-z0-9]+/.exec(lower.slice(open + (closing ? 2 : 1), Math.min(close, open + 16)))?.[0] ?? '';
    i = close + 1;
    if (!closing && SKIPPED.has(name)) {
      const end = lower.indexOf(`</${name}`, i);
      const after = end < 0 ? -1 : html.indexOf('>', end);
      i = after < 0 ? html.length : after + 1;
      continue;
    }
    if (name === 'li') out += closing ? '' : '\n- ';
    else if (BLOCKS.has(name)) out += '\n';
    else if (name === 'td' || name === 'th') out += ' ';
  }
  return decodeEntities(out)
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (entity, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
      return valid ? String.fromCodePoint(code) : '';
    }
    return NAMED[body.toLowerCase()] ?? entity;
  });
}
