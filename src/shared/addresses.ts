/**
 * Loopback and origin rules (spec decisions 7 and 8). No DNS lookup ever decides them.
 * Browser-safe (no Node modules): the TypeScript client applies the same loopback rule to
 * base URLs (src/client/base-url.ts), as the Python, Go and Rust clients do
 * (protocol/fixtures/base-url.json).
 */

/**
 * `localhost`, a dotted-quad `127.0.0.0/8` literal, `::1` and `::ffff:127.x.y.z` (also written
 * `::ffff:7fxx:xxxx`), with or without IPv6 brackets. Only literals count: a name, an IPv4
 * shorthand (`127.1`, `0x7f.0.0.1`) or a zone id is not loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  const v4 = ipv4Octets(bare);
  if (v4) return v4[0] === 127;
  const v6 = ipv6Hextets(bare);
  if (!v6) return false;
  const leadingZeros = v6.slice(0, 5).every((hextet) => hextet === 0);
  if (leadingZeros && v6[5] === 0 && v6[6] === 0 && v6[7] === 1) return true;
  return leadingZeros && v6[5] === 0xffff && v6[6]! >> 8 === 127;
}

/** The four octets of a dotted-quad IPv4 literal (decimal, no leading zeros), or undefined. */
function ipv4Octets(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part))) return undefined;
  const octets = parts.map(Number);
  return octets.every((octet) => octet <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 literal without a zone id, or undefined. */
function ipv6Hextets(text: string): number[] | undefined {
  if (!text.includes(':') || !/^[0-9a-f:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string, final: boolean): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (const [index, part] of parts.entries()) {
      const v4 = final && index === parts.length - 1 && part.includes('.') ? ipv4Octets(part) : undefined;
      if (v4) out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      else if (/^[0-9a-f]{1,4}$/.test(part)) out.push(parseInt(part, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groups(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}

/** `scheme://host[:port]` for a valid origin string, or undefined when it is not an origin. */
export function normalizeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  if (url.pathname !== '/') return undefined;
  return url.origin;
}
