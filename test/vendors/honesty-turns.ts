/** Scripted turns both the official SDKs and our adapters must read the same way. */
import type { Turn } from './script.js';

export const HONESTY_TURNS: Record<string, Turn> = {
  text: { text: ['Hel', 'lo ', 'wörld'], usage: { input: 12, output: 5, cached: 4, reasoning: 2 } },
  tools: {
    text: 'Checking.',
    toolCalls: [
      { id: 'call_a', name: 'lookup', arguments: { city: 'Zürich', days: 3 }, fragments: 5 },
      { id: 'call_b', name: 'clock', arguments: {} },
    ],
    usage: { input: 30, output: 9 },
  },
  length: { text: 'cut sho', finish: 'length', usage: { input: 3, output: 7 } },
};
