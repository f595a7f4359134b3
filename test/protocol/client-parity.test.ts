/**
 * The four clients against the contract's operation table (protocol/operations.json, generated
 * from src/protocol/endpoints.ts): every operation is a method of every client class, under the
 * name the table gives it in that language (scripts/protocol-clients/parity.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { goMethods, parityProblems, repositoryMethods } from '../../scripts/protocol-clients/parity.js';
import type { OperationsDocument } from '../../scripts/protocol-clients/operations.js';

const root = new URL('../..', import.meta.url).pathname;
const document = JSON.parse(readFileSync(join(root, 'protocol/operations.json'), 'utf8')) as OperationsDocument;

describe('client parity with the operation table', () => {
  const methods = repositoryMethods(root);

  it('every client class has every operation of its kind, under its generated name', () => {
    assert.deepEqual(parityProblems(document, methods), []);
  });

  it('fails on a client that lacks an operation or names it differently (fixture: Go DeleteSource named RemoveSource)', () => {
    const fixture = goMethods(join(root, 'test/protocol/fixtures/parity-go'));
    assert.ok(fixture.Client?.includes('RemoveSource'));
    const problems = parityProblems(document, { ...methods, go: { ...methods.go, agent: { Client: fixture.Client ?? [] } } });
    assert.deepEqual(problems, ['go: Client lacks DeleteSource (operation deleteSource)']);
  });

  it('fails when an operation is added to the table and no client has it yet', () => {
    const added = { ...document.operations[0]!, id: 'listWidgets', methods: { typescript: ['listWidgets'], go: ['ListWidgets'], python: ['list_widgets'], rust: ['list_widgets'] } };
    const problems = parityProblems({ operations: [...document.operations, added] }, methods);
    assert.deepEqual(problems, [
      'typescript: AgenticClient lacks listWidgets (operation listWidgets)',
      'go: Client lacks ListWidgets (operation listWidgets)',
      'python: AgenticClient lacks list_widgets (operation listWidgets)',
      'python: AsyncAgenticClient lacks list_widgets (operation listWidgets)',
      'rust: AsyncAgenticClient lacks list_widgets (operation listWidgets)',
      'rust: blocking::AgenticClient lacks list_widgets (operation listWidgets)',
    ]);
  });
});
