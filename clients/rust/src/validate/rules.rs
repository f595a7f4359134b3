//! Cross-field rules JSON Schema cannot express: relationships inside a run result and
//! between a result and the request that produced it. They run on schema-valid data.
use super::check::Checked;
use crate::types::*;
use std::collections::HashSet;

const DEFAULT_RETRIEVAL_LIMIT: u32 = 8;
const DEFAULT_MAX_CONTEXT_BYTES: u64 = 65_536;
const DEFAULT_MIN_SCORE: f64 = -1.0;

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
    let ordered = |start: Option<u32>, end: Option<u32>| match (start, end) {
        (_, None) => true,
        (Some(start), Some(end)) => end >= start,
        (None, Some(_)) => false,
    };
    if !ordered(l.page, l.page_end) || !ordered(l.start_line, l.end_line) {
        return Err(format!("{at} location range is reversed or open"));
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
    if artifact.name == "." || artifact.name == ".." {
        return Err("artifact name is a path segment".into());
    }
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
                Ok(())
            }
        }
    }
}

fn retrieval_result(retrieval: &RetrievalResult, options: &RetrievalOptions, sources: &[ContextManifest]) -> Checked<()> {
    if retrieval.corpus != options.corpus {
        return Err("retrieval corpus differs from the request".into());
    }
    if retrieval.hits.len() > options.limit.unwrap_or(DEFAULT_RETRIEVAL_LIMIT) as usize {
        return Err("retrieval returned more hits than the limit".into());
    }
    let min_score = options.min_score.unwrap_or(DEFAULT_MIN_SCORE);
    let mut chunk_ids = HashSet::new();
    let mut context_bytes = 0u64;
    for hit in &retrieval.hits {
        let at = format!("retrieval hit {}", hit.chunk_id);
        if !chunk_ids.insert(hit.chunk_id.as_str()) {
            return Err(format!("{at} is listed twice"));
        }
        if options.source_ids.as_ref().is_some_and(|ids| !ids.contains(&hit.source.id)) {
            return Err(format!("{at} comes from a source the request did not select"));
        }
        if hit.score < min_score {
            return Err(format!("{at} scores below minScore"));
        }
        source_location(hit.source.location.as_ref(), hit.source.uri.as_deref(), &at)?;
        if let Some(manifest) = &hit.ingestion {
            ingestion_manifest(manifest).map_err(|e| format!("{at} ingestion: {e}"))?;
        }
        retrieval_link(hit, sources).map_err(|e| format!("{at}: {e}"))?;
        context_bytes += hit.text.len() as u64;
    }
    if context_bytes > options.max_context_bytes.unwrap_or(DEFAULT_MAX_CONTEXT_BYTES) {
        return Err("retrieval hits exceed maxContextBytes".into());
    }
    let orphan = sources.iter().find(|s| s.origin == ContextOrigin::Retrieval && !chunk_ids.contains(s.id.as_str()));
    match orphan {
        Some(source) => Err(format!("retrieval source {} matches no hit", source.id)),
        None => Ok(()),
    }
}

/// Each hit is cited by exactly one retrieval-origin source manifest describing it.
fn retrieval_link(hit: &RetrievalHit, sources: &[ContextManifest]) -> Checked<()> {
    let mut linked = sources.iter().filter(|s| s.origin == ContextOrigin::Retrieval && s.id == hit.chunk_id);
    let (Some(source), None) = (linked.next(), linked.next()) else {
        return Err("needs exactly one retrieval source manifest".into());
    };
    let document_id = source.location.as_ref().and_then(|l| l.document_id.as_deref());
    if source.revision != hit.source.revision || document_id != Some(hit.source.id.as_str()) || source.bytes != hit.text.len() as u64 {
        return Err("source manifest does not describe the hit".into());
    }
    Ok(())
}

fn ingestion_manifest(m: &IngestionManifest) -> Checked<()> {
    if m.indexed_text_bytes < 1 || m.indexed_text_bytes > m.extracted_text_bytes {
        return Err("indexedTextBytes must be between 1 and extractedTextBytes".into());
    }
    match (&m.pages, m.format.as_str()) {
        (Some(pages), "pdf") => {
            let in_range = |list: &[u32]| list.iter().all(|&p| p <= pages.total);
            let distinct = |list: &[u32]| list.iter().collect::<HashSet<_>>().len() == list.len();
            if !in_range(&pages.ocr) || !in_range(&pages.empty) || !distinct(&pages.ocr) || !distinct(&pages.empty) {
                return Err("page coverage lists pages twice or beyond the total".into());
            }
            let empty = pages.empty.len() as u32;
            if empty >= pages.total || m.chunks < pages.total - empty {
                return Err("page coverage leaves no text or more pages than chunks".into());
            }
            if m.ocr_extractor.is_some() == pages.ocr.is_empty() {
                return Err("ocrExtractor must be present exactly when pages were OCRed".into());
            }
        }
        (None, "pdf") => return Err("a pdf manifest needs page coverage".into()),
        (Some(_), _) => return Err("only pdf manifests have page coverage".into()),
        (None, _) if m.ocr_extractor.is_some() => return Err("only pdf manifests have an ocrExtractor".into()),
        (None, _) => {}
    }
    match (&m.messages, m.format.as_str()) {
        (Some(messages), "email") if messages.empty >= messages.total || m.chunks < messages.total - messages.empty => {
            Err("message coverage leaves no text or more messages than chunks".into())
        }
        (Some(_), "email") => Ok(()),
        (None, "email") => Err("an email manifest needs message coverage".into()),
        (Some(_), _) => Err("only email manifests have message coverage".into()),
        (None, _) => Ok(()),
    }
}
