/**
 * The client's view of the endpoint table (src/protocol/endpoints.ts): where an operation is,
 * the validators of its body and answer, the cross-field rules of both (src/protocol/rules.ts)
 * and the code a malformed body is refused with. The Python, Go and Rust clients get the same
 * table generated (protocol/operations.json, protocol/rules.json).
 */
import { DriverError } from '../protocol/errors.js';
import { endpointOf } from '../protocol/endpoints.js';
import { describeViolation, evaluateRules } from '../protocol/rule-evaluator.js';
import { ANSWER_RULES, REQUEST_RULES } from '../protocol/rules.js';
import { validatorFor, type Validator } from '../protocol/validate.js';

export interface Operation<Request, Answer> {
  id: string;
  /** Relative to the base URL; `{id}` is a path parameter. */
  path: string;
  answer: Validator<Answer>;
  /** Refuses a malformed body (its schema, then its rules) with the operation's code, before anything is sent. */
  check(request: unknown): void;
  /** Refuses, with INVALID_RESPONSE, a schema-valid answer that breaks the operation's rules against the request. */
  checkAnswer(answer: Answer, request: unknown): void;
}

export function operation<Request = never, Answer = unknown>(id: string): Operation<Request, Answer> {
  const endpoint = endpointOf(id);
  const request = endpoint.request && validatorFor<Request>(endpoint.request);
  const code = endpoint.invalidBody?.code ?? 'INVALID_REQUEST';
  const requestRules = REQUEST_RULES[id];
  const answerRules = ANSWER_RULES[id];
  return {
    id,
    path: endpoint.path.slice(1),
    answer: validatorFor<Answer>(endpoint.response),
    check(body: unknown): void {
      if (request && !request(body)) throw new DriverError(code, `The ${id} request is invalid: ${request.explain(body)}.`);
      const broken = requestRules && evaluateRules(requestRules, { request: body });
      if (broken) throw new DriverError(code, `The ${id} request is invalid: ${describeViolation(broken)}.`);
    },
    checkAnswer(answer: Answer, body: unknown): void {
      const broken = answerRules && evaluateRules(answerRules, { answer, request: body });
      if (broken) throw new DriverError('INVALID_RESPONSE', `The host's ${id} answer does not match the request: ${describeViolation(broken)}.`);
    },
  };
}

/** The operation's path with its `{id}` parameter (already checked) filled in. */
export function pathOf(operation: Operation<unknown, unknown>, id: string): string {
  return operation.path.replace('{id}', encodeURIComponent(id));
}
