/**
 * The cross-field rule tables (src/protocol/rules.ts) and their TypeScript evaluator: the
 * shared vectors of protocol/fixtures/rules.json (which the Python, Go and Rust clients'
 * evaluators answer too), the table checks `npm run protocol` runs before publishing, and a
 * request rule refusing a body with the operation's code before anything is sent.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ruleTableProblems } from '../../scripts/protocol-clients/rules.js';
import { operation } from '../../src/client/operations.js';
import { DriverError } from '../../src/protocol/errors.js';
import { describeViolation, evaluateRules } from '../../src/protocol/rule-evaluator.js';
import { RULE_SETS, type RuleSet } from '../../src/protocol/rules.js';

interface RuleCase {
  name: string;
  ruleSet: string;
  scope: Record<string, unknown>;
  broken: string | null;
  at?: string;
}

const vectors = JSON.parse(readFileSync(new URL('../../protocol/fixtures/rules.json', import.meta.url), 'utf8')) as { cases: RuleCase[] };

describe('cross-field rules', () => {
  it('answers every shared vector (protocol/fixtures/rules.json)', () => {
    assert.ok(vectors.cases.length >= 30);
    for (const vector of vectors.cases) {
      const broken = evaluateRules(vector.ruleSet, vector.scope);
      assert.equal(broken?.rule ?? null, vector.broken, vector.name);
      if (broken) assert.equal(broken.at, vector.at, vector.name);
    }
  });

  it('words a violation with where it is and the rule id', () => {
    assert.equal(describeViolation({ rule: 'a.b', message: 'it is wrong', at: 'answer.hits[1]' }), 'it is wrong (at answer.hits[1]) [a.b]');
    assert.equal(describeViolation({ rule: 'a.b', message: 'it is wrong', at: '' }), 'it is wrong [a.b]');
  });

  it('has consistent tables, and finds a typo, an unknown operator and a duplicate id', () => {
    assert.deepEqual(ruleTableProblems(RULE_SETS), []);
    const broken: Record<string, RuleSet> = {
      ...RULE_SETS,
      sessionDeleted: {
        params: ['answer', 'request'],
        rules: [
          { id: 'sessionDeleted.id', check: { equal: ['answr.id', 'request.id'] }, message: 'x' },
          { id: 'sessionDeleted.id', check: { same: ['answer.id', 'request.id'] } as never, message: 'x' },
        ],
      },
    };
    const problems = ruleTableProblems(broken).join('\n');
    assert.match(problems, /answr\.id refers to answr, which is not bound here/);
    assert.match(problems, /unknown operator/);
    assert.match(problems, /rule id sessionDeleted\.id is used twice/);
  });

  it("refuses a body breaking its operation's request rules with the operation's code", () => {
    const request = { corpus: 'docs', source: { id: 'guide', revision: '1' }, chunks: [{ id: 'c1', text: 'a' }, { id: 'c1', text: 'b' }] };
    assert.throws(
      () => operation('indexSource').check(request),
      (error: DriverError) => error.code === 'INVALID_RETRIEVAL' && error.message.includes('[indexRequest.chunkIds]'),
    );
    operation('indexSource').check({ ...request, chunks: [request.chunks[0]] });
  });
});
