//! The blocking client: the async client driven on a private runtime thread. Use it
//! outside async code (or inside `spawn_blocking`).
mod interactive;

pub use interactive::{PendingApproval, PendingExecution, ToolContext, ToolFunctions, ToolIter};

use crate::async_client::{AsyncAgenticClient, EventStream};
use crate::builder::{sealed, Build, ClientBuilder};
use crate::error::Error;
use crate::interactive::check_declared;
use crate::operator::OperatorUpdates;
use crate::tail::{JobTail, TailOptions};
use crate::transport::{transport_error, ClientConfig};
use crate::types::*;
use futures_util::StreamExt;
use std::sync::Arc;
use tokio::runtime::Runtime;

/// The blocking twin of [`AsyncAgenticClient`]: same methods, same rules.
#[derive(Clone)]
pub struct AgenticClient {
    inner: AsyncAgenticClient,
    runtime: Arc<Runtime>,
}

impl sealed::Sealed for AgenticClient {}
impl Build for AgenticClient {
    fn build(config: ClientConfig) -> Result<Self, Error> {
        // One worker thread owns the connections, so closing a stream reaches the
        // socket at once even while the caller is not inside a call.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("agenticdriver-io")
            .enable_all()
            .build()
            .map_err(transport_error)?;
        let _guard = runtime.enter();
        Ok(AgenticClient { inner: AsyncAgenticClient::build(config)?, runtime: Arc::new(runtime) })
    }
}

impl AgenticClient {
    pub fn new(url: &str, token: &str) -> Result<Self, Error> {
        Self::builder(url, token).build()
    }

    pub fn builder(url: &str, token: &str) -> ClientBuilder<Self> {
        ClientBuilder::new(url, token)
    }

    pub fn protocol(&self) -> Result<ProtocolInfo, Error> {
        self.runtime.block_on(self.inner.protocol())
    }

    pub fn providers(&self, refresh: bool) -> Result<Vec<Provider>, Error> {
        self.runtime.block_on(self.inner.providers(refresh))
    }

    pub fn run(&self, request: &RunRequest) -> Result<RunResult, Error> {
        self.runtime.block_on(self.inner.run(request))
    }

    pub fn decide_approval(&self, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        self.runtime.block_on(self.inner.decide_approval(decision))
    }

    pub fn report_tool_progress(&self, identity: &ToolExecutionIdentity) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.inner.report_tool_progress(identity))
    }

    pub fn complete_tool(&self, result: &ToolExecutionResult) -> Result<ToolExecutionReceipt, Error> {
        self.runtime.block_on(self.inner.complete_tool(result))
    }

    pub fn create_session(&self, request: &SessionCreate) -> Result<SessionSnapshot, Error> {
        self.runtime.block_on(self.inner.create_session(request))
    }

    pub fn read_session(&self, id: &str) -> Result<SessionSnapshot, Error> {
        self.runtime.block_on(self.inner.read_session(id))
    }

    pub fn list_sessions(&self, request: &SessionListRequest) -> Result<Vec<SessionInfo>, Error> {
        self.runtime.block_on(self.inner.list_sessions(request))
    }

    pub fn delete_session(&self, id: &str) -> Result<SessionDeleteResult, Error> {
        self.runtime.block_on(self.inner.delete_session(id))
    }

    pub fn submit_job(&self, submission: &JobSubmit) -> Result<JobInfo, Error> {
        self.runtime.block_on(self.inner.submit_job(submission))
    }

    pub fn read_job(&self, id: &str) -> Result<JobInfo, Error> {
        self.runtime.block_on(self.inner.read_job(id))
    }

    pub fn list_jobs(&self, request: &JobListRequest) -> Result<Vec<JobInfo>, Error> {
        self.runtime.block_on(self.inner.list_jobs(request))
    }

    pub fn cancel_job(&self, id: &str) -> Result<JobInfo, Error> {
        self.runtime.block_on(self.inner.cancel_job(id))
    }

    pub fn job_events(&self, request: &JobEventsRequest) -> Result<JobEventPage, Error> {
        self.runtime.block_on(self.inner.job_events(request))
    }

    pub fn search_retrieval(&self, request: &RetrievalSearch) -> Result<RetrievalResult, Error> {
        self.runtime.block_on(self.inner.search_retrieval(request))
    }

    pub fn index_source(&self, request: &RetrievalIndexRequest) -> Result<RetrievalIndexReceipt, Error> {
        self.runtime.block_on(self.inner.index_source(request))
    }

    pub fn delete_source(&self, request: &RetrievalDeleteRequest) -> Result<RetrievalDeleteResult, Error> {
        self.runtime.block_on(self.inner.delete_source(request))
    }

    pub fn ingest_document(&self, request: &IngestRequest) -> Result<IngestResult, Error> {
        self.runtime.block_on(self.inner.ingest_document(request))
    }

    /// Follows a job's events live, reconnecting by itself (see
    /// [`AsyncAgenticClient::tail_job`]); iterate until the terminal event or an error.
    /// Dropping the iterator closes the connection but never cancels the job.
    pub fn tail_job(&self, id: &str, options: &TailOptions) -> Result<JobTailIter, Error> {
        let tail = self.runtime.block_on(self.inner.tail_job(id, options))?;
        Ok(JobTailIter { tail, runtime: Arc::clone(&self.runtime) })
    }

    /// Reads back any run of this token's subject (see [`AsyncAgenticClient::read_run`]).
    pub fn read_run(&self, run_id: &str) -> Result<RunInfo, Error> {
        self.runtime.block_on(self.inner.read_run(run_id))
    }

    /// One validated page of a run's committed events (see [`AsyncAgenticClient::run_events`]).
    pub fn run_events(&self, request: &RunEventsRequest) -> Result<RunEventPage, Error> {
        self.runtime.block_on(self.inner.run_events(request))
    }

    /// Follows any run's committed events live, reconnecting by itself (see
    /// [`AsyncAgenticClient::follow_run`]); iterate until the terminal event or an error.
    pub fn follow_run(&self, run_id: &str, options: &TailOptions) -> Result<JobTailIter, Error> {
        let tail = self.runtime.block_on(self.inner.follow_run(run_id, options))?;
        Ok(JobTailIter { tail, runtime: Arc::clone(&self.runtime) })
    }

    /// A background run's `result()`: its result or its error, once it ended (see
    /// [`AsyncAgenticClient::wait_run`]).
    pub fn wait_run(&self, run_id: &str, options: &TailOptions) -> Result<RunResult, Error> {
        self.runtime.block_on(self.inner.wait_run(run_id, options))
    }

    /// Starts a run; iterate its validated events. Dropping the iterator (for example
    /// `break` out of a `for` loop) closes the connection, which cancels the run.
    pub fn stream(&self, request: &RunRequest) -> Result<EventIter, Error> {
        let stream = self.runtime.block_on(self.inner.stream(request))?;
        Ok(EventIter { stream, runtime: Arc::clone(&self.runtime) })
    }

    /// [`stream`](Self::stream) that also runs `functions` for the execution requests of
    /// their tools (see [`AsyncAgenticClient::stream_with_tools`]).
    pub fn stream_with_tools(&self, request: &RunRequest, functions: ToolFunctions) -> Result<ToolIter, Error> {
        check_declared(request, functions.names())?;
        let events = self.stream(request)?;
        Ok(ToolIter::new(self.clone(), events, functions))
    }

    /// An `approval.requested` event as a handle: `client.approval(&event)?.approve()?`
    /// (see [`AsyncAgenticClient::approval`]).
    pub fn approval(&self, event: &Event) -> Result<PendingApproval, Error> {
        Ok(PendingApproval { inner: self.inner.approval(event)?, runtime: Arc::clone(&self.runtime) })
    }

    /// A `tool.execution.requested` event as a single-use handle:
    /// `client.execution(&event)?.complete(output)?` (see [`AsyncAgenticClient::execution`]).
    pub fn execution(&self, event: &Event) -> Result<PendingExecution, Error> {
        Ok(PendingExecution { inner: self.inner.execution(event)?, runtime: Arc::clone(&self.runtime) })
    }
}

/// The validated events of one run, read as they arrive.
pub struct EventIter {
    stream: EventStream,
    runtime: Arc<Runtime>,
}

impl Iterator for EventIter {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.stream.next())
    }
}

/// The validated events of a job or a run, live (see [`AgenticClient::tail_job`], [`AgenticClient::follow_run`]).
pub struct JobTailIter {
    tail: JobTail,
    runtime: Arc<Runtime>,
}

impl Iterator for JobTailIter {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.tail.next())
    }
}

/// The operator's live updates (see [`OperatorClient::updates`]).
pub struct OperatorUpdateIter {
    updates: OperatorUpdates,
    runtime: Arc<Runtime>,
}

impl Iterator for OperatorUpdateIter {
    type Item = Result<OperatorUpdate, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.updates.next())
    }
}

/// The blocking twin of [`crate::AsyncOperatorClient`]: same methods, same rules.
#[derive(Clone)]
pub struct OperatorClient {
    inner: crate::AsyncOperatorClient,
    runtime: Arc<Runtime>,
}

impl sealed::Sealed for OperatorClient {}
impl Build for OperatorClient {
    fn build(config: ClientConfig) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("agenticdriver-io")
            .enable_all()
            .build()
            .map_err(transport_error)?;
        let _guard = runtime.enter();
        Ok(OperatorClient { inner: crate::AsyncOperatorClient::build(config)?, runtime: Arc::new(runtime) })
    }
}

impl OperatorClient {
    pub fn new(url: &str, token: &str) -> Result<Self, Error> {
        Self::builder(url, token).build()
    }

    pub fn builder(url: &str, token: &str) -> ClientBuilder<Self> {
        ClientBuilder::new(url, token)
    }

    pub fn runs(&self, request: &OperatorRunsRequest) -> Result<OperatorRunList, Error> {
        self.runtime.block_on(self.inner.runs(request))
    }

    pub fn run(&self, run_id: &str) -> Result<OperatorRunDetail, Error> {
        self.runtime.block_on(self.inner.run(run_id))
    }

    /// The live update feed (see [`crate::AsyncOperatorClient::updates`]); dropping the
    /// iterator closes the connection.
    pub fn updates(&self) -> Result<OperatorUpdateIter, Error> {
        let updates = self.runtime.block_on(self.inner.updates())?;
        Ok(OperatorUpdateIter { updates, runtime: Arc::clone(&self.runtime) })
    }

    pub fn approvals(&self, request: &OperatorListRequest) -> Result<OperatorApprovalList, Error> {
        self.runtime.block_on(self.inner.approvals(request))
    }

    pub fn decide_approval(&self, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        self.runtime.block_on(self.inner.decide_approval(decision))
    }

    pub fn jobs(&self, request: &OperatorJobsRequest) -> Result<OperatorJobList, Error> {
        self.runtime.block_on(self.inner.jobs(request))
    }

    pub fn usage(&self, request: &OperatorUsageRequest) -> Result<OperatorUsage, Error> {
        self.runtime.block_on(self.inner.usage(request))
    }

    pub fn limits(&self, request: &OperatorLimitsRequest) -> Result<OperatorLimits, Error> {
        self.runtime.block_on(self.inner.limits(request))
    }

    pub fn audit(&self, request: &OperatorAuditRequest) -> Result<OperatorAuditPage, Error> {
        self.runtime.block_on(self.inner.audit(request))
    }

    /// An active run's events (see [`crate::AsyncOperatorClient::watch_run`]); dropping the
    /// iterator closes the connection.
    pub fn watch_run(&self, run_id: &str) -> Result<TapIter, Error> {
        let tap = self.runtime.block_on(self.inner.watch_run(run_id))?;
        Ok(TapIter { tap, runtime: Arc::clone(&self.runtime) })
    }

    /// Any job's committed events after `after` (see [`crate::AsyncOperatorClient::tail_job`]).
    pub fn tail_job(&self, job_id: &str, after: u64) -> Result<TapIter, Error> {
        let tap = self.runtime.block_on(self.inner.tail_job(job_id, after))?;
        Ok(TapIter { tap, runtime: Arc::clone(&self.runtime) })
    }
}

/// The events of an operator tap, read on the client's runtime.
pub struct TapIter {
    tap: crate::OperatorTap,
    runtime: Arc<Runtime>,
}

impl Iterator for TapIter {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.tap.next())
    }
}
