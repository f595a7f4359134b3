"""The one error type every client operation raises for protocol-level failures."""
from __future__ import annotations

from typing import Literal, Optional


class DriverError(Exception):
    """A typed AgenticDriver error: a host error envelope or a client-side wire check.

    ``code`` is kept exactly as the host sent it, including codes this client does not
    know. ``retryable`` is advisory only: the client never retries by itself.
    """

    code: str
    message: str
    retryable: bool
    outcome: Optional[Literal["uncertain"]]

    def __init__(
        self,
        code: str,
        message: str,
        retryable: bool = False,
        outcome: Optional[Literal["uncertain"]] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.outcome = outcome

    def __repr__(self) -> str:
        return f"DriverError(code={self.code!r}, message={self.message!r}, retryable={self.retryable!r}, outcome={self.outcome!r})"

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
