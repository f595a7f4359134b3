//! Receipts must answer exactly what was submitted; a mismatch means the application
//! has to reconcile (never retry blindly).
use super::{decode, rules};
use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::types::*;
use serde_json::Value;

fn mismatch(what: &str, e: String) -> DriverError {
    DriverError::new(codes::INVALID_RESPONSE, format!("{what}: {e}; reconcile before acting again, do not retry"))
}

pub fn approval_resolution(value: Value, decision: &ApprovalDecision) -> Result<ApprovalResolution, DriverError> {
    let bad = |e| mismatch("approval receipt", e);
    schema::approval_resolution(&value, "").map_err(bad)?;
    let receipt: ApprovalResolution = decode::typed(value).map_err(bad)?;
    if receipt.approval_id != decision.approval_id || receipt.run_id != decision.run_id || receipt.call_id != decision.call.id {
        return Err(bad("it names another approval, run or call".into()));
    }
    if receipt.outcome != decision.decision.outcome() {
        return Err(bad(format!("outcome {:?} does not follow the decision {:?}", receipt.outcome, decision.decision)));
    }
    Ok(receipt)
}

pub fn tool_receipt(value: Value, identity: &ToolExecutionIdentity, status: ReceiptStatus) -> Result<ToolExecutionReceipt, DriverError> {
    let bad = |e| mismatch("tool execution receipt", e);
    schema::tool_execution_receipt(&value, "").map_err(bad)?;
    let receipt: ToolExecutionReceipt = decode::typed(value).map_err(bad)?;
    let echoed = ToolExecutionIdentity {
        execution_id: receipt.execution_id.clone(),
        run_id: receipt.run_id.clone(),
        call_id: receipt.call_id.clone(),
    };
    if echoed != *identity {
        return Err(bad("it names another execution, run or call".into()));
    }
    if receipt.status != status {
        return Err(bad(format!("status {:?}, expected {status:?}", receipt.status)));
    }
    Ok(receipt)
}

fn invalid(what: &str, e: String) -> DriverError {
    DriverError::new(codes::INVALID_RESPONSE, format!("{what}: {e}"))
}

pub fn session_created(value: Value, request: &SessionCreate) -> Result<SessionSnapshot, DriverError> {
    let bad = |e| invalid("session create receipt", e);
    schema::session_snapshot(&value, "").map_err(bad)?;
    let snapshot: SessionSnapshot = decode::typed(value).map_err(bad)?;
    rules::session_created(&snapshot, request).map_err(bad)?;
    Ok(snapshot)
}

pub fn session_snapshot(value: Value, id: &SessionIdentity) -> Result<SessionSnapshot, DriverError> {
    let bad = |e| invalid("session snapshot", e);
    schema::session_snapshot(&value, "").map_err(bad)?;
    let snapshot: SessionSnapshot = decode::typed(value).map_err(bad)?;
    rules::session_snapshot(&snapshot, &id.id).map_err(bad)?;
    Ok(snapshot)
}

pub fn session_deleted(value: Value, id: &SessionIdentity) -> Result<SessionDeleteResult, DriverError> {
    let bad = |e| mismatch("session delete receipt", e);
    schema::session_delete_result(&value, "").map_err(bad)?;
    let receipt: SessionDeleteResult = decode::typed(value).map_err(bad)?;
    if !receipt.id.eq_ignore_ascii_case(&id.id) {
        return Err(bad("it names another session".into()));
    }
    if !receipt.deleted {
        return Err(bad("it does not say deleted".into()));
    }
    Ok(receipt)
}

/// A job's state; `expected` is the job id asked about (read, cancel), or `None` after a
/// submission, whose provider and model the caller compares.
pub fn job_info(value: Value, expected: Option<&str>) -> Result<JobInfo, DriverError> {
    let bad = |e| invalid("job", e);
    schema::job_info(&value, "").map_err(bad)?;
    let job: JobInfo = decode::typed(value).map_err(bad)?;
    rules::job_info(&job).map_err(bad)?;
    if expected.is_some_and(|id| id != job.id) {
        return Err(bad(format!("the host answered for job {}", job.id)));
    }
    Ok(job)
}

pub fn job_submitted(value: Value, submission: &JobSubmit) -> Result<JobInfo, DriverError> {
    let job = job_info(value, None)?;
    if job.provider != submission.request.provider || job.model != submission.request.model {
        return Err(invalid("job", "its provider/model differ from the submitted request".into()));
    }
    Ok(job)
}

/// The subject's jobs: the list rules, the asked-for state, each job's own rules.
pub fn job_list(value: Value, request: &JobListRequest) -> Result<Vec<JobInfo>, DriverError> {
    let bad = |e| invalid("job list", e);
    schema::job_list(&value, "").map_err(bad)?;
    let list: JobList = decode::typed(value).map_err(bad)?;
    rules::job_list(&list.jobs, request).map_err(bad)?;
    Ok(list.jobs)
}

/// The subject's sessions: the list rules and each session's own.
pub fn session_list(value: Value, request: &SessionListRequest) -> Result<Vec<SessionInfo>, DriverError> {
    let bad = |e| invalid("session list", e);
    schema::session_list(&value, "").map_err(bad)?;
    let list: SessionList = decode::typed(value).map_err(bad)?;
    rules::session_list(&list.sessions, request).map_err(bad)?;
    Ok(list.sessions)
}

pub fn job_event_page(value: Value, request: &JobEventsRequest) -> Result<JobEventPage, DriverError> {
    let bad = |e| invalid("job event page", e);
    schema::job_event_page(&value, "").map_err(bad)?;
    let page: JobEventPage = decode::typed(value).map_err(bad)?;
    rules::job_page(&page, request).map_err(bad)?;
    Ok(page)
}

pub fn search_result(value: Value, request: &RetrievalSearch) -> Result<RetrievalResult, DriverError> {
    let bad = |e| invalid("search answer", e);
    schema::retrieval_result(&value, "").map_err(bad)?;
    let result: RetrievalResult = decode::typed(value).map_err(bad)?;
    rules::search_result(&result, request).map_err(bad)?;
    Ok(result)
}

fn asked<'a>(corpus: &'a str, source: &'a ContextSource) -> rules::Touched<'a> {
    rules::Touched { corpus, source_id: &source.id, revision: &source.revision }
}

fn said<'a>(corpus: &'a str, source_id: &'a str, revision: &'a str) -> rules::Touched<'a> {
    rules::Touched { corpus, source_id, revision }
}

pub fn index_receipt(value: Value, request: &RetrievalIndexRequest) -> Result<RetrievalIndexReceipt, DriverError> {
    let bad = |e| invalid("index receipt", e);
    schema::retrieval_index_receipt(&value, "").map_err(bad)?;
    let r: RetrievalIndexReceipt = decode::typed(value).map_err(bad)?;
    let got = said(&r.corpus, &r.source_id, &r.revision);
    rules::source_receipt(got, asked(&request.corpus, &request.source), r.chunks, r.ingestion.as_ref()).map_err(bad)?;
    Ok(r)
}

pub fn delete_receipt(value: Value, request: &RetrievalDeleteRequest) -> Result<RetrievalDeleteResult, DriverError> {
    let bad = |e| invalid("delete receipt", e);
    schema::retrieval_delete_result(&value, "").map_err(bad)?;
    let r: RetrievalDeleteResult = decode::typed(value).map_err(bad)?;
    let want = said(&request.corpus, &request.source_id, &request.revision);
    rules::source_receipt(said(&r.corpus, &r.source_id, &r.revision), want, 0, None).map_err(bad)?;
    Ok(r)
}

/// An ingest receipt must also carry its ingestion manifest (the schema requires it).
pub fn ingest_receipt(value: Value, request: &IngestRequest) -> Result<IngestResult, DriverError> {
    let bad = |e| invalid("ingest receipt", e);
    schema::ingest_result(&value, "").map_err(bad)?;
    let r: IngestResult = decode::typed(value).map_err(bad)?;
    let got = said(&r.corpus, &r.source_id, &r.revision);
    rules::source_receipt(got, asked(&request.corpus, request.document.source()), r.chunks, Some(&r.ingestion)).map_err(bad)?;
    Ok(r)
}
