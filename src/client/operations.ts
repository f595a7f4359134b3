/**
 * The client's view of the endpoint table (src/protocol/endpoints.ts): where an operation is,
 * the validators of its body and answer, and the code a malformed body is refused with. The
 * Python, Go and Rust clients get the same table generated (protocol/operations.json).
 */
import { DriverError } from '../protocol/errors.js';
import { endpointOf } from '../protocol/endpoints.js';
import { validatorFor, type Validator } from '../protocol/validate.js';

export interface Operation<Request, Answer> {
  id: string;
  /** Relative to the base URL; `{id}` is a path parameter. */
  path: string;
  answer: Validator<Answer>;
  /** Refuses a malformed body with the operation's code, before anything is sent. */
  check(request: unknown): void;
}

export function operation<Request = never, Answer = unknown>(id: string): Operation<Request, Answer> {
  const endpoint = endpointOf(id);
  const request = endpoint.request && validatorFor<Request>(endpoint.request);
  const code = endpoint.invalidBody?.code ?? 'INVALID_REQUEST';
  return {
    id,
    path: endpoint.path.slice(1),
    answer: validatorFor<Answer>(endpoint.response),
    check(body: unknown): void {
      if (request && !request(body)) throw new DriverError(code, `The ${id} request is invalid: ${request.explain(body)}.`);
    },
  };
}

/** The operation's path with its `{id}` parameter (already checked) filled in. */
export function pathOf(operation: Operation<unknown, unknown>, id: string): string {
  return operation.path.replace('{id}', encodeURIComponent(id));
}
