"""A typed consumer; ``mypy --strict`` must accept it."""
from __future__ import annotations

import asyncio
from typing import List

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError
from agenticdriver.types import Provider, RunEvent, RunRequest, RunResult


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


if __name__ == "__main__":
    print(asyncio.run(async_app("http://127.0.0.1:1/", "token")))
