"""Real loopback servers for the client tests: scripted HTTP(S) responses, no mocks."""
from __future__ import annotations

import json
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

TOKEN = "test-token-0123456789-0123456789-abcdef"
STAMP = "2026-09-20T12:00:00.000Z"

Handler = Callable[["Exchange"], None]


def event(kind: str, sequence: int, **payload: Any) -> Dict[str, Any]:
    return {"type": kind, "runId": "run-1", "sequence": sequence, "timestamp": STAMP, **payload}


def result(text: str = "Hello") -> Dict[str, Any]:
    return {"runId": "run-1", "provider": "mock", "model": "demo", "text": text, "usage": {}, "steps": 1, "finishReason": "stop"}


def good_events(text: str = "Hello") -> List[Dict[str, Any]]:
    return [
        event("run.started", 1, provider="mock", model="demo"),
        event("text.delta", 2, text=text),
        event("run.completed", 3, result=result(text)),
    ]


def sse(events: List[Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


class Exchange(BaseHTTPRequestHandler):
    """One request; the host's route decides the answer."""

    protocol_version = "HTTP/1.1"
    server: "_Server"

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.host.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
        route = self.server.host.routes.get(self.path.split("?")[0].rsplit("/v1/", 1)[-1])
        if route is None:
            self.reply(404, {"error": {"code": "NOT_FOUND", "message": "no route", "retryable": False}})
        else:
            route(self)

    def reply(self, status: int, value: Any, headers: Optional[Dict[str, str]] = None, raw: Optional[bytes] = None) -> None:
        data = raw if raw is not None else json.dumps(value).encode()
        self.send_response(status)
        for name, text in {"AgenticDriver-Version": "1.0", "Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(name, text)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, body: bytes, hold_open: bool = False, content_type: str = "text/event-stream") -> None:
        """Send an SSE body; with ``hold_open`` keep writing comments until the client leaves."""
        self.send_response(200)
        self.send_header("AgenticDriver-Version", "1.0")
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if not hold_open:
            self.close_connection = True
            return
        deadline = time.monotonic() + 10
        try:
            while time.monotonic() < deadline:
                time.sleep(0.02)
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
        except OSError:
            self.server.host.disconnected.set()
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    host: "ScriptedHost"


@dataclass
class ScriptedHost:
    routes: Dict[str, Handler] = field(default_factory=dict)
    requests: List[Dict[str, Any]] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    _server: Optional[_Server] = None

    def start(self, tls: Optional["Pki"] = None, hostname: str = "127.0.0.1") -> "ScriptedHost":
        server = _Server(("127.0.0.1", 0), Exchange)
        server.host = self
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls.cert, tls.key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            scheme = "https"
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"{scheme}://{hostname}:{server.server_address[1]}/"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@dataclass
class Pki:
    ca: str
    cert: str
    key: str


def make_pki(directory: Path, name: str) -> Pki:
    """A throwaway CA and a leaf certificate for 127.0.0.1 only (so ``localhost`` mismatches)."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)

    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", f"/CN={name} CA",
            "-keyout", f"{name}-ca.key", "-out", f"{name}-ca.pem")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", f"{name}.key", "-out", f"{name}.csr")
    (directory / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{name}-ca.pem", "-CAkey", f"{name}-ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem")
    return Pki(str(directory / f"{name}-ca.pem"), str(directory / f"{name}.pem"), str(directory / f"{name}.key"))
