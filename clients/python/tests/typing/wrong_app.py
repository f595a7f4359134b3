"""A consumer with typing mistakes; ``mypy --strict`` must reject each marked line."""
from __future__ import annotations

from agenticdriver import AgenticClient
from agenticdriver.types import RunRequest

client = AgenticClient("http://127.0.0.1:1/", "token")
missing: RunRequest = {"provider": "mock", "model": "demo"}  # E: missing input
unknown: RunRequest = {"provider": "mock", "model": "demo", "input": "x", "temperature": 1}  # E: unknown key
wrong: RunRequest = {"provider": "mock", "model": "demo", "input": 3}  # E: wrong type
client.providers(refresh="yes")  # E: wrong argument type
text: int = client.run(wrong)["text"]  # E: str is not int
