"""Both clients against real loopback HTTP(S) servers: transport rules, errors, closing."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError
from hosts import TOKEN, Pki, ScriptedHost, event, good_events, result, sse

HELLO: Dict[str, Any] = {"provider": "mock", "model": "demo", "input": "Hello"}
PROTOCOL = {"protocol": "agenticdriver", "version": "1.0", "supportedVersions": ["1.0"], "features": ["event-stream"]}


def sync_stream(url: str, ca_file: Any = None, stop: Callable[[Dict[str, Any]], bool] = lambda e: False) -> List[Dict[str, Any]]:
    events: List[Dict[str, Any]] = []
    with AgenticClient(url, TOKEN, ca_file=ca_file).stream(HELLO) as stream:  # type: ignore[arg-type]
        for item in stream:
            events.append(dict(item))
            if stop(events[-1]):
                break
    return events


def async_stream(url: str, ca_file: Any = None, stop: Callable[[Dict[str, Any]], bool] = lambda e: False) -> List[Dict[str, Any]]:
    async def main() -> List[Dict[str, Any]]:
        events: List[Dict[str, Any]] = []
        async with AsyncAgenticClient(url, TOKEN, ca_file=ca_file) as client:
            async with client.stream(HELLO) as stream:  # type: ignore[arg-type]
                async for item in stream:
                    events.append(dict(item))
                    if stop(events[-1]):
                        break
        return events

    return asyncio.run(main())


def sync_protocol(url: str, ca_file: Any = None) -> Any:
    return AgenticClient(url, TOKEN, ca_file=ca_file).protocol()


def async_protocol(url: str, ca_file: Any = None) -> Any:
    async def main() -> Any:
        async with AsyncAgenticClient(url, TOKEN, ca_file=ca_file) as client:
            return await client.protocol()

    return asyncio.run(main())


def sync_run(url: str, request: Dict[str, Any] = HELLO) -> Any:
    return AgenticClient(url, TOKEN).run(request)  # type: ignore[arg-type]


def async_run(url: str, request: Dict[str, Any] = HELLO) -> Any:
    async def main() -> Any:
        async with AsyncAgenticClient(url, TOKEN) as client:
            return await client.run(request)  # type: ignore[arg-type]

    return asyncio.run(main())


STREAMS = pytest.mark.parametrize("stream", [sync_stream, async_stream], ids=["sync", "async"])
PROTOCOLS = pytest.mark.parametrize("protocol", [sync_protocol, async_protocol], ids=["sync", "async"])
RUNS = pytest.mark.parametrize("run", [sync_run, async_run], ids=["sync", "async"])


def code_of(call: Callable[[], Any]) -> DriverError:
    with pytest.raises(DriverError) as raised:
        call()
    return raised.value


@STREAMS
def test_stream_sends_negotiation_headers_and_validates_events(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()))
    events = stream(host.url + "base")
    assert [e["type"] for e in events] == ["run.started", "text.delta", "run.completed"]
    sent = host.requests[0]
    assert sent["path"] == "/base/v1/runs"
    assert sent["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert sent["headers"]["AgenticDriver-Version"] == "1.0"
    assert sent["headers"]["AgenticDriver-Accept-Optional-Events"] == "true"
    assert sent["headers"]["Accept"] == "text/event-stream"
    assert json.loads(sent["body"]) == HELLO


@STREAMS
def test_first_terminal_wins_and_later_bytes_are_ignored(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()) + b"data: \xff broken\n\n")
    assert stream(host.url)[-1]["type"] == "run.completed"


@STREAMS
def test_breaking_out_closes_the_connection(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()[:2]), hold_open=True)
    events = stream(host.url, stop=lambda e: e["type"] == "text.delta")
    assert events[-1]["type"] == "text.delta"
    assert host.disconnected.wait(5)


@STREAMS
def test_eof_before_terminal_is_incomplete(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()[:2]))
    assert code_of(lambda: stream(host.url)).code == "INCOMPLETE_STREAM"


@STREAMS
def test_wrong_content_type_is_an_invalid_response(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()), content_type="application/json")
    assert code_of(lambda: stream(host.url)).code == "INVALID_RESPONSE"


@STREAMS
def test_redirects_are_never_followed(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.reply(302, {}, headers={"Location": "/target/v1/runs"})
    host.routes["target"] = lambda x: x.reply(200, {})
    error = code_of(lambda: stream(host.url))
    assert (error.code, error.retryable) == ("HTTP_ERROR", False)
    assert [r["path"] for r in host.requests] == ["/v1/runs"]


@STREAMS
def test_response_version_other_than_1_0_is_rejected(host: ScriptedHost, stream: Any) -> None:
    host.routes["runs"] = lambda x: x.reply(200, {}, headers={"AgenticDriver-Version": "2.0"})
    assert code_of(lambda: stream(host.url)).code == "UNSUPPORTED_PROTOCOL_VERSION"


@RUNS
def test_error_envelopes_keep_unknown_codes_and_flags(host: ScriptedHost, run: Any) -> None:
    envelope = {"error": {"code": "FUTURE_CODE", "message": "later", "retryable": True, "outcome": "uncertain"}}
    host.routes["runs"] = lambda x: x.reply(503, envelope)
    error = code_of(lambda: run(host.url))
    assert (error.code, error.message, error.retryable, error.outcome) == ("FUTURE_CODE", "later", True, "uncertain")


@RUNS
@pytest.mark.parametrize(("status", "retryable"), [(400, False), (429, True), (502, True)])
def test_non_envelope_errors_are_http_errors(host: ScriptedHost, run: Any, status: int, retryable: bool) -> None:
    host.routes["runs"] = lambda x: x.reply(status, None, raw=b"<html>proxy</html>")
    error = code_of(lambda: run(host.url))
    assert (error.code, error.retryable) == ("HTTP_ERROR", retryable)


@RUNS
def test_run_returns_a_validated_json_result(host: ScriptedHost, run: Any) -> None:
    host.routes["runs"] = lambda x: x.reply(200, result("Hi"))
    assert run(host.url)["text"] == "Hi"
    assert host.requests[0]["headers"]["Accept"] == "application/json"


@RUNS
def test_run_rejects_results_for_another_model_and_oversized_bodies(host: ScriptedHost, run: Any) -> None:
    host.routes["runs"] = lambda x: x.reply(200, dict(result(), model="other"))
    assert code_of(lambda: run(host.url)).code == "INVALID_RESPONSE"
    host.routes["runs"] = lambda x: x.reply(200, dict(result("x" * 2_000_001)))
    assert code_of(lambda: run(host.url)).code == "RESPONSE_TOO_LARGE"
    host.routes["runs"] = lambda x: x.reply(200, None, raw=b'{"steps": NaN}')
    assert code_of(lambda: run(host.url)).code == "INVALID_RESPONSE"


@PROTOCOLS
def test_verified_https_with_a_per_client_ca(tls_host: ScriptedHost, pki: Pki, other_pki: Pki, protocol: Any) -> None:
    tls_host.routes["protocol"] = lambda x: x.reply(200, PROTOCOL)
    assert protocol(tls_host.url, pki.ca)["version"] == "1.0"
    with pytest.raises(Exception) as untrusted:
        protocol(tls_host.url, other_pki.ca)
    assert "CERTIFICATE_VERIFY_FAILED" in str(untrusted.value)
    with pytest.raises(Exception) as mismatch:
        protocol(tls_host.url.replace("127.0.0.1", "localhost"), pki.ca)
    assert "CERTIFICATE_VERIFY_FAILED" in str(mismatch.value)
    assert len(tls_host.requests) == 1


def test_async_task_cancellation_closes_the_stream(host: ScriptedHost) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()[:1]), hold_open=True)

    async def main() -> None:
        async with AsyncAgenticClient(host.url, TOKEN) as client:
            started = asyncio.Event()

            async def consume() -> None:
                async for item in client.stream(HELLO):  # type: ignore[arg-type]
                    started.set()

            task = asyncio.create_task(consume())
            await asyncio.wait_for(started.wait(), 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert host.disconnected.wait(5)


def test_closing_the_sync_client_closes_its_streams(host: ScriptedHost) -> None:
    host.routes["runs"] = lambda x: x.stream(sse(good_events()[:1]), hold_open=True)
    client = AgenticClient(host.url, TOKEN)
    stream = client.stream(HELLO)  # type: ignore[arg-type]
    assert next(iter(stream))["type"] == "run.started"
    client.close()
    assert host.disconnected.wait(5)
    assert code_of(lambda: client.protocol()).code == "CLIENT_CLOSED"


def test_failure_terminals_are_delivered_as_events(host: ScriptedHost) -> None:
    failed = event("run.failed", 2, error={"code": "QUEUE_FULL", "message": "busy", "retryable": True})
    host.routes["runs"] = lambda x: x.stream(sse([good_events()[0], failed]))
    assert sync_stream(host.url)[-1]["error"]["code"] == "QUEUE_FULL"
    assert async_stream(host.url)[-1]["error"]["code"] == "QUEUE_FULL"

