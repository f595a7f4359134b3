//! Cross-field rules JSON Schema cannot express: relationships inside a run result and
//! between a result and the request that produced it. They run on schema-valid data.
use super::check::Checked;
use crate::types::*;
use std::collections::HashSet;

/// A run result (JSON `run` or `run.completed`) against its request.
pub fn run_result(result: &RunResult, request: &RunRequest) -> Checked<()> {
    if result.provider != request.provider || result.model != request.model {
        return Err("result provider/model differ from the request".into());
    }
    let sources = result.sources.as_deref().unwrap_or_default();
    context_manifests(sources)?;
    for artifact in result.artifacts.as_deref().unwrap_or_default() {
        draft_artifact(artifact, sources)?;
    }
    session(result, request.session.as_ref())?;
    match (&result.retrieval, &request.retrieval) {
        (Some(retrieval), Some(options)) => retrieval_result(retrieval, options, sources),
        (None, None) => Ok(()),
        (Some(_), None) => Err("result has retrieval evidence the request did not ask for".into()),
        (None, Some(_)) => Err("result lacks the retrieval evidence the request asked for".into()),
    }
}

fn source_location(location: Option<&SourceLocation>, uri: Option<&str>, at: &str) -> Checked<()> {
    if uri.is_some_and(super::formats::uri_has_credentials) {
        return Err(format!("{at} uri carries credentials"));
    }
    let Some(l) = location else { return Ok(()) };
    let reversed = |start: Option<u32>, end: Option<u32>| matches!((start, end), (Some(start), Some(end)) if end < start);
    if reversed(l.page, l.page_end) || reversed(l.start_line, l.end_line) {
        return Err(format!("{at} location range is reversed"));
    }
    Ok(())
}

fn context_manifests(sources: &[ContextManifest]) -> Checked<()> {
    let mut ids = HashSet::new();
    for source in sources {
        if !ids.insert(source.id.as_str()) {
            return Err(format!("source {} is listed twice", source.id));
        }
        source_location(source.location.as_ref(), source.uri.as_deref(), &format!("source {}", source.id))?;
    }
    Ok(())
}

fn draft_artifact(artifact: &DraftArtifact, sources: &[ContextManifest]) -> Checked<()> {
    match artifact.source_ids.iter().find(|id| !sources.iter().any(|s| &s.id == *id)) {
        Some(id) => Err(format!("artifact cites source {id} that the result does not list")),
        None => Ok(()),
    }
}

fn session(result: &RunResult, binding: Option<&SessionBinding>) -> Checked<()> {
    match (&result.session, binding) {
        (None, None) => Ok(()),
        (Some(_), None) => Err("result has a session the request did not bind".into()),
        (None, Some(_)) => Err("result lacks the bound session".into()),
        (Some(info), Some(binding)) => {
            if !info.id.eq_ignore_ascii_case(&binding.id) {
                Err("result session id differs from the request".into())
            } else if Some(info.revision) != binding.revision.checked_add(1) {
                Err("result session revision is not the next revision".into())
            } else if info.provider != result.provider || info.model != result.model {
                Err("result session provider/model differ from the result".into())
            } else if info.state != SessionState::Ready {
                Err("result session is not ready".into())
            } else {
                session_info(info)
            }
        }
    }
}

fn retrieval_result(retrieval: &RetrievalResult, options: &RetrievalOptions, sources: &[ContextManifest]) -> Checked<()> {
    let scope = RetrievalSearch {
        corpus: options.corpus.clone(),
        source_ids: options.source_ids.clone(),
        limit: options.limit,
        max_context_bytes: options.max_context_bytes,
        min_score: options.min_score,
        ..Default::default()
    };
    search_result(retrieval, &scope).map_err(|e| format!("retrieval: {e}"))?;
    // Every hit is cited by exactly one retrieval manifest that describes it.
    if sources.iter().filter(|s| s.origin == ContextOrigin::Retrieval).count() != retrieval.hits.len() {
        return Err("result sources must hold exactly one retrieval manifest per hit".into());
    }
    for hit in &retrieval.hits {
        let at = format!("retrieval hit {}", hit.chunk_id);
        let Some(manifest) = sources.iter().find(|s| s.id == hit.chunk_id && s.origin == ContextOrigin::Retrieval) else {
            return Err(format!("{at} has no retrieval manifest in the result sources"));
        };
        if manifest.revision != hit.source.revision {
            return Err(format!("{at} and its manifest disagree on the revision"));
        }
        if manifest.location.as_ref().and_then(|l| l.document_id.as_deref()) != Some(hit.source.id.as_str()) {
            return Err(format!("{at} and its manifest disagree on location.documentId"));
        }
        if manifest.bytes != hit.text.len() as u64 {
            return Err(format!("{at} and its manifest disagree on the byte count"));
        }
    }
    Ok(())
}

/// Retrieval defaults a host applies when the request leaves them out.
const DEFAULT_RETRIEVAL_LIMIT: usize = 8;
const DEFAULT_MAX_CONTEXT_BYTES: u64 = 65_536;

/// A search answer: the requested corpus, at most `limit` (default 8) unique chunks, each
/// from a selected source and at or above `minScore`, and at most `maxContextBytes`
/// (default 65,536) bytes of hit text.
pub fn search_result(result: &RetrievalResult, request: &RetrievalSearch) -> Checked<()> {
    if result.corpus != request.corpus {
        return Err(format!("corpus {} is not the requested {}", result.corpus, request.corpus));
    }
    let limit = request.limit.map_or(DEFAULT_RETRIEVAL_LIMIT, |limit| limit as usize);
    if result.hits.len() > limit {
        return Err(format!("{} hits, more than the limit {limit}", result.hits.len()));
    }
    let mut chunk_ids = HashSet::new();
    if !result.hits.iter().all(|hit| chunk_ids.insert(hit.chunk_id.as_str())) {
        return Err("a chunk is listed twice".into());
    }
    let max_bytes = request.max_context_bytes.unwrap_or(DEFAULT_MAX_CONTEXT_BYTES);
    if result.hits.iter().map(|hit| hit.text.len() as u64).sum::<u64>() > max_bytes {
        return Err(format!("the hits carry more than {max_bytes} bytes of text"));
    }
    for hit in &result.hits {
        let at = format!("hit {}", hit.chunk_id);
        if request.source_ids.as_ref().is_some_and(|ids| !ids.contains(&hit.source.id)) {
            return Err(format!("{at} comes from a source the request did not select"));
        }
        if request.min_score.is_some_and(|min| hit.score < min) {
            return Err(format!("{at} scores below minScore"));
        }
        source_location(hit.source.location.as_ref(), hit.source.uri.as_deref(), &at)?;
        if let Some(manifest) = &hit.ingestion {
            ingestion_manifest(manifest).map_err(|e| format!("{at} ingestion: {e}"))?;
        }
    }
    Ok(())
}

/// What an index, delete or ingest receipt says it touched.
pub struct Touched<'a> {
    pub corpus: &'a str,
    pub source_id: &'a str,
    pub revision: &'a str,
}

/// A receipt names the corpus, source and revision asked for; an ingestion manifest,
/// when there is one, counts the receipt's chunks and is consistent.
pub fn source_receipt(got: Touched<'_>, want: Touched<'_>, chunks: u32, manifest: Option<&IngestionManifest>) -> Checked<()> {
    if got.corpus != want.corpus {
        return Err(format!("it names corpus {}, not {}", got.corpus, want.corpus));
    }
    if got.source_id != want.source_id {
        return Err(format!("it names source {}, not {}", got.source_id, want.source_id));
    }
    if got.revision != want.revision {
        return Err(format!("it names revision {}, not {}", got.revision, want.revision));
    }
    let Some(manifest) = manifest else { return Ok(()) };
    if manifest.chunks != chunks {
        return Err(format!("its ingestion manifest counts {} chunks, the receipt {chunks}", manifest.chunks));
    }
    ingestion_manifest(manifest).map_err(|e| format!("ingestion: {e}"))
}

fn has_duplicates(values: &[u32]) -> bool {
    values.iter().collect::<HashSet<_>>().len() != values.len()
}

fn ingestion_manifest(m: &IngestionManifest) -> Checked<()> {
    if m.indexed_text_bytes > m.extracted_text_bytes {
        return Err("indexed more text than it extracted".into());
    }
    if m.pages.is_some() && m.format != "pdf" {
        return Err(format!("page coverage for a {} document", m.format));
    }
    if m.messages.is_some() && m.format != "email" {
        return Err(format!("message coverage for a {} document", m.format));
    }
    if let Some(pages) = &m.pages {
        if has_duplicates(&pages.ocr) || has_duplicates(&pages.empty) {
            return Err("a page is listed twice".into());
        }
        if pages.ocr.iter().chain(&pages.empty).any(|&page| page > pages.total) {
            return Err("a page beyond the total".into());
        }
        if pages.ocr.iter().any(|page| pages.empty.contains(page)) {
            return Err("a page is both OCR and empty".into());
        }
        if !pages.ocr.is_empty() && m.ocr_extractor.is_none() {
            return Err("OCR without naming the OCR extractor".into());
        }
        if pages.empty.len() as u32 >= pages.total {
            return Err("no page with text".into());
        }
        if m.chunks < pages.total - pages.empty.len() as u32 {
            return Err("fewer chunks than pages with text".into());
        }
    }
    if m.messages.as_ref().is_some_and(|messages| messages.empty >= messages.total) {
        return Err("no message with text".into());
    }
    Ok(())
}

/// Session timestamps: host-stamped (fixed width), so they order as strings.
pub fn session_info(session: &SessionInfo) -> Checked<()> {
    if session.updated_at < session.created_at {
        return Err("session updatedAt is before createdAt".into());
    }
    match (session.state, &session.expires_at) {
        (SessionState::Running, None) => Ok(()),
        (SessionState::Running, Some(_)) => Err("a running session has no expiresAt".into()),
        (_, None) => Err("a settled session must carry expiresAt".into()),
        (_, Some(expires)) if *expires <= session.updated_at => Err("session expiresAt must be later than updatedAt".into()),
        _ => Ok(()),
    }
}

/// A create receipt echoes the request: provider, model, mode, instructions and the
/// `{role, content}` history, at revision 0 and ready.
pub fn session_created(snapshot: &SessionSnapshot, request: &SessionCreate) -> Checked<()> {
    let info = &snapshot.session;
    session_info(info)?;
    if info.provider != request.provider || info.model != request.model {
        return Err("the session provider/model differ from the request".into());
    }
    if info.mode != request.mode {
        return Err("the session mode differs from the request".into());
    }
    if info.revision != 0 {
        return Err("a new session must have revision 0".into());
    }
    if info.state != SessionState::Ready {
        return Err("a new session must be ready".into());
    }
    if snapshot.instructions != request.instructions {
        return Err("the session instructions differ from the request".into());
    }
    if snapshot.history != request.history.clone().unwrap_or_default() {
        return Err("the session history differs from the request".into());
    }
    Ok(())
}

/// A read receipt names the requested session.
pub fn session_snapshot(snapshot: &SessionSnapshot, id: &str) -> Checked<()> {
    if !snapshot.session.id.eq_ignore_ascii_case(id) {
        return Err(format!("the host answered for session {}", snapshot.session.id));
    }
    session_info(&snapshot.session)
}

/// How many a list holds when the request names no limit.
const DEFAULT_LIST_LIMIT: u32 = 20;

/// A list: at most `limit` (default 20), each id once, most recently updated first (host
/// timestamps are fixed width, so they order as strings).
fn listing<'a>(items: impl Iterator<Item = (&'a str, &'a str)>, limit: Option<u32>, what: &str) -> Checked<()> {
    let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
    let mut seen = HashSet::new();
    let mut previous: Option<&str> = None;
    for (index, (id, updated)) in items.enumerate() {
        if index >= limit {
            return Err(format!("the {what} list holds more than the limit of {limit}"));
        }
        if !seen.insert(id) {
            return Err(format!("the {what} list names {id} twice"));
        }
        if previous.is_some_and(|before| updated > before) {
            return Err(format!("the {what} list is not most recently updated first"));
        }
        previous = Some(updated);
    }
    Ok(())
}

pub fn session_list(sessions: &[SessionInfo], request: &SessionListRequest) -> Checked<()> {
    sessions.iter().try_for_each(session_info)?;
    listing(sessions.iter().map(|s| (s.id.as_str(), s.updated_at.as_str())), request.limit, "session")
}

pub fn job_list(jobs: &[JobInfo], request: &JobListRequest) -> Checked<()> {
    for job in jobs {
        if let Some(state) = request.state.filter(|state| *state != job.state) {
            return Err(format!("the job list holds a {:?} job, not only {state:?} ones", job.state));
        }
        job_info(job)?;
    }
    listing(jobs.iter().map(|j| (j.id.as_str(), j.updated_at.as_str())), request.limit, "job")
}

fn job_terminal(state: JobState) -> bool {
    !matches!(state, JobState::Queued | JobState::Running)
}

/// A job's state: updatedAt ≥ createdAt; a finished job, and only a finished one, has
/// expiresAt, later than updatedAt; a queued job has no events; a finished one has at
/// least run.started and its terminal event. Host timestamps are fixed width, so they
/// order as strings.
pub fn job_info(job: &JobInfo) -> Checked<()> {
    let terminal = job_terminal(job.state);
    if job.updated_at < job.created_at {
        return Err("job updatedAt is before createdAt".into());
    }
    match &job.expires_at {
        None if terminal => return Err(format!("a {:?} job must carry expiresAt", job.state)),
        Some(_) if !terminal => return Err(format!("a {:?} job has no expiresAt", job.state)),
        Some(expires) if *expires <= job.updated_at => return Err("job expiresAt must be later than updatedAt".into()),
        _ => {}
    }
    if job.state == JobState::Queued && job.cursor != 0 {
        return Err("a queued job has no events".into());
    }
    if terminal && job.cursor < 2 {
        return Err("a finished job has at least two events".into());
    }
    Ok(())
}

/// The rules every event of a job obeys, in a page or in the live stream: the job's run,
/// the sequence after `previous`, run.started exactly at 1 naming the job's provider and
/// model, and no approval or application-tool event (jobs negotiate neither). Every type
/// is known by construction (`Event` has no unknown variant).
pub fn job_event_order(job: &JobInfo, event: &Event, previous: u64) -> Checked<()> {
    if event.run_id != job.run_id {
        return Err("event belongs to another run".into());
    }
    if Some(event.sequence) != previous.checked_add(1) {
        return Err(format!("sequence {} does not follow {previous}", event.sequence));
    }
    match &event.payload {
        EventPayload::RunStarted { provider, model } if event.sequence != 1 || *provider != job.provider || *model != job.model => {
            Err("run.started must come at sequence 1 and name the job's provider/model".into())
        }
        EventPayload::RunStarted { .. } => Ok(()),
        _ if event.sequence == 1 => Err("the first event is not run.started".into()),
        EventPayload::ApprovalRequested { .. } | EventPayload::ApprovalResolved { .. } | EventPayload::ToolExecutionRequested { .. } => {
            Err(format!("{} in a job (jobs negotiate no approvals or application tools)", event.kind()))
        }
        EventPayload::RunCompleted { result } => job_result(job, result),
        _ => Ok(()),
    }
}

fn job_result(job: &JobInfo, result: &RunResult) -> Checked<()> {
    if result.run_id != job.run_id || result.provider != job.provider || result.model != job.model {
        return Err("the result is not the job's run, provider and model".into());
    }
    if result.session.is_some() {
        return Err("a job result has no session".into());
    }
    context_manifests(result.sources.as_deref().unwrap_or_default())
}

/// A page of a job's events as the continuation of events `1..=after`.
pub fn job_page(page: &JobEventPage, request: &JobEventsRequest) -> Checked<()> {
    let job = &page.job;
    job_info(job)?;
    if job.id != request.id {
        return Err(format!("the page is for job {}", job.id));
    }
    let limit = request.limit.unwrap_or(100).min(100) as usize;
    if page.events.len() > limit {
        return Err(format!("{} events exceed the limit {limit}", page.events.len()));
    }
    let mut last = request.after;
    for event in &page.events {
        job_event_order(job, event, last)?;
        if event.sequence > job.cursor {
            return Err(format!("sequence {} is beyond the job's cursor {}", event.sequence, job.cursor));
        }
        let at_end = event.sequence == job.cursor && job_terminal(job.state);
        match (&event.payload, at_end) {
            (_, false) if event.is_terminal() => return Err(format!("{} before the end of a finished job", event.kind())),
            (_, true) if !event.is_terminal() => return Err("a finished job must end with its terminal event".into()),
            (EventPayload::RunCompleted { .. }, _) if job.state != JobState::Completed => {
                return Err(format!("run.completed ends a {:?} job", job.state))
            }
            (EventPayload::RunCancelled { .. }, _) if job.state != JobState::Cancelled => {
                return Err(format!("run.cancelled ends a {:?} job", job.state))
            }
            (EventPayload::RunFailed { error }, _) => match job.state {
                JobState::Failed => {}
                JobState::Interrupted if error.outcome == Some(crate::error::ErrorOutcome::Uncertain) => {}
                JobState::Interrupted => return Err("an interrupted job's run.failed must have outcome uncertain".into()),
                state => return Err(format!("run.failed ends a {state:?} job")),
            },
            _ => {}
        }
        last = event.sequence;
    }
    if page.next_cursor != last {
        return Err(format!("nextCursor {} is not the last sequence {last}", page.next_cursor));
    }
    if page.next_cursor > job.cursor {
        return Err("nextCursor is beyond the job's cursor".into());
    }
    if page.has_more != (page.next_cursor < job.cursor) {
        return Err("hasMore contradicts nextCursor and the job's cursor".into());
    }
    if page.has_more && page.events.is_empty() {
        return Err("an empty page says hasMore".into());
    }
    Ok(())
}
