/**
 * Why a run did not complete, in words an operator reads at a glance — from its status and
 * error code only. Never from the error's message: a message may quote the run's content
 * (a vendor echoing the input, a tool's arguments), and operator views hold none of it.
 */
import { ERROR_STATUS } from '../../protocol/errors.js';
import type { UsageRecord } from '../../runtime/usage-record.js';

export const INTERRUPTED_REASON =
  'The host stopped while this run was in flight (found when it started again): what its provider and tools did, and how many steps it took, is unknown.';

const BY_CODE: Record<string, string> = {
  CANCELLED: 'The run was cancelled: its caller went away, the host shut down, its session was deleted or an approval was cancelled.',
  HOST_SHUTTING_DOWN: 'The host was shutting down.',
  IDLE_TIMEOUT: 'Nothing happened for longer than the run allowed (its idle timeout).',
  STEP_LIMIT: 'The model still asked for tools at the last step the run allowed.',
  TOOL_LIMIT: 'The model asked for more tool calls than the run allowed.',
  OUTPUT_BUFFER_LIMIT: 'The output grew past the limit the host keeps.',
  APPROVAL_DENIED: 'A person denied a tool call the run needed.',
  APPROVAL_EXPIRED: 'A tool call waited for approval until its approval expired.',
  APPROVAL_REQUIRED: 'A tool call needed an approval the run could not get.',
  TOOL_FAILED: 'A host tool failed; what it did is uncertain.',
  APPLICATION_TOOL_FAILED: 'The application reported that its tool failed.',
  TOOL_NOT_ALLOWED: 'The model called a tool the run did not select.',
  INVALID_TOOL_CALL: 'The model produced a malformed tool call.',
  INVALID_TOOL_ARGUMENTS: 'The model called a tool with arguments that do not fit its schema.',
  TRUNCATED_TOOL_CALL: 'The model was cut off in the middle of a tool call.',
  INVALID_OUTPUT: 'The model\'s answer did not fit the requested output schema.',
  PROVIDER_AUTH: 'The provider refused the host\'s credentials.',
  PROVIDER_UNREACHABLE: 'The provider could not be reached.',
  PROVIDER_ERROR: 'The provider answered with an error.',
  PROVIDER_FAILED: 'The provider failed.',
  PROVIDER_REFUSAL: 'The model refused to answer.',
  INVALID_PROVIDER_RESPONSE: 'The provider answered with something the host could not read.',
  RATE_LIMITED: 'The provider was rate-limiting.',
  CLI_AUTH_REQUIRED: 'The agent CLI is not signed in.',
  CLI_UNAVAILABLE: 'The agent CLI could not be started.',
  CLI_FAILED: 'The agent CLI failed.',
  NO_RETRIEVAL_EVIDENCE: 'The corpus search found no passage to ground the answer on.',
  CONTEXT_CHANGED: 'The retrieved evidence changed while the run used it.',
  SESSION_DELETED: 'Its session was deleted while it ran.',
  INTERNAL_ERROR: 'The host failed (an internal error; the host\'s log has it).',
};

const BY_STATUS: Record<number, string> = {
  400: 'The host refused the run\'s request.',
  403: 'The run was not allowed something it needed.',
  404: 'Something the run needed does not exist.',
  409: 'The run conflicted with the state of something it used.',
  410: 'Something the run waited for expired.',
  422: 'The run hit one of its limits.',
  429: 'Something the run needed was at capacity.',
  500: 'The host failed.',
  502: 'The provider, the model\'s output, an agent CLI or a tool failed.',
  503: 'The host or its store could not serve the run.',
  504: 'The run timed out.',
};

/** A reason for a run that did not complete; undefined for a completed one. */
export function runReason(status: UsageRecord['status'] | 'running', code: string | undefined): string | undefined {
  if (status === 'interrupted') return INTERRUPTED_REASON;
  if (status === 'completed' || status === 'running' || code === undefined) return undefined;
  const known = BY_CODE[code];
  if (known) return known;
  const httpStatus = (ERROR_STATUS as Record<string, number>)[code];
  return httpStatus === undefined ? 'The run failed with an error code this host does not describe.' : BY_STATUS[httpStatus];
}
