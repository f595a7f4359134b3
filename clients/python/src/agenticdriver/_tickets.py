"""Answering a stream's approval and tool-execution requests with one call.

A stream records a private copy of every ``approval.requested`` and
``tool.execution.requested`` it delivers (``TicketLedger``); ``stream.approval(event)``
and ``stream.execution(event)`` turn such an event into a handle bound to that copy, so
what is decided or reported is exactly what the host asked, whatever the application
does to the event dict afterwards.
"""
from __future__ import annotations

import copy
import inspect
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping

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


def _not_delivered(what: str) -> DriverError:
    return DriverError("INVALID_ARGUMENT", f"The {what} was not delivered by this stream.")


class TicketLedger:
    """Copies of the approval and execution requests one stream delivered, by id."""

    def __init__(self) -> None:
        self._approvals: Dict[str, ApprovalRequest] = {}
        self._executions: Dict[str, ToolExecution] = {}

    def note(self, event: Mapping[str, Any]) -> None:
        if event["type"] == "approval.requested":
            self._approvals[event["approval"]["approvalId"]] = copy.deepcopy(event["approval"])
        elif event["type"] == "tool.execution.requested":
            self._executions[event["execution"]["executionId"]] = copy.deepcopy(event["execution"])

    def approval(self, event: object) -> ApprovalRequest:
        try:
            assert isinstance(event, Mapping) and event["type"] == "approval.requested"
            return copy.deepcopy(self._approvals[event["approval"]["approvalId"]])
        except (AssertionError, KeyError, TypeError):
            raise _not_delivered("approval.requested event") from None

    def execution(self, event: object) -> ToolExecution:
        try:
            assert isinstance(event, Mapping) and event["type"] == "tool.execution.requested"
            return copy.deepcopy(self._executions[event["execution"]["executionId"]])
        except (AssertionError, KeyError, TypeError):
            raise _not_delivered("tool.execution.requested event") from None


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
    """An ``approval.requested`` of a ``RunStream``: ``approve()``, ``deny()`` or ``cancel()`` it once.

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
    """``PendingApproval`` for an ``AsyncRunStream``; the calls are coroutines."""

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


class _Ticket:
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


class ToolTicket(_Ticket):
    """A ``tool.execution.requested`` of a ``RunStream``: a single-use ticket for one result.

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


class AsyncToolTicket(_Ticket):
    """``ToolTicket`` for an ``AsyncRunStream``; the calls are coroutines."""

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


ToolFunction = Callable[[JsonObject, ToolTicket], Any]
"""An application function for ``RunStream.with_tools``: ``(arguments, ticket)`` in, the tool's
JSON output out; ``ticket.progress()`` reports real work. Raising reports a failure."""
AsyncToolFunction = Callable[[JsonObject, AsyncToolTicket], Any]
"""A plain or ``async`` function for ``AsyncRunStream.with_tools`` (an awaitable result is awaited)."""


def run_tool(ticket: ToolTicket, function: ToolFunction) -> None:
    """Run one registered function and deliver its output. An exception is reported as the
    tool's failure (the run then fails ``APPLICATION_TOOL_FAILED``) and streaming goes on."""
    try:
        output = function(ticket.arguments, ticket)
    except Exception:
        if not ticket.settled:
            ticket.fail()
        return
    if not ticket.settled:
        ticket.complete(output)


async def run_tool_async(ticket: AsyncToolTicket, function: AsyncToolFunction) -> None:
    """``run_tool`` for the async stream; ``function`` may be plain or ``async``."""
    try:
        output = function(ticket.arguments, ticket)
        if inspect.isawaitable(output):
            output = await output
    except Exception:
        if not ticket.settled:
            await ticket.fail()
        return
    if not ticket.settled:
        await ticket.complete(output)
