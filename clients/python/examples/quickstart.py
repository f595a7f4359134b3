"""Stream one run and print its text as it arrives (python examples/quickstart.py URL TOKEN)."""
import sys

from agenticdriver import AgenticClient, DriverError

client = AgenticClient(sys.argv[1], sys.argv[2])  # add ca_file="ca.pem" for a private CA
try:
    with client.stream({"provider": "mock", "model": "demo", "input": "Hello"}) as events:
        for event in events:
            if event["type"] == "text.delta":
                print(event["text"], end="", flush=True)
            elif event["type"] == "run.completed":
                print(f"\n[{event['result']['finishReason']}]")
except DriverError as error:
    sys.exit(f"{error.code}: {error.message} (retryable={error.retryable})")
