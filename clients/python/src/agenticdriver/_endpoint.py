"""Where and how a client talks to a host: base URL rules, credentials, request headers.

Shared by the sync and async clients so both enforce the same consumer rules.
"""
from __future__ import annotations

import ipaddress
import json
import math
import ssl
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional
from urllib.parse import urlsplit

from .errors import DriverError

PROTOCOL_VERSION = "1.0"
DEFAULT_DISCOVERY_TIMEOUT = 10.0


def is_loopback_host(host: str) -> bool:
    """localhost, 127.0.0.0/8, ::1 and IPv4-mapped loopback literals; no DNS lookups.

    The host's rule, the same in every client (protocol/fixtures/base-url.json): only
    literals count, so a shorthand such as ``127.1`` or a zone id is not loopback.
    """
    if host.lower() == "localhost":
        return True
    if "%" in host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


@dataclass(frozen=True)
class Endpoint:
    scheme: str
    host: str
    port: int
    netloc: str
    base_path: str
    token: str

    @classmethod
    def parse(cls, url: object, token: object) -> "Endpoint":
        invalid = DriverError("INVALID_URL", "The host URL is not an absolute http(s) URL (e.g. http://127.0.0.1:7433).")
        if not isinstance(url, str):
            raise invalid
        if "?" in url or "#" in url:
            raise DriverError("INSECURE_TRANSPORT", "The host URL must not carry a query or fragment.")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise invalid from None
        host = parts.hostname
        # An IPv6 zone id (``[::1%25lo]``) is not part of a URL a browser or the other clients parse.
        if parts.scheme not in ("http", "https") or not host or "%" in host:
            raise invalid
        if "@" in parts.netloc:
            raise DriverError("INSECURE_TRANSPORT", "The host URL must not carry credentials.")
        if parts.scheme == "http" and not is_loopback_host(host):
            raise DriverError("INSECURE_TRANSPORT", "Plain HTTP is allowed only for loopback hosts; use HTTPS.")
        if not isinstance(token, str) or not token or any(not 33 <= ord(ch) <= 126 for ch in token):
            raise DriverError("AUTH_REQUIRED", "A bearer token of printable ASCII characters is required.")
        base_path = parts.path if parts.path.endswith("/") else parts.path + "/"
        default_port = 443 if parts.scheme == "https" else 80
        return cls(parts.scheme, host, port or default_port, parts.netloc, base_path, token)

    def path(self, endpoint: str) -> str:
        return self.base_path + endpoint

    def url(self, endpoint: str) -> str:
        return f"{self.scheme}://{self.netloc}{self.path(endpoint)}"

    def headers(self, accept: str, has_body: bool) -> Dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "AgenticDriver-Version": PROTOCOL_VERSION,
            "AgenticDriver-Accept-Optional-Events": "true",
            "Accept": accept,
            "Accept-Encoding": "identity",
        }
        if has_body:
            headers["Content-Type"] = "application/json"
        return headers


def encode_body(request: Mapping[str, Any]) -> bytes:
    if not isinstance(request, Mapping):
        raise TypeError("A request must be a mapping.")
    return json.dumps(request, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def check_timeout(name: str, value: object) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite positive number of seconds or None.")
    return float(value)


def tls_context(ca_file: Optional[str]) -> ssl.SSLContext:
    """Verified TLS (certificate and hostname); ``ca_file`` trusts a private CA for this client only."""
    return ssl.create_default_context(cafile=ca_file)


def check_stream_only(request: Mapping[str, Any]) -> None:
    """Features that need the event stream cannot use the buffered JSON result."""
    if request.get("applicationTools"):
        raise DriverError("TOOL_STREAM_REQUIRED", "Application tools need stream(), not run().")
    if request.get("approvals") is not None:
        raise DriverError("APPROVAL_STREAM_REQUIRED", "Interactive approvals need stream(), not run().")
