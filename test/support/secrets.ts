/** How the secret greps look for a secret: raw and in every encoding a leak could take. */

/** The forms a leaked secret could take in captured output, each long enough to be unambiguous. */
export function encodedForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), secret.replace(/\//g, '\\/')]);
  // base64 of the secret at each of the three byte alignments inside a longer value.
  for (let offset = 0; offset < 3; offset += 1) {
    for (const encoding of ['base64', 'base64url'] as const) {
      const encoded = Buffer.from('a'.repeat(offset) + secret).toString(encoding);
      forms.add(encoded.slice(offset === 0 ? 0 : 4, -4));
    }
  }
  return [...forms];
}
