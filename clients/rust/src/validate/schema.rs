//! The wire schemas of `src/protocol/schemas.ts`, one function per named schema.
//! Objects the protocol declares strict reject unknown fields; the others ignore them.
//! Cross-field rules live in `rules.rs`.
use super::check::*;
use super::formats::*;
use serde_json::Value;

const MEDIA_TYPES: &[&str] = &["text/plain", "text/markdown", "image/png", "image/jpeg", "image/webp", "application/pdf"];
const ARTIFACT_MEDIA_TYPES: &[&str] = &["text/plain", "text/markdown", "application/json"];
const COUNT: (f64, f64) = (0.0, MAX_SAFE_INTEGER);
const UNBOUNDED: usize = usize::MAX;

fn date_time(v: &Value, p: &str) -> Checked<()> {
    matching(v, p, is_date_time, "an RFC 3339 date-time").map(drop)
}

fn json_object(v: &Value, p: &str) -> Checked<()> {
    object(v, p).map(drop)
}

fn opaque_key(v: &Value, p: &str) -> Checked<()> {
    matching(v, p, is_opaque_key, "an opaque key").map(drop)
}

pub fn error_info(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("code", 1, UNBOUNDED)?;
    o.str("message", 0, UNBOUNDED)?;
    o.bool("retryable")?;
    o.opt_literal("outcome", &["uncertain"])?;
    Ok(())
}

pub fn usage(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    for key in ["inputTokens", "outputTokens", "cachedInputTokens", "reasoningTokens"] {
        o.opt_int(key, COUNT.0, COUNT.1)?;
    }
    for key in ["costUsd", "apiEquivalentCostUsd"] {
        o.opt_num(key, 0.0, f64::INFINITY)?;
    }
    Ok(())
}

pub fn tool_call(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("id", 1, 256)?;
    o.matching("name", is_tool_name, "a tool name")?;
    o.with("arguments", json_object)
}

fn source_location(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::strict(v, p, &["documentId", "page", "pageEnd", "startLine", "endLine", "section", "threadId", "messageId"])?;
    for key in ["documentId", "threadId", "messageId"] {
        o.opt_with(key, opaque_key)?;
    }
    for key in ["page", "pageEnd", "startLine", "endLine"] {
        o.opt_int(key, 1.0, 1_000_000.0)?;
    }
    o.opt_str("section", 0, 256)?;
    Ok(())
}

const CONTEXT_SOURCE_FIELDS: &[&str] = &["id", "revision", "title", "uri", "location"];

fn context_source_fields(o: &Obj) -> Checked<()> {
    o.with("id", opaque_key)?;
    o.with("revision", opaque_key)?;
    o.opt_str("title", 0, 256)?;
    o.opt_with("uri", |v, p| {
        string(v, p, 0, 2048)?;
        matching(v, p, is_source_uri, "an https:// or app:// URI")
    })?;
    o.opt_with("location", source_location)?;
    Ok(())
}

pub fn context_source(v: &Value, p: &str) -> Checked<()> {
    context_source_fields(&Obj::strict(v, p, CONTEXT_SOURCE_FIELDS)?)
}

pub fn context_manifest(v: &Value, p: &str) -> Checked<()> {
    let allowed: Vec<&str> = CONTEXT_SOURCE_FIELDS.iter().copied().chain(["mediaType", "bytes", "sha256", "origin", "expiresAt"]).collect();
    let o = Obj::strict(v, p, &allowed)?;
    context_source_fields(&o)?;
    o.literal("mediaType", MEDIA_TYPES)?;
    o.int("bytes", 1.0, 33_554_432.0)?;
    o.matching("sha256", is_sha256, "a lowercase SHA-256 hex digest")?;
    o.literal("origin", &["inline", "reference", "retrieval"])?;
    o.opt_with("expiresAt", date_time)?;
    Ok(())
}

pub fn draft_artifact(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::strict(v, p, &["name", "mediaType", "id", "status", "content", "sha256", "sourceIds"])?;
    o.with("name", |v, p| {
        string(v, p, 1, 128)?;
        matching(v, p, is_artifact_name, "a file name without slashes or control characters")
    })?;
    o.literal("mediaType", ARTIFACT_MEDIA_TYPES)?;
    o.matching("id", is_uuid_format, "a UUID")?;
    o.literal("status", &["draft"])?;
    o.str("content", 0, 262_144)?;
    o.matching("sha256", is_sha256, "a lowercase SHA-256 hex digest")?;
    let ids = o.array("sourceIds", 0, 16)?;
    each(ids, &o.at("sourceIds"), opaque_key)?;
    unique(ids, &o.at("sourceIds"))
}

fn extractor_identity(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::strict(v, p, &["id", "version"])?;
    o.str("id", 1, 128)?;
    o.str("version", 1, 128)?;
    Ok(())
}

pub fn ingestion_manifest(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::strict(
        v,
        p,
        &[
            "format",
            "inputSha256",
            "inputBytes",
            "extractor",
            "ocrExtractor",
            "chunker",
            "extractedTextBytes",
            "indexedTextBytes",
            "chunks",
            "pages",
            "messages",
        ],
    )?;
    o.literal("format", &["text", "markdown", "pdf", "email"])?;
    o.matching("inputSha256", is_sha256, "a lowercase SHA-256 hex digest")?;
    o.int("inputBytes", 1.0, 33_554_432.0)?;
    o.with("extractor", extractor_identity)?;
    o.opt_with("ocrExtractor", extractor_identity)?;
    o.with("chunker", |v, p| {
        let c = Obj::strict(v, p, &["id", "maxBytes"])?;
        c.literal("id", &["source-lines-v1"])?;
        c.int("maxBytes", 128.0, 16_384.0).map(drop)
    })?;
    o.int("extractedTextBytes", 0.0, 1_048_576.0)?;
    o.int("indexedTextBytes", 0.0, 1_048_576.0)?;
    o.int("chunks", 1.0, 256.0)?;
    o.opt_with("pages", |v, p| {
        let pages = Obj::strict(v, p, &["total", "ocr", "empty"])?;
        pages.int("total", 1.0, 1000.0)?;
        for key in ["ocr", "empty"] {
            each(pages.array(key, 0, 1000)?, &pages.at(key), |v, p| integer(v, p, 1.0, 1000.0).map(drop))?;
        }
        Ok(())
    })?;
    o.opt_with("messages", |v, p| {
        let messages = Obj::strict(v, p, &["total", "empty"])?;
        messages.int("total", 1.0, 1000.0)?;
        messages.int("empty", 0.0, 1000.0).map(drop)
    })?;
    Ok(())
}

pub fn retrieval_result(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::strict(v, p, &["corpus", "index", "hits", "truncated"])?;
    o.with("corpus", opaque_key)?;
    o.with("index", |v, p| {
        let index = Obj::strict(v, p, &["providerId", "vendor", "accountId", "authMode", "model", "dimensions", "metric", "version"])?;
        index.str("providerId", 1, UNBOUNDED)?;
        index.str("vendor", 1, UNBOUNDED)?;
        index.opt_str("accountId", 1, UNBOUNDED)?;
        index.literal("authMode", &["api-key", "none"])?;
        index.str("model", 1, UNBOUNDED)?;
        index.int("dimensions", 1.0, 4096.0)?;
        index.literal("metric", &["cosine"])?;
        index.str("version", 1, UNBOUNDED).map(drop)
    })?;
    each(o.array("hits", 0, 16)?, &o.at("hits"), |v, p| {
        let hit = Obj::strict(v, p, &["chunkId", "source", "text", "score", "documentSha256", "ingestion"])?;
        hit.with("chunkId", opaque_key)?;
        hit.with("source", context_source)?;
        hit.str("text", 1, 16_384)?;
        hit.num("score", -1.0, 1.0)?;
        hit.matching("documentSha256", is_sha256, "a lowercase SHA-256 hex digest")?;
        hit.opt_with("ingestion", ingestion_manifest).map(drop)
    })?;
    o.bool("truncated").map(drop)
}

pub fn session_info(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.matching("id", is_lower_uuid, "a lowercase UUID")?;
    o.int("revision", 0.0, f64::INFINITY)?;
    o.matching("provider", is_provider_id, "a provider id")?;
    o.matching("model", is_model_id, "a model id")?;
    o.literal("mode", &["history", "native"])?;
    o.literal("state", &["ready", "running", "interrupted"])?;
    for key in ["createdAt", "updatedAt"] {
        o.matching(key, is_host_timestamp, "a UTC timestamp with milliseconds")?;
    }
    o.opt_matching("expiresAt", is_host_timestamp, "a UTC timestamp with milliseconds")?;
    Ok(())
}

pub fn approval_request(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("approvalId", 1, 256)?;
    o.str("runId", 1, 256)?;
    o.with("call", tool_call)?;
    o.with("requestedAt", date_time)?;
    o.opt_with("expiresAt", date_time)?;
    o.literal("idlePolicy", &["pause", "continue"])?;
    Ok(())
}

pub fn approval_resolution(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("approvalId", 1, 256)?;
    o.str("runId", 1, 256)?;
    o.str("callId", 1, 256)?;
    o.literal("outcome", &["approved", "denied", "cancelled", "expired"])?;
    o.with("decidedAt", date_time)
}

pub fn tool_execution(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("executionId", 1, 256)?;
    o.str("runId", 1, 256)?;
    o.with("call", tool_call)
}

pub fn run_result(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("runId", 1, UNBOUNDED)?;
    o.str("provider", 1, UNBOUNDED)?;
    o.str("model", 1, UNBOUNDED)?;
    o.str("text", 0, UNBOUNDED)?;
    o.with("usage", usage)?;
    o.int("steps", 1.0, f64::INFINITY)?;
    o.literal("finishReason", &["stop", "length"])?;
    o.opt_with("session", session_info)?;
    o.opt_with("sources", |v, p| each(array(v, p, 0, 16)?, p, context_manifest))?;
    o.opt_with("artifacts", |v, p| each(array(v, p, 0, 1)?, p, draft_artifact))?;
    o.opt_with("retrieval", retrieval_result)?;
    Ok(())
}

/// The envelope every event carries, known type or not.
pub struct Envelope<'a> {
    pub kind: &'a str,
    pub run_id: &'a str,
    pub sequence: f64,
    pub optional: Option<bool>,
}

pub fn event_envelope(v: &Value) -> Checked<Envelope<'_>> {
    let o = Obj::open(v, "")?;
    let kind = o.str("type", 1, UNBOUNDED)?;
    let run_id = o.str("runId", 1, UNBOUNDED)?;
    let sequence = o.int("sequence", 1.0, MAX_SAFE_INTEGER)?;
    o.with("timestamp", date_time)?;
    let optional = o.opt_bool("optional")?;
    Ok(Envelope { kind, run_id, sequence, optional })
}

/// The payload of a known event type; `None` for an unfamiliar type.
pub fn event_payload(kind: &str, v: &Value) -> Option<Checked<()>> {
    let o = match Obj::open(v, "") {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    let checked = match kind {
        "run.started" => o.str("provider", 1, UNBOUNDED).and_then(|_| o.str("model", 1, UNBOUNDED)).map(drop),
        "step.started" => o.int("step", 1.0, f64::INFINITY).map(drop),
        "text.delta" => o.str("text", 0, UNBOUNDED).map(drop),
        "run.progress" => o.literal("phase", &["model", "tool", "context"]).map(drop),
        "approval.requested" => o.with("approval", approval_request),
        "approval.resolved" => o.with("resolution", approval_resolution),
        "tool.execution.requested" => o.with("execution", tool_execution),
        "tool.called" => o.with("call", tool_call),
        "tool.completed" => o.str("callId", 1, UNBOUNDED).and_then(|_| o.req("output")).map(drop),
        "usage.reported" => o.int("step", 1.0, f64::INFINITY).and_then(|_| o.with("usage", usage)),
        "run.completed" => o.with("result", run_result),
        "run.failed" | "run.cancelled" => o.with("error", error_info),
        _ => return None,
    };
    Some(checked)
}

pub fn protocol_info(v: &Value) -> Checked<()> {
    let o = Obj::open(v, "")?;
    o.literal("protocol", &["agenticdriver"])?;
    o.literal("version", &["1.0"])?;
    let versions = o.array("supportedVersions", 0, UNBOUNDED)?;
    each(versions, &o.at("supportedVersions"), |v, p| string(v, p, 1, UNBOUNDED).map(drop))?;
    if !versions.iter().any(|v| v == "1.0") {
        return Err(format!("{} must contain \"1.0\"", o.at("supportedVersions")));
    }
    each(o.array("features", 0, UNBOUNDED)?, &o.at("features"), |v, p| string(v, p, 0, UNBOUNDED).map(drop))
}

fn provider(v: &Value, p: &str) -> Checked<()> {
    let o = Obj::open(v, p)?;
    o.str("id", 1, UNBOUNDED)?;
    o.str("name", 0, UNBOUNDED)?;
    o.str("vendor", 1, UNBOUNDED)?;
    o.literal("authMode", &["api-key", "cli-session", "none"])?;
    o.with("capabilities", |v, p| {
        let caps = Obj::open(v, p)?;
        caps.bool("tools")?;
        caps.bool("textStreaming")?;
        caps.map.iter().try_for_each(|(k, v)| boolean(v, &caps.at(k)).map(drop))
    })?;
    o.opt_with("models", |v, p| each(array(v, p, 0, UNBOUNDED)?, p, |v, p| string(v, p, 0, UNBOUNDED).map(drop)))?;
    o.opt_str("usageStatId", 0, UNBOUNDED)?;
    o.opt_with("inputMediaTypes", |v, p| {
        let media = Obj::open(v, p)?;
        media.map.iter().try_for_each(|(model, types)| {
            let at = media.at(model);
            each(array(types, &at, 0, 6)?, &at, |v, p| literal(v, p, MEDIA_TYPES).map(drop))
        })
    })?;
    o.opt_with("health", |v, p| {
        let health = Obj::open(v, p)?;
        health.literal("status", &["ready", "unauthenticated", "unavailable", "unsupported", "unknown"])?;
        health.str("code", 1, UNBOUNDED)?;
        health.str("message", 0, UNBOUNDED)?;
        health.with("checkedAt", date_time)
    })?;
    o.opt_with("modelCatalog", |v, p| {
        let catalog = Obj::open(v, p)?;
        catalog.literal("source", &["provider", "configured", "unavailable"])?;
        each(catalog.array("models", 0, 1000)?, &catalog.at("models"), |v, p| string(v, p, 1, UNBOUNDED).map(drop))?;
        catalog.bool("complete").map(drop)
    })?;
    Ok(())
}

pub fn provider_list(v: &Value) -> Checked<()> {
    let o = Obj::open(v, "")?;
    each(o.array("providers", 0, UNBOUNDED)?, &o.at("providers"), provider)
}

/// `{"error": ErrorInfo}`
pub fn error_envelope(v: &Value) -> Checked<()> {
    Obj::open(v, "")?.with("error", error_info)
}
