"""How ``tail_job`` and ``follow_run`` follow a live stream of committed events: where it starts, when a dropped
connection is worth resuming, how long to wait, and when to give up.

Shared by the sync and async clients. The event rules themselves live in
``JobStreamChecker``; this module only decides about connections.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from .errors import DriverError

DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_INITIAL_DELAY = 0.25
DEFAULT_MAX_DELAY = 5.0
# Failures of the connection rather than of its content: resuming may help.
_RESUMABLE_CODES = frozenset({"INCOMPLETE_STREAM", "HOST_UNREACHABLE"})
TERMINAL_JOB_STATES = frozenset({"completed", "failed", "cancelled", "interrupted"})


class TailPolicy:
    """Consecutive failed attempts allowed and the backoff between them (seconds)."""

    def __init__(self, after: object, max_attempts: object, initial_delay: object, max_delay: object, what: str = "job") -> None:
        # The record followed: a job (tail_job) or a run (follow_run), which names its codes.
        self._what = what
        self._cursor_code = "INVALID_RUN_CURSOR" if what == "run" else "INVALID_JOB_CURSOR"
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise DriverError(self._cursor_code, "after must be a non-negative integer.")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError("max_attempts must be a positive integer.")
        for name, value in (("initial_delay", initial_delay), ("max_delay", max_delay)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite non-negative number of seconds.")
        self.after = after
        self.max_attempts = max_attempts
        self._initial = float(initial_delay)  # type: ignore[arg-type]
        self._max = float(max_delay)  # type: ignore[arg-type]
        self._failures = 0

    def nothing_to_tail(self, record: Mapping[str, Any]) -> bool:
        """A finished job or run whose events the caller already has; ``after`` beyond them is an error."""
        if self.after > record["cursor"]:
            raise DriverError(self._cursor_code, f"after {self.after} is beyond the {self._what}'s cursor {record['cursor']}.")
        return record["state"] in TERMINAL_JOB_STATES and self.after == record["cursor"]

    def failed(self, progressed: bool, failure: BaseException) -> float:
        """Records a failed connection; returns the wait before the next one, or raises
        ``JOB_STREAM_LOST`` (``RUN_STREAM_LOST`` for a run, chained to the failure) once the attempts are spent.
        A connection that delivered events before failing starts the count again."""
        self._failures = 1 if progressed else self._failures + 1
        if self._failures >= self.max_attempts:
            raise DriverError(
                "RUN_STREAM_LOST" if self._what == "run" else "JOB_STREAM_LOST",
                f"The {self._what} stream could not be resumed after {self._failures} attempts: {failure}",
                True,
            ) from failure
        return float(min(self._max, self._initial * 2 ** (self._failures - 1)))


def is_resumable(error: BaseException, transport_errors: tuple = (OSError,)) -> bool:  # type: ignore[type-arg]
    """Whether a failed connection may be resumed: a transport failure, a cut stream, or a
    host error the host itself calls retryable. Content faults are never retried."""
    if isinstance(error, DriverError):
        return error.code in _RESUMABLE_CODES or error.retryable
    return isinstance(error, transport_errors)


def incomplete(reason: Optional[str] = None) -> DriverError:
    return DriverError("INCOMPLETE_STREAM", reason or "The stream ended before the job or run did.")
