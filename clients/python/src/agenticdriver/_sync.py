"""The synchronous client on the standard library (``http.client`` + ``ssl``).

One connection per call, never pooled: closing a stream closes its socket, which is
what cancels the run on the host. Redirects are never followed and nothing is retried.
"""
from __future__ import annotations

import http.client
import socket
import time
import weakref
from contextlib import closing
from types import TracebackType
from typing import Any, Callable, Dict, Generator, Iterator, List, Mapping, Optional, Tuple, Type, cast

from ._endpoint import (
    DEFAULT_DISCOVERY_TIMEOUT,
    Endpoint,
    check_stream_only,
    check_timeout,
    encode_body,
    tls_context,
)
from ._json import MAX_JSON_BYTES
from ._responses import (
    MAX_ERROR_BODY_BYTES,
    READ_SIZE,
    JobStreamParser,
    RunStreamParser,
    check_version,
    decode_answer,
    decode_protocol,
    decode_providers,
    error_for_status,
    is_success,
    require_event_stream,
)
from ._run_events import CommittedEventChecker, JobStreamChecker, RunRecordChecker, error_of, settled
from ._submissions import (
    decision_body,
    path_of,
    progress_body,
    request_body,
    result_body,
)
from ._tail import DEFAULT_INITIAL_DELAY, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_DELAY, TERMINAL_JOB_STATES, TailPolicy, incomplete, is_resumable
from ._tickets import (
    PendingApproval,
    PendingExecution,
    ToolFunctions,
    approval_request_of,
    check_tool_functions,
    execution_of,
    run_tool,
)
from .errors import DriverError
from .generated import operations as ops
from .types import (
    ApprovalDecision,
    ApprovalResolution,
    JobEventPage,
    JobEventsRequest,
    RunEventPage,
    RunEventsRequest,
    RunInfo,
    JobInfo,
    JobListRequest,
    JobSubmit,
    IngestRequest,
    IngestResult,
    Provider,
    ProtocolInfo,
    RunEvent,
    RunRequest,
    RetrievalDeleteRequest,
    RetrievalDeleteResult,
    RetrievalIndexReceipt,
    RetrievalIndexRequest,
    RetrievalResult,
    RetrievalSearch,
    RunResult,
    SessionCreate,
    SessionDeleteResult,
    SessionInfo,
    SessionListRequest,
    SessionSnapshot,
    ToolExecutionIdentity,
    ToolExecutionReceipt,
    ToolExecutionResult,
)

_Exchange = Tuple[http.client.HTTPConnection, http.client.HTTPResponse]


class AgenticClient:
    """Blocking client for an AgenticDriver host.

    ``ca_file`` trusts a private CA for this client only. ``io_timeout`` (seconds, off by
    default) bounds each socket wait of runs and streams; discovery calls are bounded by
    ``discovery_timeout``.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        ca_file: Optional[str] = None,
        io_timeout: Optional[float] = None,
        discovery_timeout: Optional[float] = DEFAULT_DISCOVERY_TIMEOUT,
    ) -> None:
        self._endpoint = Endpoint.parse(url, token)
        self._io_timeout = check_timeout("io_timeout", io_timeout)
        self._discovery_timeout = check_timeout("discovery_timeout", discovery_timeout)
        self._tls = tls_context(ca_file) if self._endpoint.scheme == "https" else None
        self._streams: "weakref.WeakSet[RunStream]" = weakref.WeakSet()
        self._closed = False

    def __enter__(self) -> "AgenticClient":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        """Close every open stream; later calls raise ``CLIENT_CLOSED``."""
        self._closed = True
        for stream in list(self._streams):
            stream.close()

    def protocol(self) -> ProtocolInfo:
        body = self._fetch_json("GET", ops.GET_PROTOCOL.path, None, self._discovery_timeout)
        return cast(ProtocolInfo, decode_protocol(body))

    def providers(self, refresh: bool = False) -> List[Provider]:
        endpoint = ops.LIST_PROVIDERS.path + ("?refresh=true" if refresh else "")
        body = self._fetch_json("GET", endpoint, None, self._discovery_timeout)
        return cast(List[Provider], decode_providers(body))

    def run(self, request: RunRequest) -> RunResult:
        """Run to completion and return the validated result, or raise ``DriverError``."""
        check_stream_only(request)
        body = self._fetch_json("POST", ops.RUN.path, encode_body(request), self._io_timeout)
        return cast(RunResult, decode_answer(body, ops.RUN, request))

    def stream(self, request: RunRequest) -> "RunStream":
        """A stream of validated events; use it in ``with`` or close it when done."""
        return self._stream(request, None)

    def stream_with_tools(self, request: RunRequest, functions: ToolFunctions) -> "RunStream":
        """``stream()`` that also runs application functions: after yielding an execution
        request of a registered tool, it calls ``functions[name](arguments, context)`` and
        delivers the return value as the output (an exception as the tool's failure).

        Requests for unregistered tools are left to the caller (``execution(event)``);
        nothing else is ever executed. A name the request does not declare in
        ``applicationTools`` is refused with ``INVALID_ARGUMENT`` before anything is sent.
        """
        check_tool_functions(functions, request)
        return self._stream(request, dict(functions))

    def approval(self, event: RunEvent) -> PendingApproval:
        """An ``approval.requested`` event as a handle: ``.approve()``, ``.deny()``, ``.cancel()``."""
        return PendingApproval(self, approval_request_of(event))

    def execution(self, event: RunEvent) -> PendingExecution:
        """A ``tool.execution.requested`` event as a single-use handle: ``.progress()``, ``.complete(output)``, ``.fail()``."""
        return PendingExecution(self, execution_of(event))

    def _stream(self, request: RunRequest, functions: Optional[ToolFunctions]) -> "RunStream":
        self._check_open()
        stream = RunStream(self, request, encode_body(request), functions)
        self._streams.add(stream)
        return stream

    def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        """Approve, deny or cancel one pending approval, echoing its exact run and call.

        Returns the receipt after checking it answers this decision (else
        ``INVALID_RESPONSE``: reconcile from the stream, do not retry).
        """
        body = self._fetch_json("POST", ops.DECIDE_APPROVAL.path, decision_body(decision), self._io_timeout)
        return cast(ApprovalResolution, decode_answer(body, ops.DECIDE_APPROVAL, decision))

    def report_tool_progress(self, identity: ToolExecutionIdentity) -> ToolExecutionReceipt:
        """Report real progress on a dispatched application tool (resets the run's idle timer)."""
        body = self._fetch_json("POST", ops.REPORT_TOOL_PROGRESS.path, progress_body(identity), self._io_timeout)
        return cast(ToolExecutionReceipt, decode_answer(body, ops.REPORT_TOOL_PROGRESS, identity))

    def complete_tool(self, result: ToolExecutionResult) -> ToolExecutionReceipt:
        """Deliver the one result (``output``) or failure (``error``) of a dispatched application tool."""
        body = self._fetch_json("POST", ops.COMPLETE_TOOL.path, result_body(result), self._io_timeout)
        return cast(ToolExecutionReceipt, decode_answer(body, ops.COMPLETE_TOOL, result))

    def create_session(self, request: SessionCreate) -> SessionSnapshot:
        """Create a conversation session; the receipt must echo the provider, model, mode,
        history and instructions at revision 0 (else ``INVALID_RESPONSE``)."""
        body = self._fetch_json("POST", ops.CREATE_SESSION.path, request_body(ops.CREATE_SESSION, request), self._io_timeout)
        return cast(SessionSnapshot, decode_answer(body, ops.CREATE_SESSION, request))

    def read_session(self, session_id: str) -> SessionSnapshot:
        """The session's description and visible history."""
        body = self._fetch_json("POST", ops.READ_SESSION.path, request_body(ops.READ_SESSION, {"id": session_id}), self._io_timeout)
        return cast(SessionSnapshot, decode_answer(body, ops.READ_SESSION, {"id": session_id}))

    def list_sessions(self, request: Optional[SessionListRequest] = None) -> List[SessionInfo]:
        """This token's subject's sessions (on providers it may use), most recently used first."""
        body = self._fetch_json("POST", ops.LIST_SESSIONS.path, request_body(ops.LIST_SESSIONS, {} if request is None else request), self._io_timeout)
        return cast(List[SessionInfo], decode_answer(body, ops.LIST_SESSIONS, request or {})["sessions"])

    def delete_session(self, session_id: str) -> SessionDeleteResult:
        """Delete the session (an active turn is cancelled); the receipt must say ``deleted``."""
        body = self._fetch_json("POST", ops.DELETE_SESSION.path, request_body(ops.DELETE_SESSION, {"id": session_id}), self._io_timeout)
        return cast(SessionDeleteResult, decode_answer(body, ops.DELETE_SESSION, {"id": session_id}))

    def submit_job(self, submission: JobSubmit) -> JobInfo:
        """Submit a durable job; the same ``key`` and request return the same job."""
        body = self._fetch_json("POST", ops.SUBMIT_JOB.path, request_body(ops.SUBMIT_JOB, submission), self._io_timeout)
        return cast(JobInfo, decode_answer(body, ops.SUBMIT_JOB, submission))

    def read_job(self, job_id: str) -> JobInfo:
        """The job's state and cursor (how many events are committed)."""
        body = self._fetch_json("POST", ops.READ_JOB.path, request_body(ops.READ_JOB, {"id": job_id}), self._io_timeout)
        return cast(JobInfo, decode_answer(body, ops.READ_JOB, {"id": job_id}))

    def list_jobs(self, request: Optional[JobListRequest] = None) -> List[JobInfo]:
        """This token's subject's jobs it may read (optionally in one ``state``), most recently updated first."""
        body = self._fetch_json("POST", ops.LIST_JOBS.path, request_body(ops.LIST_JOBS, {} if request is None else request), self._io_timeout)
        return cast(List[JobInfo], decode_answer(body, ops.LIST_JOBS, request or {})["jobs"])

    def cancel_job(self, job_id: str) -> JobInfo:
        """Ask a queued or running job to stop; a finished job comes back unchanged."""
        body = self._fetch_json("POST", ops.CANCEL_JOB.path, request_body(ops.CANCEL_JOB, {"id": job_id}), self._io_timeout)
        return cast(JobInfo, decode_answer(body, ops.CANCEL_JOB, {"id": job_id}))

    def job_events(self, request: JobEventsRequest) -> JobEventPage:
        """One validated page of the job's committed events after ``request["after"]``."""
        body = self._fetch_json("POST", ops.JOB_EVENTS.path, request_body(ops.JOB_EVENTS, request), self._io_timeout)
        return cast(JobEventPage, decode_answer(body, ops.JOB_EVENTS, request))

    def read_run(self, run_id: str) -> RunInfo:
        """Any run of this token's subject, attached or background: its state and cursor, and
        once finished its ``result`` or ``error`` and ``usage``."""
        body = self._fetch_json("POST", ops.READ_RUN.path, request_body(ops.READ_RUN, {"runId": run_id}), self._io_timeout)
        return cast(RunInfo, decode_answer(body, ops.READ_RUN, {"runId": run_id}))

    def run_events(self, request: RunEventsRequest) -> RunEventPage:
        """One validated page of the run's committed events after ``request["after"]``."""
        body = self._fetch_json("POST", ops.RUN_EVENTS.path, request_body(ops.RUN_EVENTS, request), self._io_timeout)
        return cast(RunEventPage, decode_answer(body, ops.RUN_EVENTS, request))

    def search_retrieval(self, request: RetrievalSearch) -> RetrievalResult:
        """Search one corpus. The answer must be the requested corpus with at most ``limit``
        (default 8) unique chunks, each from a selected source and at or above ``minScore``,
        and at most ``maxContextBytes`` (default 65,536) of text (else ``INVALID_RESPONSE``)."""
        body = self._fetch_json("POST", ops.SEARCH_RETRIEVAL.path, request_body(ops.SEARCH_RETRIEVAL, request), self._io_timeout)
        return cast(RetrievalResult, decode_answer(body, ops.SEARCH_RETRIEVAL, request))

    def index_source(self, request: RetrievalIndexRequest) -> RetrievalIndexReceipt:
        """Index a source revision's chunks; the receipt must name the corpus, source and revision."""
        payload = request_body(ops.INDEX_SOURCE, request)
        body = self._fetch_json("POST", ops.INDEX_SOURCE.path, payload, self._io_timeout)
        return cast(RetrievalIndexReceipt, decode_answer(body, ops.INDEX_SOURCE, request))

    def delete_source(self, request: RetrievalDeleteRequest) -> RetrievalDeleteResult:
        """Remove one source revision from a corpus; the receipt must name it."""
        payload = request_body(ops.DELETE_SOURCE, request)
        body = self._fetch_json("POST", ops.DELETE_SOURCE.path, payload, self._io_timeout)
        return cast(RetrievalDeleteResult, decode_answer(body, ops.DELETE_SOURCE, request))

    def ingest_document(self, request: IngestRequest) -> IngestResult:
        """Extract, chunk and index one document. The receipt must name the corpus and the
        document's source and revision, and carry an ``ingestion`` manifest counting its chunks."""
        payload = request_body(ops.INGEST_DOCUMENT, request)
        body = self._fetch_json("POST", ops.INGEST_DOCUMENT.path, payload, self._io_timeout)
        return cast(IngestResult, decode_answer(body, ops.INGEST_DOCUMENT, request))

    def tail_job(
        self,
        job_id: str,
        *,
        after: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        initial_delay: float = DEFAULT_INITIAL_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> Generator[RunEvent, None, None]:
        """Follow a job's events live (``GET v1/jobs/{id}/stream``) after ``after``, ending
        with its terminal event.

        A dropped connection is resumed from the last delivered sequence
        (``Last-Event-ID``) after a backoff from ``initial_delay`` doubling up to
        ``max_delay`` seconds, never repeating or skipping an event; after
        ``max_attempts`` consecutive failed attempts it raises ``JOB_STREAM_LOST``
        (chained to the last failure). ``close()`` on the generator (or leaving a ``for``
        loop and dropping it) closes the connection; the job keeps running.
        """
        request_body(ops.READ_JOB, {"id": job_id})
        policy = TailPolicy(after, max_attempts, initial_delay, max_delay)
        return self._tail(lambda: self.read_job(job_id), lambda job: JobStreamChecker(job, policy.after), path_of(ops.STREAM_JOB, job_id), policy)

    def follow_run(
        self,
        run_id: str,
        *,
        after: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        initial_delay: float = DEFAULT_INITIAL_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> Generator[RunEvent, None, None]:
        """Follow any run's committed events live (``GET v1/runs/{id}/stream``) after
        ``after``, on any replica, ending with its terminal event; like ``tail_job``: the run
        is read first, a dropped connection is resumed with ``Last-Event-ID``, and after
        ``max_attempts`` consecutive failed attempts it raises ``RUN_STREAM_LOST``. Closing
        the generator closes the connection; the run goes on.
        """
        request_body(ops.READ_RUN, {"runId": run_id})
        policy = TailPolicy(after, max_attempts, initial_delay, max_delay, "run")
        return self._tail(lambda: self.read_run(run_id), lambda run: RunRecordChecker(run, policy.after, self._interactive_jobs(run)), path_of(ops.STREAM_RUN, run_id), policy)

    def _interactive_jobs(self, run: Mapping[str, Any]) -> bool:
        """Whether a followed run may ask for people: a background run on a host advertising ``interactive-jobs``."""
        return run["mode"] == "background" and "interactive-jobs" in self.protocol()["features"]

    def wait_run(
        self,
        run_id: str,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        initial_delay: float = DEFAULT_INITIAL_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> RunResult:
        """A background run's ``result()``: wait for any run of this token's subject to end and
        return its result, or raise its ``DriverError`` (as ``run()`` does).

        A finished run is answered from its record; a running one is followed from its cursor
        to its terminal event. It decides nothing: a run waiting for a person waits until a
        handle (``approval(event)`` on ``follow_run``'s events, or the console) answers.
        """
        read = self.read_run(run_id)
        if read["state"] not in TERMINAL_JOB_STATES:
            with closing(self.follow_run(run_id, after=read["cursor"], max_attempts=max_attempts, initial_delay=initial_delay, max_delay=max_delay)) as events:
                for event in events:
                    if event["type"] == "run.completed":
                        return event["result"]
                    if event["type"] in ("run.failed", "run.cancelled"):
                        raise error_of(cast(Mapping[str, Any], event)["error"])
            # A journal cut off without a terminal event: the record says how it ended.
            read = self.read_run(run_id)
        return cast(RunResult, settled(read))

    def _tail(
        self, read: Callable[[], Mapping[str, Any]], checker_of: Callable[[Mapping[str, Any]], CommittedEventChecker], path: str, policy: TailPolicy
    ) -> Generator[RunEvent, None, None]:
        record = read()
        if policy.nothing_to_tail(record):
            return
        checker = checker_of(record)
        while True:
            before = checker.cursor
            failure: BaseException
            try:
                yield from self._tail_once(path, checker)
                if checker.finished:
                    return
                failure = incomplete()
            except (DriverError, OSError) as error:
                if not is_resumable(error):
                    raise
                failure = error
            time.sleep(policy.failed(checker.cursor > before, failure))

    def _tail_once(self, path: str, checker: CommittedEventChecker) -> Generator[RunEvent, None, None]:
        headers = {"Last-Event-ID": str(checker.cursor)}
        connection, response = self._exchange("GET", path, None, "text/event-stream", self._io_timeout, headers)
        try:
            require_event_stream(response.getheader("Content-Type"))
            parser = JobStreamParser(checker)
            while not checker.finished:
                chunk = _read_some(response)
                if not chunk:
                    return
                for event in parser.feed(chunk):
                    yield cast(RunEvent, event)
        finally:
            _close_connection(connection, response)

    def _check_open(self) -> None:
        if self._closed:
            raise DriverError("CLIENT_CLOSED", "The client is closed.")

    def _exchange(
        self, method: str, endpoint: str, body: Optional[bytes], accept: str, timeout: Optional[float], extra: Optional[Dict[str, str]] = None
    ) -> _Exchange:
        """Send one request and return the open response after the status/version checks."""
        self._check_open()
        target = self._endpoint
        connection: http.client.HTTPConnection
        if self._tls is not None:
            connection = http.client.HTTPSConnection(target.host, target.port, timeout=timeout, context=self._tls)
        else:
            connection = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
        try:
            connection.request(method, target.path(endpoint), body=body, headers={**target.headers(accept, body is not None), **(extra or {})})
            response = connection.getresponse()
            check_version(response.headers.get_all("AgenticDriver-Version") or [])
            if not is_success(response.status):
                raise error_for_status(response.status, response.read(MAX_ERROR_BODY_BYTES))
            return connection, response
        except BaseException:
            _close_connection(connection)
            raise

    def _fetch_json(self, method: str, endpoint: str, body: Optional[bytes], timeout: Optional[float]) -> bytes:
        connection, response = self._exchange(method, endpoint, body, "application/json", timeout)
        try:
            return _read_body(response, MAX_JSON_BYTES + 1)
        finally:
            _close_connection(connection, response)


class RunStream:
    """Iterator of validated run events that owns one HTTP response.

    The request is sent on ``with`` entry or the first iteration. The stream closes on
    its first terminal event, on any error, on ``close()``, on leaving ``with`` and when
    a ``for`` loop over it is left by ``break``. Failure and cancellation terminals are
    delivered as events; ``run()`` is the call that raises them. A stream made by
    ``stream_with_tools`` runs the registered functions while it is iterated.
    """

    def __init__(self, client: AgenticClient, request: Mapping[str, Any], body: bytes, functions: Optional[ToolFunctions] = None) -> None:
        self._client = client
        self._body = body
        self._functions = functions
        self._exchange: Optional[_Exchange] = None
        self._parser = RunStreamParser(request)
        self._state = "new"

    def __enter__(self) -> "RunStream":
        self._open()
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.close()

    def __iter__(self) -> Iterator[RunEvent]:
        self._open()
        if self._state == "iterating":
            raise DriverError("STREAM_BUSY", "The stream is already being iterated.")
        self._state = "iterating"
        try:
            if self._functions is None:
                yield from self._events()
            else:
                yield from self._with_tools(self._functions)
        finally:
            self.close()

    def close(self) -> None:
        """Close the response (the host cancels a run that is still going)."""
        self._state = "closed"
        exchange, self._exchange = self._exchange, None
        if exchange is not None:
            _close_connection(exchange[0], exchange[1])

    def _open(self) -> None:
        if self._state == "closed":
            raise DriverError("STREAM_CLOSED", "The stream is closed.")
        if self._exchange is None:
            self._exchange = self._client._exchange("POST", ops.RUN.path, self._body, "text/event-stream", self._client._io_timeout)
            self._state = "open"
            require_event_stream(self._exchange[1].getheader("Content-Type"))

    def _with_tools(self, functions: ToolFunctions) -> Iterator[RunEvent]:
        for event in self._events():
            function = None
            if event["type"] == "tool.execution.requested":
                function = functions.get(event["execution"]["call"]["name"])
            # The handle copies the request before the caller can touch the event.
            pending = PendingExecution(self._client, execution_of(event)) if function is not None else None
            yield event
            if pending is not None and function is not None:
                run_tool(pending, function)

    def _events(self) -> Iterator[RunEvent]:
        while self._exchange is not None:
            chunk = _read_some(self._exchange[1])
            if not chunk:
                self._parser.end()
            events = self._parser.feed(chunk)
            if self._parser.finished:
                self.close()  # before delivering the terminal: the first terminal wins
            for event in events:
                yield cast(RunEvent, event)


def _read_some(response: http.client.HTTPResponse) -> bytes:
    try:
        return response.read1(READ_SIZE)
    except http.client.IncompleteRead:
        raise DriverError("INCOMPLETE_STREAM", "The event stream was cut off before a terminal event.") from None


def _read_body(response: http.client.HTTPResponse, limit: int) -> bytes:
    chunks: List[bytes] = []
    size = 0
    while size < limit:
        chunk = response.read1(min(READ_SIZE, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _close_connection(connection: http.client.HTTPConnection, response: Optional[http.client.HTTPResponse] = None) -> None:
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    if response is not None:
        response.close()
    connection.close()

