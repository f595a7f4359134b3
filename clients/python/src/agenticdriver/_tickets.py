"""Answering approval and tool-execution requests with one call.

``client.approval(event)`` and ``client.execution(event)`` turn an ``approval.requested``
or ``tool.execution.requested`` event into a handle bound to a private copy of its
request, made when the handle is made, so what is decided or reported is exactly what
the host asked, whatever the application does to the event dict afterwards.
``client.stream_with_tools`` makes its handle before it yields the event.
"""
from __future__ import annotations

import copy
import inspect
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .errors import DriverError
from .types import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResolution,
    Decision,
    JsonObject,
    ToolCall,
    ToolExecution,
    ToolExecutionIdentity,
    ToolExecutionReceipt,
    ToolExecutionResult,
)

if TYPE_CHECKING:
    from ._async import AsyncAgenticClient
    from ._sync import AgenticClient


def approval_request_of(event: object) -> ApprovalRequest:
    """A private copy of an ``approval.requested`` event's request (else ``INVALID_ARGUMENT``)."""
    try:
        assert isinstance(event, Mapping) and event["type"] == "approval.requested"
        request = event["approval"]
        assert isinstance(request, Mapping) and isinstance(request["approvalId"], str) and isinstance(request["call"], Mapping)
        return copy.deepcopy(request)  # type: ignore[return-value]
    except (AssertionError, KeyError, TypeError):
        raise DriverError("INVALID_ARGUMENT", "approval() needs an approval.requested event.") from None


def execution_of(event: object) -> ToolExecution:
    """A private copy of a ``tool.execution.requested`` event's execution (else ``INVALID_ARGUMENT``)."""
    try:
        assert isinstance(event, Mapping) and event["type"] == "tool.execution.requested"
        execution = event["execution"]
        assert isinstance(execution, Mapping) and isinstance(execution["executionId"], str) and isinstance(execution["call"], Mapping)
        return copy.deepcopy(execution)  # type: ignore[return-value]
    except (AssertionError, KeyError, TypeError):
        raise DriverError("INVALID_ARGUMENT", "execution() needs a tool.execution.requested event.") from None


def check_tool_functions(functions: Mapping[str, object], request: Mapping[str, Any]) -> None:
    """Functions may only be registered for application tools the run declares."""
    declared = {tool.get("name") for tool in request.get("applicationTools") or [] if isinstance(tool, Mapping)}
    for name, function in functions.items():
        if name not in declared:
            raise DriverError("INVALID_ARGUMENT", f"{name!r} is not an application tool the request declares.")
        if not callable(function):
            raise DriverError("INVALID_ARGUMENT", f"The function registered for {name!r} is not callable.")


class _Approval:
    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request

    @property
    def call(self) -> ToolCall:
        """The exact proposed call (name and arguments) a person is asked to review."""
        return self.request["call"]

    def _decision(self, decision: Decision) -> ApprovalDecision:
        return {
            "approvalId": self.request["approvalId"],
            "runId": self.request["runId"],
            "call": copy.deepcopy(self.request["call"]),
            "decision": decision,
        }


class PendingApproval(_Approval):
    """An ``approval.requested`` (``client.approval(event)``): ``approve()``, ``deny()`` or ``cancel()`` it once.

    Each returns the host's checked receipt; what then happens to the run arrives as
    events (``approval.resolved``, then the tool's events or the run's terminal).
    """

    def __init__(self, client: "AgenticClient", request: ApprovalRequest) -> None:
        super().__init__(request)
        self._client = client

    def approve(self) -> ApprovalResolution:
        return self.decide("approve")

    def deny(self) -> ApprovalResolution:
        return self.decide("deny")

    def cancel(self) -> ApprovalResolution:
        return self.decide("cancel")

    def decide(self, decision: Decision) -> ApprovalResolution:
        return self._client.decide_approval(self._decision(decision))


class AsyncPendingApproval(_Approval):
    """``PendingApproval`` of an ``AsyncAgenticClient``; the calls are coroutines."""

    def __init__(self, client: "AsyncAgenticClient", request: ApprovalRequest) -> None:
        super().__init__(request)
        self._client = client

    async def approve(self) -> ApprovalResolution:
        return await self.decide("approve")

    async def deny(self) -> ApprovalResolution:
        return await self.decide("deny")

    async def cancel(self) -> ApprovalResolution:
        return await self.decide("cancel")

    async def decide(self, decision: Decision) -> ApprovalResolution:
        return await self._client.decide_approval(self._decision(decision))


class _Execution:
    def __init__(self, execution: ToolExecution) -> None:
        self.execution = execution
        self.settled = False

    @property
    def name(self) -> str:
        return self.execution["call"]["name"]

    @property
    def arguments(self) -> JsonObject:
        """The call's arguments, already validated by the host against the tool's input schema."""
        return self.execution["call"]["arguments"]

    @property
    def identity(self) -> ToolExecutionIdentity:
        execution = self.execution
        return {"executionId": execution["executionId"], "runId": execution["runId"], "callId": execution["call"]["id"]}

    def _output(self, output: Any) -> ToolExecutionResult:
        return {**self.identity, "output": output}

    def _failure(self) -> ToolExecutionResult:
        return {**self.identity, "error": "APPLICATION_TOOL_FAILED"}


class PendingExecution(_Execution):
    """A ``tool.execution.requested`` (``client.execution(event)``): a single-use ticket for one result.

    Report ``progress()`` only after real work (it resets the run's idle timer), then
    ``complete(output)`` or ``fail()`` exactly once; the host rejects a second result with
    ``TOOL_EXECUTION_NOT_FOUND``.
    """

    def __init__(self, client: "AgenticClient", execution: ToolExecution) -> None:
        super().__init__(execution)
        self._client = client

    def progress(self) -> ToolExecutionReceipt:
        return self._client.report_tool_progress(self.identity)

    def complete(self, output: Any) -> ToolExecutionReceipt:
        return self._settle(self._output(output))

    def fail(self) -> ToolExecutionReceipt:
        return self._settle(self._failure())

    def _settle(self, result: ToolExecutionResult) -> ToolExecutionReceipt:
        receipt = self._client.complete_tool(result)
        self.settled = True
        return receipt


class AsyncPendingExecution(_Execution):
    """``PendingExecution`` of an ``AsyncAgenticClient``; the calls are coroutines."""

    def __init__(self, client: "AsyncAgenticClient", execution: ToolExecution) -> None:
        super().__init__(execution)
        self._client = client

    async def progress(self) -> ToolExecutionReceipt:
        return await self._client.report_tool_progress(self.identity)

    async def complete(self, output: Any) -> ToolExecutionReceipt:
        return await self._settle(self._output(output))

    async def fail(self) -> ToolExecutionReceipt:
        return await self._settle(self._failure())

    async def _settle(self, result: ToolExecutionResult) -> ToolExecutionReceipt:
        receipt = await self._client.complete_tool(result)
        self.settled = True
        return receipt


class ToolContext:
    """What a ``ToolFunction`` sees of its execution: the exact request and ``progress()``."""

    def __init__(self, pending: PendingExecution) -> None:
        self._pending = pending
        self.execution: ToolExecution = copy.deepcopy(pending.execution)

    def progress(self) -> ToolExecutionReceipt:
        """Report real work (never on a timer): it resets the run's idle timer."""
        return self._pending.progress()


class AsyncToolContext:
    """``ToolContext`` of an ``AsyncToolFunction``; ``progress()`` is a coroutine."""

    def __init__(self, pending: AsyncPendingExecution) -> None:
        self._pending = pending
        self.execution: ToolExecution = copy.deepcopy(pending.execution)

    async def progress(self) -> ToolExecutionReceipt:
        """Report real work (never on a timer): it resets the run's idle timer."""
        return await self._pending.progress()


ToolFunction = Callable[[JsonObject, ToolContext], Any]
"""An application function for ``stream_with_tools``: ``(arguments, context)`` in, the tool's
JSON output out; ``context.progress()`` reports real work. Raising reports a failure."""
AsyncToolFunction = Callable[[JsonObject, AsyncToolContext], Any]
"""A plain or ``async`` function for ``AsyncAgenticClient.stream_with_tools`` (an awaitable result is awaited)."""
ToolFunctions = Mapping[str, ToolFunction]
"""Application functions by tool name, for ``AgenticClient.stream_with_tools``."""
AsyncToolFunctions = Mapping[str, AsyncToolFunction]
"""Application functions by tool name, for ``AsyncAgenticClient.stream_with_tools``."""


def run_tool(pending: PendingExecution, function: ToolFunction) -> None:
    """Run one registered function and deliver its output. An exception is reported as the
    tool's failure (the run then fails ``APPLICATION_TOOL_FAILED``) and streaming goes on."""
    try:
        output = function(copy.deepcopy(pending.arguments), ToolContext(pending))
    except Exception:
        pending.fail()
        return
    pending.complete(output)


async def run_tool_async(pending: AsyncPendingExecution, function: AsyncToolFunction) -> None:
    """``run_tool`` for the async client; ``function`` may be plain or ``async``."""
    try:
        output = function(copy.deepcopy(pending.arguments), AsyncToolContext(pending))
        if inspect.isawaitable(output):
            output = await output
    except Exception:
        await pending.fail()
        return
    await pending.complete(output)
