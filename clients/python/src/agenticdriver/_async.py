"""The asyncio client on httpx (the optional ``agenticdriver[async]`` extra).

Every request is a streamed httpx response, so cancelling the awaiting task or closing
a stream closes the response, which cancels the run on the host. Redirects are never
followed, nothing is retried and no environment proxy settings are read.
"""
from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Awaitable, Callable, Dict, List, Mapping, Optional, Type, cast

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
    AsyncPendingApproval,
    AsyncPendingExecution,
    AsyncToolFunctions,
    approval_request_of,
    check_tool_functions,
    execution_of,
    run_tool_async,
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

if TYPE_CHECKING:
    import httpx


def _import_httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise ImportError("AsyncAgenticClient needs httpx: pip install 'agenticdriver[async]'") from None
    return httpx


class AsyncAgenticClient:
    """asyncio client for an AgenticDriver host; the same surface as ``AgenticClient``.

    ``transport`` (an ``httpx.AsyncBaseTransport``) is caller-owned and meant for
    custom networking; ``ca_file`` trusts a private CA for this client only.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        ca_file: Optional[str] = None,
        io_timeout: Optional[float] = None,
        discovery_timeout: Optional[float] = DEFAULT_DISCOVERY_TIMEOUT,
        transport: Optional["httpx.AsyncBaseTransport"] = None,
    ) -> None:
        httpx_module = _import_httpx()
        self._endpoint = Endpoint.parse(url, token)
        self._io_timeout = check_timeout("io_timeout", io_timeout)
        self._discovery_timeout = check_timeout("discovery_timeout", discovery_timeout)
        self._httpx = httpx_module
        self._http: "httpx.AsyncClient" = httpx_module.AsyncClient(
            verify=tls_context(ca_file),
            follow_redirects=False,
            trust_env=False,
            timeout=None,
            transport=transport,
        )
        self._streams: "set[AsyncRunStream]" = set()
        self._closed = False

    async def __aenter__(self) -> "AsyncAgenticClient":
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every open stream and the connection pool; later calls raise ``CLIENT_CLOSED``."""
        self._closed = True
        for stream in list(self._streams):
            await stream.aclose()
        await self._http.aclose()

    async def protocol(self) -> ProtocolInfo:
        body = await self._fetch_json("GET", ops.GET_PROTOCOL.path, None, self._discovery_timeout)
        return cast(ProtocolInfo, decode_protocol(body))

    async def providers(self, refresh: bool = False) -> List[Provider]:
        endpoint = ops.LIST_PROVIDERS.path + ("?refresh=true" if refresh else "")
        body = await self._fetch_json("GET", endpoint, None, self._discovery_timeout)
        return cast(List[Provider], decode_providers(body))

    async def run(self, request: RunRequest) -> RunResult:
        """Run to completion and return the validated result, or raise ``DriverError``."""
        check_stream_only(request)
        body = await self._fetch_json("POST", ops.RUN.path, encode_body(request), self._io_timeout)
        return cast(RunResult, decode_answer(body, ops.RUN, request))

    def stream(self, request: RunRequest) -> "AsyncRunStream":
        """A stream of validated events; use it in ``async with`` or ``aclose()`` it."""
        return self._stream(request, None)

    def stream_with_tools(self, request: RunRequest, functions: AsyncToolFunctions) -> "AsyncRunStream":
        """``stream()`` that also runs application functions (plain or ``async``): after
        yielding an execution request of a registered tool, it calls
        ``functions[name](arguments, context)`` and delivers the result as the output (an
        exception as the tool's failure). See ``AgenticClient.stream_with_tools``.
        """
        check_tool_functions(functions, request)
        return self._stream(request, dict(functions))

    def approval(self, event: RunEvent) -> AsyncPendingApproval:
        """An ``approval.requested`` event as a handle: ``await .approve()``, ``.deny()``, ``.cancel()``."""
        return AsyncPendingApproval(self, approval_request_of(event))

    def execution(self, event: RunEvent) -> AsyncPendingExecution:
        """A ``tool.execution.requested`` event as a single-use handle: ``.progress()``, ``.complete(output)``, ``.fail()``."""
        return AsyncPendingExecution(self, execution_of(event))

    def _stream(self, request: RunRequest, functions: Optional[AsyncToolFunctions]) -> "AsyncRunStream":
        self._check_open()
        stream = AsyncRunStream(self, request, encode_body(request), functions)
        self._streams.add(stream)
        return stream

    async def decide_approval(self, decision: ApprovalDecision) -> ApprovalResolution:
        """Approve, deny or cancel one pending approval, echoing its exact run and call.

        Returns the receipt after checking it answers this decision (else
        ``INVALID_RESPONSE``: reconcile from the stream, do not retry).
        """
        body = await self._fetch_json("POST", ops.DECIDE_APPROVAL.path, decision_body(decision), self._io_timeout)
        return cast(ApprovalResolution, decode_answer(body, ops.DECIDE_APPROVAL, decision))

    async def report_tool_progress(self, identity: ToolExecutionIdentity) -> ToolExecutionReceipt:
        """Report real progress on a dispatched application tool (resets the run's idle timer)."""
        body = await self._fetch_json("POST", ops.REPORT_TOOL_PROGRESS.path, progress_body(identity), self._io_timeout)
        return cast(ToolExecutionReceipt, decode_answer(body, ops.REPORT_TOOL_PROGRESS, identity))

    async def complete_tool(self, result: ToolExecutionResult) -> ToolExecutionReceipt:
        """Deliver the one result (``output``) or failure (``error``) of a dispatched application tool."""
        body = await self._fetch_json("POST", ops.COMPLETE_TOOL.path, result_body(result), self._io_timeout)
        return cast(ToolExecutionReceipt, decode_answer(body, ops.COMPLETE_TOOL, result))

    async def create_session(self, request: SessionCreate) -> SessionSnapshot:
        """Create a conversation session; see ``AgenticClient.create_session``."""
        body = await self._fetch_json("POST", ops.CREATE_SESSION.path, request_body(ops.CREATE_SESSION, request), self._io_timeout)
        return cast(SessionSnapshot, decode_answer(body, ops.CREATE_SESSION, request))

    async def read_session(self, session_id: str) -> SessionSnapshot:
        """The session's description and visible history."""
        body = await self._fetch_json("POST", ops.READ_SESSION.path, request_body(ops.READ_SESSION, {"id": session_id}), self._io_timeout)
        return cast(SessionSnapshot, decode_answer(body, ops.READ_SESSION, {"id": session_id}))

    async def list_sessions(self, request: Optional[SessionListRequest] = None) -> List[SessionInfo]:
        """This token's subject's sessions (on providers it may use), most recently used first."""
        body = await self._fetch_json("POST", ops.LIST_SESSIONS.path, request_body(ops.LIST_SESSIONS, {} if request is None else request), self._io_timeout)
        return cast(List[SessionInfo], decode_answer(body, ops.LIST_SESSIONS, request or {})["sessions"])

    async def delete_session(self, session_id: str) -> SessionDeleteResult:
        """Delete the session (an active turn is cancelled); the receipt must say ``deleted``."""
        body = await self._fetch_json("POST", ops.DELETE_SESSION.path, request_body(ops.DELETE_SESSION, {"id": session_id}), self._io_timeout)
        return cast(SessionDeleteResult, decode_answer(body, ops.DELETE_SESSION, {"id": session_id}))

    async def submit_job(self, submission: JobSubmit) -> JobInfo:
        """Submit a durable job; the same ``key`` and request return the same job."""
        body = await self._fetch_json("POST", ops.SUBMIT_JOB.path, request_body(ops.SUBMIT_JOB, submission), self._io_timeout)
        return cast(JobInfo, decode_answer(body, ops.SUBMIT_JOB, submission))

    async def read_job(self, job_id: str) -> JobInfo:
        """The job's state and cursor (how many events are committed)."""
        body = await self._fetch_json("POST", ops.READ_JOB.path, request_body(ops.READ_JOB, {"id": job_id}), self._io_timeout)
        return cast(JobInfo, decode_answer(body, ops.READ_JOB, {"id": job_id}))

    async def list_jobs(self, request: Optional[JobListRequest] = None) -> List[JobInfo]:
        """This token's subject's jobs it may read (optionally in one ``state``), most recently updated first."""
        body = await self._fetch_json("POST", ops.LIST_JOBS.path, request_body(ops.LIST_JOBS, {} if request is None else request), self._io_timeout)
        return cast(List[JobInfo], decode_answer(body, ops.LIST_JOBS, request or {})["jobs"])

    async def cancel_job(self, job_id: str) -> JobInfo:
        """Ask a queued or running job to stop; a finished job comes back unchanged."""
        body = await self._fetch_json("POST", ops.CANCEL_JOB.path, request_body(ops.CANCEL_JOB, {"id": job_id}), self._io_timeout)
        return cast(JobInfo, decode_answer(body, ops.CANCEL_JOB, {"id": job_id}))

    async def job_events(self, request: JobEventsRequest) -> JobEventPage:
        """One validated page of the job's committed events after ``request["after"]``."""
        body = await self._fetch_json("POST", ops.JOB_EVENTS.path, request_body(ops.JOB_EVENTS, request), self._io_timeout)
        return cast(JobEventPage, decode_answer(body, ops.JOB_EVENTS, request))

    async def read_run(self, run_id: str) -> RunInfo:
        """Any run of this token's subject, attached or background: its state and cursor, and
        once finished its ``result`` or ``error`` and ``usage``."""
        body = await self._fetch_json("POST", ops.READ_RUN.path, request_body(ops.READ_RUN, {"runId": run_id}), self._io_timeout)
        return cast(RunInfo, decode_answer(body, ops.READ_RUN, {"runId": run_id}))

    async def run_events(self, request: RunEventsRequest) -> RunEventPage:
        """One validated page of the run's committed events after ``request["after"]``."""
        body = await self._fetch_json("POST", ops.RUN_EVENTS.path, request_body(ops.RUN_EVENTS, request), self._io_timeout)
        return cast(RunEventPage, decode_answer(body, ops.RUN_EVENTS, request))

    async def search_retrieval(self, request: RetrievalSearch) -> RetrievalResult:
        """Search one corpus; see ``AgenticClient.search_retrieval``."""
        body = await self._fetch_json("POST", ops.SEARCH_RETRIEVAL.path, request_body(ops.SEARCH_RETRIEVAL, request), self._io_timeout)
        return cast(RetrievalResult, decode_answer(body, ops.SEARCH_RETRIEVAL, request))

    async def index_source(self, request: RetrievalIndexRequest) -> RetrievalIndexReceipt:
        """Index a source revision's chunks; see ``AgenticClient.index_source``."""
        payload = request_body(ops.INDEX_SOURCE, request)
        body = await self._fetch_json("POST", ops.INDEX_SOURCE.path, payload, self._io_timeout)
        return cast(RetrievalIndexReceipt, decode_answer(body, ops.INDEX_SOURCE, request))

    async def delete_source(self, request: RetrievalDeleteRequest) -> RetrievalDeleteResult:
        """Remove one source revision; see ``AgenticClient.delete_source``."""
        payload = request_body(ops.DELETE_SOURCE, request)
        body = await self._fetch_json("POST", ops.DELETE_SOURCE.path, payload, self._io_timeout)
        return cast(RetrievalDeleteResult, decode_answer(body, ops.DELETE_SOURCE, request))

    async def ingest_document(self, request: IngestRequest) -> IngestResult:
        """Extract, chunk and index one document; see ``AgenticClient.ingest_document``."""
        payload = request_body(ops.INGEST_DOCUMENT, request)
        body = await self._fetch_json("POST", ops.INGEST_DOCUMENT.path, payload, self._io_timeout)
        return cast(IngestResult, decode_answer(body, ops.INGEST_DOCUMENT, request))

    def tail_job(
        self,
        job_id: str,
        *,
        after: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        initial_delay: float = DEFAULT_INITIAL_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> AsyncGenerator[RunEvent, None]:
        """Follow a job's events live, resuming dropped connections; see ``AgenticClient.tail_job``.
        ``aclose()`` on the generator closes the connection; the job keeps running."""
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
    ) -> AsyncGenerator[RunEvent, None]:
        """Follow any run's committed events live, resuming dropped connections; see
        ``AgenticClient.follow_run``. ``aclose()`` on the generator closes the connection; the run goes on."""
        request_body(ops.READ_RUN, {"runId": run_id})
        policy = TailPolicy(after, max_attempts, initial_delay, max_delay, "run")
        interactive_jobs = False

        async def read() -> Mapping[str, Any]:
            nonlocal interactive_jobs
            run = await self.read_run(run_id)
            # A followed run may ask for people only as a background run on a host advertising interactive-jobs.
            interactive_jobs = run["mode"] == "background" and "interactive-jobs" in (await self.protocol())["features"]
            return run

        return self._tail(read, lambda run: RunRecordChecker(run, policy.after, interactive_jobs), path_of(ops.STREAM_RUN, run_id), policy)

    async def wait_run(
        self,
        run_id: str,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        initial_delay: float = DEFAULT_INITIAL_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> RunResult:
        """A background run's ``result()``: its result, or its ``DriverError`` raised; see ``AgenticClient.wait_run``."""
        read = await self.read_run(run_id)
        if read["state"] not in TERMINAL_JOB_STATES:
            events = self.follow_run(run_id, after=read["cursor"], max_attempts=max_attempts, initial_delay=initial_delay, max_delay=max_delay)
            try:
                async for event in events:
                    if event["type"] == "run.completed":
                        return event["result"]
                    if event["type"] in ("run.failed", "run.cancelled"):
                        raise error_of(cast(Mapping[str, Any], event)["error"])
            finally:
                await events.aclose()
            read = await self.read_run(run_id)
        return cast(RunResult, settled(read))

    async def _tail(
        self,
        read: Callable[[], Awaitable[Mapping[str, Any]]],
        checker_of: Callable[[Mapping[str, Any]], CommittedEventChecker],
        path: str,
        policy: TailPolicy,
    ) -> AsyncGenerator[RunEvent, None]:
        record = await read()
        if policy.nothing_to_tail(record):
            return
        checker = checker_of(record)
        transport_errors = (OSError, self._httpx.TransportError)
        while True:
            before = checker.cursor
            failure: BaseException
            try:
                # async for does not close its iterator on exit: close the connection explicitly.
                connection = self._tail_once(path, checker)
                try:
                    async for event in connection:
                        yield event
                finally:
                    await connection.aclose()
                if checker.finished:
                    return
                failure = incomplete()
            except (DriverError, *transport_errors) as error:
                if not is_resumable(error, transport_errors):
                    raise
                failure = error
            await asyncio.sleep(policy.failed(checker.cursor > before, failure))

    async def _tail_once(self, path: str, checker: CommittedEventChecker) -> AsyncGenerator[RunEvent, None]:
        headers = {"Last-Event-ID": str(checker.cursor)}
        response = await self._exchange("GET", path, None, "text/event-stream", self._io_timeout, headers)
        try:
            require_event_stream(response.headers.get("Content-Type"))
            parser = JobStreamParser(checker)
            async for chunk in response.aiter_raw():
                for event in parser.feed(chunk):
                    yield cast(RunEvent, event)
                if checker.finished:
                    return
        finally:
            await response.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise DriverError("CLIENT_CLOSED", "The client is closed.")

    async def _exchange(
        self, method: str, endpoint: str, body: Optional[bytes], accept: str, timeout: Optional[float], extra: Optional[Dict[str, str]] = None
    ) -> "httpx.Response":
        """Send one request and return the open response after the status/version checks."""
        self._check_open()
        request = self._http.build_request(
            method,
            self._endpoint.url(endpoint),
            content=body,
            headers={**self._endpoint.headers(accept, body is not None), **(extra or {})},
            timeout=self._httpx.Timeout(timeout),
        )
        response: "httpx.Response" = await self._http.send(request, stream=True)
        try:
            check_version(response.headers.get_list("AgenticDriver-Version"))
            if not is_success(response.status_code):
                raise error_for_status(response.status_code, await _read_body(response, MAX_ERROR_BODY_BYTES))
            return response
        except BaseException:
            await response.aclose()
            raise

    async def _fetch_json(self, method: str, endpoint: str, body: Optional[bytes], timeout: Optional[float]) -> bytes:
        response = await self._exchange(method, endpoint, body, "application/json", timeout)
        try:
            return await _read_body(response, MAX_JSON_BYTES + 1)
        finally:
            await response.aclose()


class AsyncRunStream:
    """Async iterator of validated run events that owns one HTTP response.

    The request is sent on ``async with`` entry or the first iteration. The stream
    closes on its first terminal event, on any error (task cancellation included), on
    ``aclose()`` and on leaving ``async with``. A stream made by ``stream_with_tools`` runs
    the registered functions while it is iterated.
    """

    def __init__(
        self, client: AsyncAgenticClient, request: Mapping[str, Any], body: bytes, functions: Optional[AsyncToolFunctions] = None
    ) -> None:
        self._client = client
        self._body = body
        self._functions = functions
        self._response: Optional["httpx.Response"] = None
        self._chunks: Optional[AsyncIterator[bytes]] = None
        self._parser = RunStreamParser(request)
        self._state = "new"

    async def __aenter__(self) -> "AsyncRunStream":
        await self._open()
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        await self.aclose()

    def __aiter__(self) -> AsyncIterator[RunEvent]:
        return self._events() if self._functions is None else self._with_tools(self._functions)

    async def _with_tools(self, functions: AsyncToolFunctions) -> AsyncIterator[RunEvent]:
        try:
            async for event in self._events():
                function = None
                if event["type"] == "tool.execution.requested":
                    function = functions.get(event["execution"]["call"]["name"])
                # The handle copies the request before the caller can touch the event.
                pending = AsyncPendingExecution(self._client, execution_of(event)) if function is not None else None
                yield event
                if pending is not None and function is not None:
                    await run_tool_async(pending, function)
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the response (the host cancels a run that is still going)."""
        self._state = "closed"
        self._client._streams.discard(self)
        response, self._response = self._response, None
        if response is not None:
            await response.aclose()

    async def _open(self) -> None:
        if self._state == "closed":
            raise DriverError("STREAM_CLOSED", "The stream is closed.")
        if self._response is None:
            response = await self._client._exchange("POST", ops.RUN.path, self._body, "text/event-stream", self._client._io_timeout)
            self._response = response
            self._chunks = response.aiter_raw()
            self._state = "open"
            require_event_stream(response.headers.get("Content-Type"))

    async def _events(self) -> AsyncIterator[RunEvent]:
        if self._state == "iterating":
            raise DriverError("STREAM_BUSY", "The stream is already being iterated.")
        try:
            await self._open()
            self._state = "iterating"
            while self._response is not None and self._chunks is not None:
                chunk = await self._next_chunk(self._chunks)
                if not chunk:
                    self._parser.end()
                events = self._parser.feed(chunk)
                if self._parser.finished:
                    await self.aclose()  # before delivering the terminal: the first terminal wins
                for event in events:
                    yield cast(RunEvent, event)
        finally:
            await self.aclose()

    async def _next_chunk(self, chunks: AsyncIterator[bytes]) -> bytes:
        httpx = self._client._httpx
        try:
            return await chunks.__anext__()
        except StopAsyncIteration:
            return b""
        except httpx.RemoteProtocolError:
            raise DriverError("INCOMPLETE_STREAM", "The event stream was cut off before a terminal event.") from None


async def _read_body(response: "httpx.Response", limit: int) -> bytes:
    chunks: List[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]
