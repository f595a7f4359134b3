"""Consumer rules that apply before any request is sent."""
from __future__ import annotations

import pytest

from agenticdriver import AgenticClient, AsyncAgenticClient, DriverError
from hosts import TOKEN


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "http://10.0.0.1:8080/",
        "https://user:secret@127.0.0.1/",
        "https://127.0.0.1/?a=1",
        "https://127.0.0.1/#top",
    ],
)
def test_unsafe_urls_are_refused(url: str) -> None:
    with pytest.raises(DriverError) as raised:
        AgenticClient(url, TOKEN)
    assert raised.value.code == "INSECURE_TRANSPORT"


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "https://127.0.0.1:99999/", "not a url", "127.0.0.1:7433", "localhost:7433", "/relative", None])
def test_urls_that_are_not_absolute_http_urls_are_url_errors(url: object) -> None:
    with pytest.raises(DriverError) as raised:
        AgenticClient(url, TOKEN)  # type: ignore[arg-type]
    assert raised.value.code == "INVALID_URL"


@pytest.mark.parametrize("url", ["http://127.0.0.1:1/", "http://127.9.9.9/", "http://localhost/x", "http://[::1]:80/", "http://[::ffff:127.0.0.1]/", "https://example.com/base"])
def test_https_or_loopback_urls_are_accepted(url: str) -> None:
    AgenticClient(url, TOKEN)


@pytest.mark.parametrize("token", ["", "has space", "tab\t", "é-not-ascii", None])
def test_unusable_tokens_are_refused(token: object) -> None:
    with pytest.raises(DriverError) as raised:
        AgenticClient("http://127.0.0.1/", token)  # type: ignore[arg-type]
    assert raised.value.code == "AUTH_REQUIRED"


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan"), True, "5"])
def test_timeouts_must_be_finite_positive_numbers(timeout: object) -> None:
    with pytest.raises(ValueError):
        AgenticClient("http://127.0.0.1/", TOKEN, io_timeout=timeout)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        AsyncAgenticClient("http://127.0.0.1/", TOKEN, discovery_timeout=timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("request_extra", "code"),
    [
        ({"applicationTools": [{"name": "lookup", "description": "d", "inputSchema": {}}], "tools": ["lookup"]}, "TOOL_STREAM_REQUIRED"),
        ({"approvals": {"mode": "interactive", "idlePolicy": "pause"}}, "APPROVAL_STREAM_REQUIRED"),
    ],
)
def test_stream_only_features_are_refused_by_run(request_extra: dict, code: str) -> None:  # type: ignore[type-arg]
    client = AgenticClient("http://127.0.0.1:1/", TOKEN)
    with pytest.raises(DriverError) as raised:
        client.run({"provider": "mock", "model": "demo", "input": "x", **request_extra})  # type: ignore[typeddict-item]
    assert raised.value.code == code
