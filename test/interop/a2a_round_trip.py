"""One A2A round trip with the official Python SDK (`a2a-sdk`): the card, a streamed message, the task read back.

Run by test/interop/python-clients.test.ts: argv[1] is the host's URL, the token is in
AD_INTEROP_TOKEN, argv[2] the message's text. Prints one JSON line: what the stream carried
and the task as read back.
"""
import asyncio
import json
import os
import sys
import uuid

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState


async def main() -> None:
    url, text = sys.argv[1], sys.argv[2]
    headers = {"authorization": f"Bearer {os.environ['AD_INTEROP_TOKEN']}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        client = await create_client(url, client_config=ClientConfig(httpx_client=http, streaming=True))
        message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
        kinds: list[str] = []
        task_id = ""
        async for response in client.send_message(SendMessageRequest(message=message)):
            kind = response.WhichOneof("payload")
            kinds.append(kind)
            if kind == "task":
                task_id = response.task.id
        task = await client.get_task(GetTaskRequest(id=task_id))
        artifact_text = "".join(part.text for artifact in task.artifacts for part in artifact.parts)
        print(json.dumps({"kinds": kinds, "state": TaskState.Name(task.status.state), "text": artifact_text}))


asyncio.run(main())
