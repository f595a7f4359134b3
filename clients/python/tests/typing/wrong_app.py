"""A consumer with typing mistakes; ``mypy --strict`` must reject each marked line."""
from __future__ import annotations

from agenticdriver import AgenticClient
from agenticdriver.types import ApprovalDecision, RunRequest

client = AgenticClient("http://127.0.0.1:1/", "token")
missing: RunRequest = {"provider": "mock", "model": "demo"}  # E: missing input
unknown: RunRequest = {"provider": "mock", "model": "demo", "input": "x", "temperature": 1}  # E: unknown key
wrong: RunRequest = {"provider": "mock", "model": "demo", "input": 3}  # E: wrong type
client.providers(refresh="yes")  # E: wrong argument type
text: int = client.run(wrong)["text"]  # E: str is not int
maybe: ApprovalDecision = {"approvalId": "a", "runId": "r", "call": {"id": "c", "name": "n", "arguments": {}}, "decision": "maybe"}  # E: not a decision
client.complete_tool({"executionId": "e", "runId": "r", "callId": "c", "error": "it broke"})  # E: not the failure code
client.report_tool_progress({"executionId": "e", "runId": "r"})  # E: missing callId
client.create_session({"provider": "mock", "model": "demo", "mode": "memory"})  # E: not a session mode
client.tail_job("00000000-0000-4000-8000-000000000001", after="3")  # E: after is an int
client.job_events({"id": "00000000-0000-4000-8000-000000000001"})  # E: missing after
