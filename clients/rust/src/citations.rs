//! Citation check: the `[source:ID]` references a model wrote into a run result must name
//! sources the result lists. It checks identity only, never whether a source supports the text.
//!
//! Grammar (the same in every client): every occurrence of the literal `[source:` opens a
//! citation, which must continue with an ID and `]`. ID has the wire's OpaqueKey syntax,
//! `[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}`. Anything else after `[source:` (an empty or longer
//! ID, a forbidden character, no `]`) is a malformed citation. Scanned: the result's text,
//! then each artifact's content in order.
use crate::error::{codes, DriverError};
use crate::types::{ContextManifest, RunResult};

const OPEN: &str = "[source:";

fn is_id(id: &str) -> bool {
    let mut chars = id.chars();
    id.len() <= 128
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
}

/// The IDs cited in `text`, in order; `INVALID_CITATION` on a malformed citation.
fn cited_ids(text: &str) -> Result<Vec<&str>, DriverError> {
    let mut ids = Vec::new();
    let mut offset = 0;
    while let Some(at) = text[offset..].find(OPEN) {
        let start = offset + at + OPEN.len();
        let id = text[start..].find(']').map_or("", |end| &text[start..start + end]);
        if !is_id(id) {
            return Err(DriverError::new(
                codes::INVALID_CITATION,
                format!(
                    "malformed citation at byte {}: [source: must be followed by an id ([a-zA-Z0-9][a-zA-Z0-9._:-]{{0,127}}) and ]",
                    offset + at
                ),
            ));
        }
        ids.push(id);
        offset = start;
    }
    Ok(ids)
}

/// Checks every `[source:ID]` in the result's text and artifact contents against
/// `result.sources`; returns the cited source manifests in order of first citation. An
/// unknown or malformed citation fails `INVALID_CITATION`.
pub fn check_citations(result: &RunResult) -> Result<Vec<ContextManifest>, DriverError> {
    let sources = result.sources.as_deref().unwrap_or_default();
    let artifacts = result.artifacts.as_deref().unwrap_or_default();
    let mut cited: Vec<ContextManifest> = Vec::new();
    for text in std::iter::once(result.text.as_str()).chain(artifacts.iter().map(|a| a.content.as_str())) {
        for id in cited_ids(text)? {
            let Some(source) = sources.iter().find(|s| s.id == id) else {
                return Err(DriverError::new(
                    codes::INVALID_CITATION,
                    format!("the result cites [source:{id}], which is not one of its sources"),
                ));
            };
            if !cited.iter().any(|c| c.id == id) {
                cited.push(source.clone());
            }
        }
    }
    Ok(cited)
}
