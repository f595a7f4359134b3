/**
 * API-equivalent cost: what a run's tokens would cost at a vendor's list price. Always a
 * labelled estimate, computed only from complete token totals. The operator's table (host
 * config `usage.prices`) wins over the small built-in one, entry by entry.
 */
import type { ApiEquivalentCost } from './usage-record.js';
import type { Usage } from './types.js';

export interface ModelPrice {
  vendor: string;
  model: string;
  /** US dollars per million input tokens (cached ones included unless `cachedInputUsdPerMTok` is given). */
  inputUsdPerMTok: number;
  outputUsdPerMTok: number;
  cachedInputUsdPerMTok?: number;
}

/** List prices (USD per million tokens) of a few common models; operators override or extend them. */
export const BUILTIN_PRICES: readonly ModelPrice[] = [
  { vendor: 'openai', model: 'gpt-4o', inputUsdPerMTok: 2.5, outputUsdPerMTok: 10, cachedInputUsdPerMTok: 1.25 },
  { vendor: 'openai', model: 'gpt-4o-mini', inputUsdPerMTok: 0.15, outputUsdPerMTok: 0.6, cachedInputUsdPerMTok: 0.075 },
  { vendor: 'anthropic', model: 'claude-3-5-haiku-latest', inputUsdPerMTok: 0.8, outputUsdPerMTok: 4, cachedInputUsdPerMTok: 0.08 },
  { vendor: 'anthropic', model: 'claude-sonnet-4-0', inputUsdPerMTok: 3, outputUsdPerMTok: 15, cachedInputUsdPerMTok: 0.3 },
];

export class PriceTable {
  private readonly entries = new Map<string, { price: ModelPrice; table: 'builtin' | 'operator' }>();

  constructor(operator: readonly ModelPrice[] = [], builtin: readonly ModelPrice[] = BUILTIN_PRICES) {
    for (const price of builtin) this.entries.set(key(price.vendor, price.model), { price, table: 'builtin' });
    for (const price of operator) this.entries.set(key(price.vendor, price.model), { price, table: 'operator' });
  }

  /** The estimate for complete totals; undefined when a count is unknown or no price is known. */
  estimate(vendor: string, model: string, totals: Usage | undefined): ApiEquivalentCost | undefined {
    const found = this.entries.get(key(vendor, model));
    if (!found || totals?.inputTokens === undefined || totals.outputTokens === undefined) return undefined;
    const { price, table } = found;
    const cached = price.cachedInputUsdPerMTok !== undefined ? (totals.cachedInputTokens ?? 0) : 0;
    const usd =
      ((totals.inputTokens - cached) * price.inputUsdPerMTok + cached * (price.cachedInputUsdPerMTok ?? 0) + totals.outputTokens * price.outputUsdPerMTok) /
      1_000_000;
    return { usd: Math.round(usd * 1e9) / 1e9, estimate: true, basis: 'price-table', priceTable: table };
  }
}

function key(vendor: string, model: string): string {
  return `${vendor}\u0000${model}`;
}
