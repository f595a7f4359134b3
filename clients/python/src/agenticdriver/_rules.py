"""Cross-field wire rules and the checks of a result against the request that made it.

Each function assumes its value already passed the matching generated shape check
(``generated/checks.py``) and raises ``Invalid`` on the first broken rule.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence
from urllib.parse import urlsplit

from ._schema import Invalid, fail
from .generated.checks import (
    EVENT_CHECKS,
    approval_resolution,
    error_info,
    ingest_result,
    job_event_page,
    job_info,
    job_list,
    protocol_info,
    provider_list,
    retrieval_delete_result,
    retrieval_index_receipt,
    retrieval_result,
    run_result,
    session_delete_result,
    session_list,
    session_snapshot,
    tool_execution_receipt,
)

Json = Dict[str, Any]

DEFAULT_RETRIEVAL_LIMIT = 8
OUTCOME_OF_DECISION = {"approve": "approved", "deny": "denied", "cancel": "cancelled"}
_RECONCILE = "; reconcile from the event stream instead of retrying"
DEFAULT_MAX_CONTEXT_BYTES = 65_536


def _check_range(location: Mapping[str, Any], start: str, end: str, path: str) -> None:
    if end in location and (start not in location or location[end] < location[start]):
        fail(path, f"has {end} without a {start} at or before it")


def check_location(location: Optional[Mapping[str, Any]], path: str) -> None:
    if location is None:
        return
    _check_range(location, "page", "pageEnd", path)
    _check_range(location, "startLine", "endLine", path)


def check_source(source: Mapping[str, Any], path: str) -> None:
    check_location(source.get("location"), f"{path}/location")
    uri = source.get("uri")
    if uri is not None:
        try:
            parts = urlsplit(uri)
            credentials = parts.username is not None or parts.password is not None
            parts.port  # noqa: B018 - raises on an invalid port
        except ValueError:
            fail(f"{path}/uri", "is not a valid URI")
        if credentials:
            fail(f"{path}/uri", "must not carry credentials")


def check_sources(sources: Sequence[Json]) -> None:
    ids = [source["id"] for source in sources]
    if len(set(ids)) != len(ids):
        fail("result/sources", "lists a source twice")
    for index, source in enumerate(sources):
        check_source(source, f"result/sources/{index}")


def check_artifacts(artifacts: Sequence[Json], sources: Sequence[Json]) -> None:
    known = {source["id"] for source in sources}
    for index, artifact in enumerate(artifacts):
        path = f"result/artifacts/{index}"
        if artifact["name"] in (".", ".."):
            fail(f"{path}/name", "must name a file")
        if any(source_id not in known for source_id in artifact["sourceIds"]):
            fail(f"{path}/sourceIds", "names a source the result does not list")


def check_ingestion(manifest: Mapping[str, Any], path: str) -> None:
    if not 1 <= manifest["indexedTextBytes"] <= manifest["extractedTextBytes"]:
        fail(path, "indexes more text than it extracted, or none")
    fmt = manifest["format"]
    pages = manifest.get("pages")
    messages = manifest.get("messages")
    if fmt == "pdf":
        if pages is None or messages is not None:
            fail(path, "must describe pages (and only pages) for a PDF")
        _check_pdf_pages(manifest, pages, path)
    elif pages is not None or "ocrExtractor" in manifest:
        fail(path, "describes pages for a document that is not a PDF")
    if fmt == "email":
        if messages is None:
            fail(path, "must describe messages for an email")
        if messages["empty"] >= messages["total"] or manifest["chunks"] < messages["total"] - messages["empty"]:
            fail(f"{path}/messages", "is inconsistent with the chunks")
    elif messages is not None:
        fail(path, "describes messages for a document that is not an email")


def _check_pdf_pages(manifest: Mapping[str, Any], pages: Mapping[str, Any], path: str) -> None:
    total, ocr, empty = pages["total"], pages["ocr"], pages["empty"]
    for name, numbers in (("ocr", ocr), ("empty", empty)):
        if len(set(numbers)) != len(numbers) or any(number > total for number in numbers):
            fail(f"{path}/pages/{name}", "has duplicate or out-of-range pages")
    if set(ocr) & set(empty):
        fail(f"{path}/pages", "lists a page as both recognised and empty")
    if len(empty) >= total or manifest["chunks"] < total - len(empty):
        fail(f"{path}/pages", "is inconsistent with the chunks")
    if bool(ocr) != ("ocrExtractor" in manifest):
        fail(path, "must name an OCR extractor exactly when pages were recognised")


def check_retrieval(retrieval: Json, options: Mapping[str, Any], sources: Sequence[Json]) -> None:
    check_hits(retrieval, options, "result/retrieval")
    _check_retrieval_sources(retrieval["hits"], sources)


def check_hits(retrieval: Json, options: Mapping[str, Any], path: str) -> None:
    """Retrieval evidence in the requested scope and budget: corpus, limit (default 8),
    unique chunks, selected sources, minScore, maxContextBytes (default 65,536)."""
    if retrieval["corpus"] != options["corpus"]:
        fail(f"{path}/corpus", "differs from the requested corpus")
    hits: List[Json] = retrieval["hits"]
    if len(hits) > options.get("limit", DEFAULT_RETRIEVAL_LIMIT):
        fail(f"{path}/hits", "exceeds the requested limit")
    chunk_ids = [hit["chunkId"] for hit in hits]
    if len(set(chunk_ids)) != len(chunk_ids):
        fail(f"{path}/hits", "lists a chunk twice")
    selected = options.get("sourceIds")
    min_score = options.get("minScore", -1)
    total_bytes = 0
    for index, hit in enumerate(hits):
        hit_path = f"{path}/hits/{index}"
        check_source(hit["source"], f"{hit_path}/source")
        if selected is not None and hit["source"]["id"] not in selected:
            fail(f"{hit_path}/source/id", "was not among the requested sources")
        if hit["score"] < min_score:
            fail(f"{hit_path}/score", "is below the requested minimum")
        if "ingestion" in hit:
            check_ingestion(hit["ingestion"], f"{hit_path}/ingestion")
        total_bytes += len(hit["text"].encode("utf-8", "surrogatepass"))
    if total_bytes > options.get("maxContextBytes", DEFAULT_MAX_CONTEXT_BYTES):
        fail(f"{path}/hits", "carry more text than the requested maximum")


def _check_retrieval_sources(hits: Sequence[Json], sources: Sequence[Json]) -> None:
    """Every hit is cited by exactly one retrieval manifest that describes it."""
    retrieved = {source["id"]: source for source in sources if source["origin"] == "retrieval"}
    if len(retrieved) != len(hits):
        fail("result/sources", "must list exactly one retrieval manifest per hit")
    for index, hit in enumerate(hits):
        source = retrieved.get(hit["chunkId"])
        if (
            source is None
            or source["revision"] != hit["source"]["revision"]
            or source.get("location", {}).get("documentId") != hit["source"]["id"]
            or source["bytes"] != len(hit["text"].encode("utf-8", "surrogatepass"))
        ):
            fail(f"result/retrieval/hits/{index}", "has no matching retrieval manifest in result/sources")


def check_session(session: Json, binding: Mapping[str, Any], result: Json) -> None:
    path = "result/session"
    if session["id"] != str(binding["id"]).lower():
        fail(f"{path}/id", "differs from the requested session")
    if session["revision"] != binding["revision"] + 1:
        fail(f"{path}/revision", "must be the requested revision plus one")
    if session["provider"] != result["provider"] or session["model"] != result["model"]:
        fail(path, "names another provider or model than the result")
    if session["state"] != "ready":
        fail(f"{path}/state", "must be ready after a completed run")
    check_session_times(session, path)


def check_session_times(session: Mapping[str, Any], path: str) -> None:
    """Host timestamps (fixed-width UTC, so text order is time order) and expiry by state."""
    if session["updatedAt"] < session["createdAt"]:
        fail(f"{path}/updatedAt", "is before createdAt")
    expires = session.get("expiresAt")
    if session["state"] == "running":
        if expires is not None:
            fail(f"{path}/expiresAt", "must be absent while the session is running")
    elif expires is None or expires <= session["updatedAt"]:
        fail(f"{path}/expiresAt", "must be later than updatedAt")


def check_run_result(result: object, request: Mapping[str, Any], run_id: Optional[str]) -> Json:
    """Shape and request checks of a final result; ``run_id`` is the stream's run."""
    run_result(result, "result")
    assert isinstance(result, dict)
    if run_id is not None and result["runId"] != run_id:
        fail("result/runId", "differs from the run")
    if result["provider"] != request.get("provider") or result["model"] != request.get("model"):
        fail("result", "names another provider or model than the request")
    sources: List[Json] = result.get("sources", [])
    check_sources(sources)
    check_artifacts(result.get("artifacts", []), sources)
    options = request.get("retrieval")
    if (options is None) != ("retrieval" not in result):
        fail("result/retrieval", "must be present exactly when the request asked for retrieval")
    if options is not None:
        check_retrieval(result["retrieval"], options, sources)
    elif any(source["origin"] == "retrieval" for source in sources):
        fail("result/sources", "cites retrieval the request did not ask for")
    binding = request.get("session")
    if (binding is None) != ("session" not in result):
        fail("result/session", "must be present exactly when the request named a session")
    if binding is not None:
        check_session(result["session"], binding, result)
    return result


def check_protocol_info(value: object) -> Json:
    protocol_info(value, "")
    assert isinstance(value, dict)
    if "1.0" not in value["supportedVersions"]:
        fail("/supportedVersions", "must contain 1.0")
    return value


def check_provider_list(value: object) -> List[Json]:
    provider_list(value, "")
    assert isinstance(value, dict)
    providers: List[Json] = value["providers"]
    return providers


def error_from_envelope(value: object) -> Optional[Json]:
    """The ``error`` object of a valid error envelope, else None."""
    if not isinstance(value, dict) or "error" not in value:
        return None
    try:
        error_info(value["error"], "error")
    except Invalid:
        return None
    info: Json = value["error"]
    return info


def check_approval_receipt(value: object, decision: Mapping[str, Any]) -> Json:
    """The resolution must answer exactly this decision; its effect shows in the stream."""
    approval_resolution(value, "resolution")
    assert isinstance(value, dict)
    if (value["approvalId"], value["runId"], value["callId"]) != (decision["approvalId"], decision["runId"], decision["call"]["id"]):
        fail("resolution", "answers another approval, run or call" + _RECONCILE)
    if value["outcome"] != OUTCOME_OF_DECISION[decision["decision"]]:
        fail("resolution/outcome", f"{value['outcome']!r} does not match the decision {decision['decision']!r}" + _RECONCILE)
    return value


def check_tool_receipt(value: object, identity: Mapping[str, Any], status: str) -> Json:
    """A progress or result receipt must echo the execution identity and the expected status."""
    tool_execution_receipt(value, "receipt")
    assert isinstance(value, dict)
    if any(value[key] != identity[key] for key in ("executionId", "runId", "callId")):
        fail("receipt", "names another execution, run or call" + _RECONCILE)
    if value["status"] != status:
        fail("receipt/status", f"must be {status!r}" + _RECONCILE)
    return value


# ---------------------------------------------------------------------------
# Retrieval search and source receipts


def check_retrieval_search(value: object, request: Mapping[str, Any]) -> Json:
    """A search answer within the request's corpus, sources, limit, score and byte budget."""
    retrieval_result(value, "answer")
    assert isinstance(value, dict)
    check_hits(value, request, "answer")
    return value


_RECEIPT_SHAPES = {"index": retrieval_index_receipt, "delete": retrieval_delete_result, "ingest": ingest_result}


def check_source_receipt(value: object, kind: str, expected: Mapping[str, str]) -> Json:
    """An index/delete/ingest receipt echoes corpus, sourceId and revision; an ingestion
    manifest (required for ingest) counts the receipt's chunks and is consistent."""
    _RECEIPT_SHAPES[kind](value, "receipt")
    assert isinstance(value, dict)
    for key in ("corpus", "sourceId", "revision"):
        if value[key] != expected[key]:
            fail(f"receipt/{key}", f"is {value[key]!r}, not the requested {expected[key]!r}")
    manifest = value.get("ingestion")
    if manifest is not None:
        if manifest["chunks"] != value.get("chunks"):
            fail("receipt/ingestion/chunks", "differs from the receipt's chunks")
        check_ingestion(manifest, "receipt/ingestion")
    return value


# ---------------------------------------------------------------------------
# Conversation sessions


def check_session_snapshot(value: object, session_id: Optional[str] = None) -> Json:
    """A snapshot of the session asked for (ids compare case-insensitively), with sane times."""
    session_snapshot(value, "snapshot")
    assert isinstance(value, dict)
    session = value["session"]
    if session_id is not None and session["id"].lower() != session_id.lower():
        fail("snapshot/session/id", "names another session")
    check_session_times(session, "snapshot/session")
    return value


def check_session_created(value: object, request: Mapping[str, Any]) -> Json:
    """A create receipt echoes provider, model, mode, history and instructions, at revision 0, ready."""
    snapshot = check_session_snapshot(value)
    session = snapshot["session"]
    for key in ("provider", "model", "mode"):
        if session[key] != request[key]:
            fail(f"snapshot/session/{key}", "differs from the request")
    if session["revision"] != 0:
        fail("snapshot/session/revision", "must be 0 for a new session")
    if session["state"] != "ready":
        fail("snapshot/session/state", "must be ready for a new session")
    if snapshot.get("instructions") != request.get("instructions"):
        fail("snapshot/instructions", "differ from the requested instructions")
    echoed = [(message["role"], message["content"]) for message in snapshot["history"]]
    if echoed != [(message["role"], message["content"]) for message in request.get("history", [])]:
        fail("snapshot/history", "differs from the requested history")
    return snapshot


def check_session_deleted(value: object, session_id: str) -> Json:
    session_delete_result(value, "receipt")
    assert isinstance(value, dict)
    if value["id"].lower() != session_id.lower():
        fail("receipt/id", "names another session")
    if value["deleted"] is not True:
        fail("receipt/deleted", "must be true")
    return value


# ---------------------------------------------------------------------------
# Durable jobs

DEFAULT_LIST_LIMIT = 20


def _check_listing(items: List[Json], limit: int, what: str, path: str) -> None:
    """At most ``limit``, each listed once, most recently updated first."""
    if len(items) > limit:
        fail(path, f"holds more than the limit of {limit}")
    ids = [item["id"] for item in items]
    if len(set(ids)) != len(ids):
        fail(path, f"names a {what} twice")
    # Host timestamps are fixed-width UTC, so text order is time order.
    for index in range(1, len(items)):
        if items[index]["updatedAt"] > items[index - 1]["updatedAt"]:
            fail(f"{path}/{index}", "is newer than the one before (most recently updated come first)")


def check_session_list(value: object, request: Mapping[str, Any]) -> List[Json]:
    """The caller's sessions: the listing rules and each session's own."""
    session_list(value, "list")
    assert isinstance(value, dict)
    sessions: List[Json] = value["sessions"]
    _check_listing(sessions, request.get("limit", DEFAULT_LIST_LIMIT), "session", "list/sessions")
    for index, session in enumerate(sessions):
        check_session_times(session, f"list/sessions/{index}")
    return sessions


TERMINAL_JOB_STATES = frozenset({"completed", "failed", "cancelled", "interrupted"})
MAX_JOB_PAGE_EVENTS = 100
_TERMINAL_EVENT_STATES = {"run.completed": ("completed",), "run.cancelled": ("cancelled",), "run.failed": ("failed", "interrupted")}
_INTERACTIVE_EVENTS = frozenset({"tool.execution.requested", "approval.requested", "approval.resolved"})


def check_job_info(value: object, path: str = "job") -> Json:
    """JobInfo invariants: expiry exactly when finished and after the last update, time order, cursors."""
    job_info(value, path)
    assert isinstance(value, dict)
    terminal = value["state"] in TERMINAL_JOB_STATES
    # Host timestamps are fixed-width UTC, so text order is time order.
    if value["updatedAt"] < value["createdAt"]:
        fail(f"{path}/updatedAt", "is before createdAt")
    expires = value.get("expiresAt")
    if terminal != (expires is not None):
        fail(f"{path}/expiresAt", "must be present exactly when the job is finished")
    if expires is not None and expires <= value["updatedAt"]:
        fail(f"{path}/expiresAt", "must be later than updatedAt")
    if value["state"] == "queued" and value["cursor"] != 0:
        fail(f"{path}/cursor", "must be 0 while the job is queued")
    if terminal and value["cursor"] < 2:
        fail(f"{path}/cursor", "must count at least run.started and the terminal event of a finished job")
    return value


def check_job_receipt(value: object, *, job_id: Optional[str] = None, request: Optional[Mapping[str, Any]] = None) -> Json:
    """submit: the job runs the requested provider and model; read/cancel: the job named."""
    job = check_job_info(value)
    if job_id is not None and job["id"] != job_id:
        fail("job/id", "names another job")
    if request is not None and (job["provider"] != request.get("provider") or job["model"] != request.get("model")):
        fail("job", "runs another provider or model than the request")
    return job


def check_job_list(value: object, request: Mapping[str, Any]) -> List[Json]:
    """The caller's jobs: the listing rules, only the asked-for state, and each job's own rules."""
    job_list(value, "list")
    assert isinstance(value, dict)
    jobs: List[Json] = value["jobs"]
    _check_listing(jobs, request.get("limit", DEFAULT_LIST_LIMIT), "job", "list/jobs")
    for index, job in enumerate(jobs):
        check_job_info(job, f"list/jobs/{index}")
        if "state" in request and job["state"] != request["state"]:
            fail(f"list/jobs/{index}/state", f"is not the requested {request['state']}")
    return jobs


def check_job_event(event: Mapping[str, Any], job: Mapping[str, Any], expected_sequence: int, path: str = "event") -> None:
    """One event of a job's log (page or live stream): the job's run, in order, run.started
    first naming the job's provider and model, no interactive events, the job's own result."""
    kind = event["type"]
    if kind in _INTERACTIVE_EVENTS:
        fail(path, f"{kind} cannot occur in a job (jobs never dispatch application tools or ask for approvals)")
    if event["runId"] != job["runId"]:
        fail(f"{path}/runId", "differs from the job's run")
    if event["sequence"] != expected_sequence:
        fail(f"{path}/sequence", f"must be {expected_sequence}")
    if (event["sequence"] == 1) != (kind == "run.started"):
        fail(path, "run.started must come exactly at sequence 1")
    if kind == "run.started" and (event["provider"] != job["provider"] or event["model"] != job["model"]):
        fail(path, "run.started names another provider or model than the job")
    if kind == "run.completed":
        result = event["result"]
        if result["runId"] != job["runId"] or result["provider"] != job["provider"] or result["model"] != job["model"]:
            fail(f"{path}/result", "names another run, provider or model than the job")
        if "session" in result:
            fail(f"{path}/result/session", "cannot occur in a job result")


def _check_job_page_event(event: Mapping[str, Any], job: Mapping[str, Any], expected_sequence: int, path: str) -> None:
    check_job_event(event, job, expected_sequence, path)
    kind = event["type"]
    if event["sequence"] > job["cursor"]:
        fail(f"{path}/sequence", "is beyond the job's cursor")
    terminal = kind in _TERMINAL_EVENT_STATES
    finished = job["state"] in TERMINAL_JOB_STATES
    at_cursor = event["sequence"] == job["cursor"]
    if terminal and not (at_cursor and finished):
        fail(path, "a terminal event comes only last in a finished job's log")
    if at_cursor and finished and not terminal:
        fail(path, "the last event of a finished job must be terminal")
    if not terminal:
        return
    if job["state"] not in _TERMINAL_EVENT_STATES[kind]:
        fail(path, f"{kind} does not match the job state {job['state']!r}")
    if kind == "run.failed" and job["state"] == "interrupted" and event["error"].get("outcome") != "uncertain":
        fail(f"{path}/error/outcome", "must be uncertain for an interrupted job")


def check_job_event_page(value: object, request: Mapping[str, Any]) -> Json:
    """A page of the job asked for: within the limit, contiguous after ``after``, cursors that agree."""
    job_event_page(value, "page")
    assert isinstance(value, dict)
    job = check_job_info(value["job"], "page/job")
    if job["id"] != request["id"]:
        fail("page/job/id", "names another job")
    events: List[Json] = value["events"]
    limit = request.get("limit", MAX_JOB_PAGE_EVENTS)
    if len(events) > limit:
        fail("page/events", f"holds more than the limit of {limit}")
    after: int = request["after"]
    if after > job["cursor"]:
        fail("page/job/cursor", "is before the requested position")
    for index, event in enumerate(events):
        payload = EVENT_CHECKS.get(event["type"])
        if payload is None:
            fail(f"page/events/{index}/type", "is not a known event type")
        payload(event, f"page/events/{index}")
        _check_job_page_event(event, job, after + 1 + index, f"page/events/{index}")
    last = events[-1]["sequence"] if events else after
    if value["nextCursor"] != last:
        fail("page/nextCursor", "must be the last sequence of the page")
    if value["hasMore"] != (last < job["cursor"]):
        fail("page/hasMore", "disagrees with the job's cursor")
    if value["hasMore"] and not events:
        fail("page/hasMore", "cannot be true for an empty page")
    return value
