/**
 * Bearer tokens are looked up by their SHA-256 (one map read however many are configured): each
 * of many tokens finds its own principal, a near miss and a malformed header find none, a
 * reload's tokens replace the old ones at once, and two entries with one value are refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenAuthenticator, type TokenEntry } from '../../src/http/access.js';

const value = (index: number) => `token-${String(index).padStart(4, '0')}-abcdefghijklmnopqrstuvwxyz`;
const entry = (index: number): TokenEntry => ({ id: `t${index}`, subject: `s${index}`, tokenRef: { env: `TOKEN_${index}` }, providers: ['mock'] });
const envOf = (indexes: number[]) => Object.fromEntries(indexes.map((index) => [`TOKEN_${index}`, value(index)]));

async function load(indexes: number[], env = envOf(indexes)): Promise<TokenAuthenticator> {
  return TokenAuthenticator.load(indexes.map(entry), process.cwd(), {}, env);
}

describe('token lookup', () => {
  it('finds each of many tokens\' own principal, and none for a near miss or a malformed header', async () => {
    const indexes = Array.from({ length: 500 }, (_, index) => index);
    const tokens = await load(indexes);
    for (const index of [0, 1, 250, 499]) assert.equal(tokens.authenticate(`Bearer ${value(index)}`)?.subject, `s${index}`);
    assert.equal(tokens.authenticate(`bearer ${value(7)}`)?.tokenId, 't7', 'the scheme is case-insensitive');
    assert.equal(tokens.authenticate(`Bearer ${value(7)}x`), undefined);
    assert.equal(tokens.authenticate(`Bearer ${value(7).slice(1)}`), undefined);
    assert.equal(tokens.authenticate(value(7)), undefined);
    assert.equal(tokens.authenticate(undefined), undefined);
    assert.equal(tokens.principalOf('t42')?.subject, 's42');
  });

  it('sees a reload\'s tokens at once, and no longer the removed ones', async () => {
    const tokens = await load([1, 2]);
    tokens.adopt(await load([2, 3]));
    assert.equal(tokens.authenticate(`Bearer ${value(1)}`), undefined);
    assert.equal(tokens.authenticate(`Bearer ${value(2)}`)?.subject, 's2');
    assert.equal(tokens.authenticate(`Bearer ${value(3)}`)?.subject, 's3');
  });

  it('refuses two entries with the same value', async () => {
    await assert.rejects(load([1, 2], { TOKEN_1: value(1), TOKEN_2: value(1) }), { code: 'INVALID_CONFIG' });
  });
});
