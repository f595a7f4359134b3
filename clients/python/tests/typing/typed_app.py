"""A typed consumer; ``mypy --strict`` must accept it."""
from __future__ import annotations

import asyncio
from typing import List

from agenticdriver import AgenticClient, AsyncAgenticClient, AsyncToolContext, DriverError, PendingExecution, ToolContext
from agenticdriver.types import (
    ApprovalDecision,
    JobEventPage,
    JobInfo,
    JobState,
    JsonObject,
    Provider,
    RunEvent,
    RunRequest,
    RunResult,
    SessionCreate,
    SessionSnapshot,
    ToolExecutionReceipt,
    ToolExecutionResult,
)

INTERACTIVE: RunRequest = {
    "provider": "mock",
    "model": "demo",
    "input": "Send the report",
    "tools": ["send_email"],
    "applicationTools": [{"name": "send_email", "description": "Send an email", "inputSchema": {"type": "object"}, "requiresApproval": True}],
    "approvals": {"mode": "interactive", "idlePolicy": "pause"},
}


def texts(events: List[RunEvent]) -> str:
    parts: List[str] = []
    for event in events:
        if event["type"] == "text.delta":
            parts.append(event["text"])
        elif event["type"] == "run.failed":
            raise DriverError(event["error"]["code"], event["error"]["message"], event["error"]["retryable"])
    return "".join(parts)


def sync_app(url: str, token: str) -> str:
    request: RunRequest = {"provider": "mock", "model": "demo", "input": "Hello", "idleTimeoutMs": 1000}
    client = AgenticClient(url, token, ca_file=None, io_timeout=30)
    providers: List[Provider] = client.providers(refresh=True)
    result: RunResult = client.run(request)
    with client.stream(request) as stream:
        streamed = texts(list(stream))
    return f"{len(providers)} {result['text']} {result['usage'].get('inputTokens', 0)} {streamed}"


async def async_app(url: str, token: str) -> str:
    async with AsyncAgenticClient(url, token) as client:
        info = await client.protocol()
        async with client.stream({"provider": "mock", "model": "demo", "input": "Hi"}) as stream:
            async for event in stream:
                if event["type"] == "run.completed":
                    return info["version"] + event["result"]["text"]
    return info["version"]


def send_email(arguments: JsonObject, context: ToolContext) -> JsonObject:
    context.progress()
    return {"sent": True, "to": arguments.get("to"), "id": context.execution["executionId"]}


async def send_email_async(arguments: JsonObject, context: AsyncToolContext) -> JsonObject:
    receipt: ToolExecutionReceipt = await context.progress()
    return {"sent": receipt["status"] == "progress"}


def interactive_app(url: str, token: str) -> str:
    client = AgenticClient(url, token)
    outcomes: List[str] = []
    with client.stream_with_tools(INTERACTIVE, {"send_email": send_email}) as stream:
        for event in stream:
            if event["type"] == "approval.requested" and event["approval"]["call"]["name"] == "send_email":
                outcomes.append(client.approval(event).approve()["outcome"])
            elif event["type"] == "tool.execution.requested":
                pending: PendingExecution = client.execution(event)
                outcomes.append(pending.fail()["status"])
    decision: ApprovalDecision = {"approvalId": "a", "runId": "r", "call": {"id": "c", "name": "n", "arguments": {}}, "decision": "deny"}
    failure: ToolExecutionResult = {"executionId": "e", "runId": "r", "callId": "c", "error": "APPLICATION_TOOL_FAILED"}
    return f"{client.decide_approval(decision)['decidedAt']} {client.complete_tool(failure)['status']} {outcomes}"


async def interactive_async_app(url: str, token: str) -> List[str]:
    statuses: List[str] = []
    async with AsyncAgenticClient(url, token) as client:
        async with client.stream_with_tools(INTERACTIVE, {"send_email": send_email_async}) as stream:
            async for event in stream:
                if event["type"] == "tool.execution.requested":
                    statuses.append((await client.execution(event).complete({"late": True}))["status"])
                elif event["type"] == "approval.requested":
                    statuses.append((await client.approval(event).cancel())["outcome"])
    return statuses


def sessions_and_jobs_app(url: str, token: str) -> List[int]:
    client = AgenticClient(url, token)
    create: SessionCreate = {"provider": "mock", "model": "demo", "mode": "history", "history": [{"role": "user", "content": "hi"}]}
    snapshot: SessionSnapshot = client.create_session(create)
    turn: RunRequest = {"provider": "mock", "model": "demo", "input": "next", "session": {"id": snapshot["session"]["id"], "revision": 0}}
    result = client.run(turn)
    revision = result["session"]["revision"] if "session" in result else 0
    deleted: bool = client.delete_session(snapshot["session"]["id"])["deleted"]
    job: JobInfo = client.submit_job({"key": "nightly-1", "request": {"provider": "mock", "model": "demo", "input": "Hello"}})
    state: JobState = client.read_job(job["id"])["state"]
    page: JobEventPage = client.job_events({"id": job["id"], "after": 0, "limit": 10})
    sequences = [event["sequence"] for event in client.tail_job(job["id"], after=page["nextCursor"], max_attempts=3)]
    return [revision, int(deleted), len(state), *sequences]


async def async_jobs_app(url: str, token: str) -> List[str]:
    async with AsyncAgenticClient(url, token) as client:
        job = await client.cancel_job("00000000-0000-4000-8000-000000000001")
        return [event["type"] async for event in client.tail_job(job["id"], initial_delay=0.1, max_delay=1.0)]


if __name__ == "__main__":
    print(asyncio.run(async_app("http://127.0.0.1:1/", "token")))
