"""One MCP round trip with the official Python SDK (`mcp`): initialize, list the tools, call `run`.

Run by test/interop/python-clients.test.ts: argv[1] is the host's /mcp URL, the token is in
AD_INTEROP_TOKEN, argv[2] the run's input. Prints one JSON line: the tool names and the result.
"""
import asyncio
import json
import os
import sys

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    url, run_input = sys.argv[1], sys.argv[2]
    headers = {"authorization": f"Bearer {os.environ['AD_INTEROP_TOKEN']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client(url, http_client=http, terminate_on_close=False) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                progress: list[str] = []

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    progress.append(message or "")

                result = await session.call_tool(
                    "run",
                    {"provider": "mock", "model": "demo", "input": run_input},
                    progress_callback=on_progress,
                )
                texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
                print(json.dumps({"tools": [tool.name for tool in tools.tools], "isError": bool(result.is_error), "text": "".join(texts), "progress": progress}))


asyncio.run(main())
