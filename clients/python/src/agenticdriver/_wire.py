"""Wire shapes of protocol 1.0 as checks, mirroring ``src/protocol/schemas.ts``.

Response objects and events tolerate unknown fields; the nested objects the protocol
declares strict (context manifests, artifacts, retrieval results, ingestion manifests)
reject them. Cross-field rules JSON Schema cannot express live in ``_rules.py``.
"""
from __future__ import annotations

import re
from typing import Dict

from ._schema import (
    MAX_SAFE_INTEGER,
    Check,
    any_json,
    array,
    boolean,
    integer,
    number,
    obj,
    one_of,
    record,
    string,
)

_DATE = re.compile(r"(\d\d\d\d)-(\d\d)-(\d\d)", re.ASCII)
_TIME = re.compile(r"(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?", re.ASCII | re.IGNORECASE)
_DATE_TIME_SEPARATOR = re.compile(r"[tT]|\s")
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_UUID_FORMAT = re.compile(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", re.ASCII | re.IGNORECASE)


def _is_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(text: str) -> bool:
    match = _TIME.fullmatch(text)
    if match is None or match.group(4) is None:
        return False
    hour, minute, second = int(match.group(1)), int(match.group(2)), float(match.group(3))
    sign = -1 if match.group(5) == "-" else 1
    zone_hour, zone_minute = int(match.group(6) or 0), int(match.group(7) or 0)
    if zone_hour > 23 or zone_minute > 59:
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    # A leap second is only valid at 23:59:60 UTC.
    utc_minute = minute - zone_minute * sign
    utc_hour = hour - zone_hour * sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def _is_uuid(text: str) -> bool:
    return _UUID_FORMAT.fullmatch(text) is not None


def is_date_time(text: str) -> bool:
    """RFC 3339 date-time with a required offset, rejecting impossible dates."""
    parts = _DATE_TIME_SEPARATOR.split(text)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])


_NON_SPACE_URI = re.compile(r"(https|app)://\S+")


def _is_source_uri(text: str) -> bool:
    return _NON_SPACE_URI.fullmatch(text) is not None


PROVIDER_ID = r"[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}"
MODEL_ID = r"[a-zA-Z0-9][a-zA-Z0-9._:/\[\]-]{0,199}"
TOOL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]{0,63}"
OPAQUE_KEY = r"[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}"
LOWER_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SHA256 = r"[0-9a-f]{64}"
HOST_TIMESTAMP = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"
MEDIA_TYPES = ("text/plain", "text/markdown", "image/png", "image/jpeg", "image/webp", "application/pdf")

timestamp = string(fmt=is_date_time)
host_timestamp = string(pattern=HOST_TIMESTAMP, fmt=is_date_time)
opaque_key = string(pattern=OPAQUE_KEY)
sha256 = string(pattern=SHA256)
non_empty = string(min_length=1)
count = integer(0, MAX_SAFE_INTEGER)
json_object = record(any_json())
media_type = one_of(*MEDIA_TYPES)

error_info = obj(
    {"code": non_empty, "message": string(), "retryable": boolean()},
    {"outcome": one_of("uncertain")},
)
error_envelope = obj({"error": error_info})

usage = obj(
    {},
    {
        "inputTokens": count,
        "outputTokens": count,
        "cachedInputTokens": count,
        "reasoningTokens": count,
        "costUsd": number(minimum=0),
        "apiEquivalentCostUsd": number(minimum=0),
    },
)

tool_call = obj({"id": string(1, 256), "name": string(pattern=TOOL_NAME), "arguments": json_object})

_page_or_line = integer(1, 1_000_000)
source_location = obj(
    {},
    {
        "documentId": opaque_key,
        "page": _page_or_line,
        "pageEnd": _page_or_line,
        "startLine": _page_or_line,
        "endLine": _page_or_line,
        "section": string(max_length=256),
        "threadId": opaque_key,
        "messageId": opaque_key,
    },
    strict=True,
)

_source_required: Dict[str, Check] = {"id": opaque_key, "revision": opaque_key}
_source_optional: Dict[str, Check] = {
    "title": string(max_length=256),
    "uri": string(max_length=2048, fmt=_is_source_uri),
    "location": source_location,
}
context_source = obj(_source_required, _source_optional, strict=True)

context_manifest = obj(
    {
        **_source_required,
        "mediaType": media_type,
        "bytes": integer(1, 33_554_432),
        "sha256": sha256,
        "origin": one_of("inline", "reference", "retrieval"),
    },
    {**_source_optional, "expiresAt": timestamp},
    strict=True,
)

_artifact_name = string(1, 128, pattern=r"[^/\\\x00-\x1f]+")
_artifact_media_type = one_of("text/plain", "text/markdown", "application/json")

draft_artifact = obj(
    {
        "name": _artifact_name,
        "mediaType": _artifact_media_type,
        "id": string(fmt=_is_uuid),
        "status": one_of("draft"),
        "content": string(max_length=262_144),
        "sha256": sha256,
        "sourceIds": array(opaque_key, max_items=16, unique=True),
    },
    strict=True,
)

_extractor = obj({"id": string(1, 128), "version": string(1, 128)}, strict=True)
_page_number = integer(1, 1000)

ingestion_manifest = obj(
    {
        "format": one_of("text", "markdown", "pdf", "email"),
        "inputSha256": sha256,
        "inputBytes": integer(1, 33_554_432),
        "extractor": _extractor,
        "chunker": obj({"id": one_of("source-lines-v1"), "maxBytes": integer(128, 16_384)}, strict=True),
        "extractedTextBytes": integer(0, 1_048_576),
        "indexedTextBytes": integer(0, 1_048_576),
        "chunks": integer(1, 256),
    },
    {
        "ocrExtractor": _extractor,
        "pages": obj(
            {
                "total": _page_number,
                "ocr": array(_page_number, max_items=1000),
                "empty": array(_page_number, max_items=1000),
            },
            strict=True,
        ),
        "messages": obj({"total": integer(1, 1000), "empty": integer(0, 1000)}, strict=True),
    },
    strict=True,
)

retrieval_result = obj(
    {
        "corpus": opaque_key,
        "index": obj(
            {
                "providerId": non_empty,
                "vendor": non_empty,
                "authMode": one_of("api-key", "none"),
                "model": non_empty,
                "dimensions": integer(1, 4096),
                "metric": one_of("cosine"),
                "version": non_empty,
            },
            {"accountId": non_empty},
            strict=True,
        ),
        "hits": array(
            obj(
                {
                    "chunkId": opaque_key,
                    "source": context_source,
                    "text": string(1, 16_384),
                    "score": number(-1, 1),
                    "documentSha256": sha256,
                },
                {"ingestion": ingestion_manifest},
                strict=True,
            ),
            max_items=16,
        ),
        "truncated": boolean(),
    },
    strict=True,
)

session_info = obj(
    {
        "id": string(pattern=LOWER_UUID),
        "revision": integer(0),
        "provider": string(pattern=PROVIDER_ID),
        "model": string(pattern=MODEL_ID),
        "mode": one_of("history", "native"),
        "state": one_of("ready", "running", "interrupted"),
        "createdAt": host_timestamp,
        "updatedAt": host_timestamp,
    },
    {"expiresAt": host_timestamp},
)

_idle_policy = one_of("pause", "continue")
_ticket_id = string(1, 256)

approval_request = obj(
    {
        "approvalId": _ticket_id,
        "runId": _ticket_id,
        "call": tool_call,
        "requestedAt": timestamp,
        "idlePolicy": _idle_policy,
    },
    {"expiresAt": timestamp},
)

approval_resolution = obj(
    {
        "approvalId": _ticket_id,
        "runId": _ticket_id,
        "callId": _ticket_id,
        "outcome": one_of("approved", "denied", "cancelled", "expired"),
        "decidedAt": timestamp,
    }
)

tool_execution = obj({"executionId": _ticket_id, "runId": _ticket_id, "call": tool_call})

# Bodies this client sends (strict, as the host parses them) and the receipts it gets back.
approval_decision = obj(
    {
        "approvalId": _ticket_id,
        "runId": _ticket_id,
        "call": obj({"id": _ticket_id, "name": string(pattern=TOOL_NAME), "arguments": json_object}, strict=True),
        "decision": one_of("approve", "deny", "cancel"),
    },
    strict=True,
)

_execution_identity: Dict[str, Check] = {"executionId": _ticket_id, "runId": _ticket_id, "callId": _ticket_id}
tool_execution_identity = obj(_execution_identity, strict=True)
tool_execution_output = obj({**_execution_identity, "output": any_json()}, strict=True)
tool_execution_failure = obj({**_execution_identity, "error": one_of("APPLICATION_TOOL_FAILED")}, strict=True)
tool_execution_receipt = obj({**_execution_identity, "status": one_of("progress", "accepted")})

run_result = obj(
    {
        "runId": non_empty,
        "provider": non_empty,
        "model": non_empty,
        "text": string(),
        "usage": usage,
        "steps": integer(1),
        "finishReason": one_of("stop", "length"),
    },
    {
        "output": any_json(),
        "session": session_info,
        "sources": array(context_manifest, max_items=16),
        "artifacts": array(draft_artifact, max_items=1),
        "retrieval": retrieval_result,
    },
)

event_envelope = obj(
    {
        "type": non_empty,
        "runId": non_empty,
        "sequence": integer(1, MAX_SAFE_INTEGER),
        "timestamp": timestamp,
    },
    {"optional": boolean()},
)

EVENT_PAYLOADS: Dict[str, Check] = {
    "run.started": obj({"provider": non_empty, "model": non_empty}),
    "step.started": obj({"step": integer(1)}),
    "text.delta": obj({"text": string()}),
    "run.progress": obj({"phase": one_of("model", "tool", "context")}),
    "approval.requested": obj({"approval": approval_request}),
    "approval.resolved": obj({"resolution": approval_resolution}),
    "tool.execution.requested": obj({"execution": tool_execution}),
    "tool.called": obj({"call": tool_call}),
    "tool.completed": obj({"callId": non_empty, "output": any_json()}),
    "usage.reported": obj({"step": integer(1), "usage": usage}),
    "run.completed": obj({"result": run_result}),
    "run.failed": obj({"error": error_info}),
    "run.cancelled": obj({"error": error_info}),
}
TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.failed", "run.cancelled"})

protocol_info = obj(
    {
        "protocol": one_of("agenticdriver"),
        "version": one_of("1.0"),
        "supportedVersions": array(non_empty),
        "features": array(string()),
    }
)

provider = obj(
    {
        "id": non_empty,
        "name": string(),
        "vendor": non_empty,
        "authMode": one_of("api-key", "cli-session", "none"),
        "capabilities": obj({"tools": boolean(), "textStreaming": boolean()}, extra=boolean()),
    },
    {
        "models": array(string()),
        "usageStatId": string(),
        "inputMediaTypes": record(array(media_type, max_items=6)),
        "health": obj(
            {
                "status": one_of("ready", "unauthenticated", "unavailable", "unsupported", "unknown"),
                "code": non_empty,
                "message": string(),
                "checkedAt": timestamp,
            }
        ),
        "modelCatalog": obj(
            {
                "source": one_of("provider", "configured", "unavailable"),
                "models": array(non_empty, max_items=1000),
                "complete": boolean(),
            }
        ),
    },
)

provider_list = obj({"providers": array(provider)})
