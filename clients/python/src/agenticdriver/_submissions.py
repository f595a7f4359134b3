"""Bodies of approval decisions, tool-execution reports, session and job calls, checked
before they are sent.

The host parses them strictly; checking here turns a malformed submission into the same
typed error the host would answer (``INVALID_APPROVAL``, ``INVALID_TOOL_EXECUTION``,
``INVALID_SESSION``, ``INVALID_JOB``, ``INVALID_JOB_CURSOR``) without spending a request,
so a valid retry is still possible.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping

from ._endpoint import encode_body
from ._schema import Check, Invalid
from .generated.checks import (
    approval_decision,
    job_events_request,
    job_identity,
    job_list_request,
    job_submit,
    ingest_request,
    retrieval_delete_request,
    retrieval_index_request,
    retrieval_search,
    session_create,
    session_identity,
    session_list_request,
    tool_execution_identity,
    tool_execution_result,
)
from .errors import DriverError

DECISION_ENDPOINT = "v1/approvals/decisions"
PROGRESS_ENDPOINT = "v1/tool-executions/progress"
RESULT_ENDPOINT = "v1/tool-executions/results"
SESSION_CREATE_ENDPOINT = "v1/sessions/create"
SESSION_READ_ENDPOINT = "v1/sessions/read"
SESSION_DELETE_ENDPOINT = "v1/sessions/delete"
SESSION_LIST_ENDPOINT = "v1/sessions/list"
JOB_SUBMIT_ENDPOINT = "v1/jobs/submit"
JOB_READ_ENDPOINT = "v1/jobs/read"
JOB_CANCEL_ENDPOINT = "v1/jobs/cancel"
JOB_LIST_ENDPOINT = "v1/jobs/list"
JOB_EVENTS_ENDPOINT = "v1/jobs/events"
SEARCH_ENDPOINT = "v1/retrieval/search"
INDEX_ENDPOINT = "v1/retrieval/index"
DELETE_ENDPOINT = "v1/retrieval/delete"
INGEST_ENDPOINT = "v1/retrieval/ingest"


# How deep the host follows arguments and outputs when it checks that they survive its
# JSON parsing unchanged; anything deeper, or a "__proto__" key, it refuses.
MAX_PLAIN_JSON_DEPTH = 64


def _plain_json(value: object, path: str, depth: int = 0) -> None:
    if depth > MAX_PLAIN_JSON_DEPTH:
        raise Invalid(f"{path} is nested more than {MAX_PLAIN_JSON_DEPTH} levels deep")
    if isinstance(value, Mapping):
        if "__proto__" in value:
            raise Invalid(f"{path} has a __proto__ key")
        for key, child in value.items():
            _plain_json(child, f"{path}.{key}", depth + 1)
    elif isinstance(value, (list, tuple)):
        for child in value:
            _plain_json(child, f"{path}[]", depth + 1)


def _checked_body(value: object, check: Check, code: str, what: str, plain: str = "") -> bytes:
    try:
        check(value, what)
        assert isinstance(value, Mapping)
        if plain == "arguments":
            _plain_json(value["call"]["arguments"], f"{what}.call.arguments")
        elif plain == "output":
            _plain_json(value["output"], f"{what}.output")
        return encode_body(value)
    except Invalid as problem:
        raise DriverError(code, f"The {what} is invalid: {problem}.") from None
    except (TypeError, ValueError, RecursionError):
        raise DriverError(code, f"The {what} is not representable as JSON.") from None


def decision_body(decision: object) -> bytes:
    return _checked_body(decision, approval_decision, "INVALID_APPROVAL", "approval decision", plain="arguments")


def progress_body(identity: object) -> bytes:
    return _checked_body(identity, tool_execution_identity, "INVALID_TOOL_EXECUTION", "tool execution identity")


def result_body(result: object) -> bytes:
    has_output = isinstance(result, Mapping) and "output" in result
    return _checked_body(result, tool_execution_result, "INVALID_TOOL_EXECUTION", "tool execution result", plain="output" if has_output else "")


def identity_of(submission: Mapping[str, Any]) -> Mapping[str, Any]:
    return {key: submission[key] for key in ("executionId", "runId", "callId")}


def session_create_body(request: object) -> bytes:
    return _checked_body(request, session_create, "INVALID_SESSION", "session request")


def session_identity_body(session_id: object) -> bytes:
    return _checked_body({"id": session_id}, session_identity, "INVALID_SESSION", "session identity")


def job_submit_body(submission: object) -> bytes:
    return _checked_body(submission, job_submit, "INVALID_JOB", "job submission")


def job_identity_body(job_id: object) -> bytes:
    return _checked_body({"id": job_id}, job_identity, "INVALID_JOB", "job identity")


def job_list_body(request: object) -> bytes:
    return _checked_body({} if request is None else request, job_list_request, "INVALID_JOB", "job list request")


def session_list_body(request: object) -> bytes:
    return _checked_body({} if request is None else request, session_list_request, "INVALID_SESSION", "session list request")


def job_events_body(request: object) -> bytes:
    return _checked_body(request, job_events_request, "INVALID_JOB_CURSOR", "job events request")


def search_body(request: object) -> bytes:
    return _checked_body(request, retrieval_search, "INVALID_RETRIEVAL", "search request")


def index_body(request: object) -> bytes:
    return _checked_body(request, retrieval_index_request, "INVALID_RETRIEVAL", "index request")


def delete_body(corpus: object, source_id: object, revision: object) -> bytes:
    return _checked_body({"corpus": corpus, "sourceId": source_id, "revision": revision}, retrieval_delete_request, "INVALID_RETRIEVAL", "delete request")


def ingest_body(request: object) -> bytes:
    return _checked_body(request, ingest_request, "INVALID_INGESTION", "ingestion request")


def source_of(request: Mapping[str, Any], source: Mapping[str, Any]) -> Dict[str, str]:
    """What a receipt must echo: the request's corpus and its source's id and revision."""
    return {"corpus": request["corpus"], "sourceId": source["id"], "revision": source["revision"]}


def job_stream_endpoint(job_id: str) -> str:
    """The live event stream of a job (its id already checked by ``job_identity_body``)."""
    return f"v1/jobs/{job_id}/stream"
