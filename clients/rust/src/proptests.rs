//! Property tests (proptest) of the SSE decoder and of the submission checks the client
//! runs before sending (`approval_decision`, `request` of tool progress, `tool_result`).
//!
//! Streams are generated from a model (frames of data lines, comments, other fields,
//! blank lines, any line ending per line, an optional BOM), serialised and fed in random
//! reads; the decoder must give exactly the model's frames. Arbitrary bytes must give
//! frames or a typed error, never a panic. Bounded: `AGENTICDRIVER_PROPERTY_RUNS` cases per
//! property (default 256); set it higher for a long run.
use crate::error::{codes, DriverError};
use crate::generated::operations as ops;
use crate::sse::SseDecoder;
use crate::types::*;
use crate::validate::{approval_decision, request, tool_result};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value};

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn config() -> Config {
    let cases = std::env::var("AGENTICDRIVER_PROPERTY_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// A line of the model: its text and, for a data line, the value it carries.
#[derive(Debug, Clone)]
struct Line {
    text: String,
    data: Option<String>,
}

#[derive(Debug, Clone)]
struct Model {
    bom: bool,
    frames: Vec<Vec<Line>>,
    gaps: Vec<usize>,
}

/// Line content: any characters but CR and LF (multi-byte ones so reads split them).
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("a".to_owned()),
            Just(" ".to_owned()),
            Just(":".to_owned()),
            Just("data".to_owned()),
            Just("é".to_owned()),
            Just("🌍".to_owned()),
            Just("\u{feff}".to_owned()),
            any::<char>().prop_filter("no line breaks", |c| *c != '\r' && *c != '\n').prop_map(String::from),
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        2 => text().prop_map(|v| Line { text: format!("data: {v}"), data: Some(v) }),
        1 => text().prop_map(|v| v.trim_start_matches(' ').to_owned()).prop_map(|v| Line { text: format!("data:{v}"), data: Some(v) }),
        // A bare field name is a data line with an empty value.
        1 => Just(Line { text: "data".into(), data: Some(String::new()) }),
        1 => Just(Line { text: "data:".into(), data: Some(String::new()) }),
        1 => text().prop_map(|v| Line { text: format!(":{v}"), data: None }),
        1 => Just(Line { text: ": heartbeat".into(), data: None }),
        1 => (prop::sample::select(IGNORED), text()).prop_map(|(f, v)| Line { text: format!("{f}:{v}"), data: None }),
        1 => prop::sample::select(&["event", "id", "datax", "data-"][..]).prop_map(|f| Line { text: f.into(), data: None }),
    ]
}

fn model() -> impl Strategy<Value = Model> {
    (any::<bool>(), prop::collection::vec((prop::collection::vec(line(), 0..6), 0..3usize), 0..6)).prop_map(|(bom, frames)| {
        let (frames, gaps) = frames.into_iter().unzip();
        Model { bom, frames, gaps }
    })
}

impl Model {
    fn expected(&self) -> Vec<String> {
        self.frames
            .iter()
            .map(|frame| frame.iter().filter_map(|l| l.data.clone()).collect::<Vec<_>>())
            .filter(|data| !data.is_empty())
            .map(|data| data.join("\n"))
            .collect()
    }

    /// Writes the model with `ending(i)` after line i; a CR followed by a blank line that
    /// ends in LF would read as one CRLF, so that LF becomes CRLF.
    fn serialise(&self, ending: impl Fn(usize) -> &'static str) -> Vec<u8> {
        let mut lines = Vec::new();
        for (frame, gap) in self.frames.iter().zip(&self.gaps) {
            lines.extend(frame.iter().map(|l| l.text.as_str()));
            lines.extend(std::iter::repeat_n("", gap + 1));
        }
        let mut out = if self.bom { BOM.to_vec() } else { Vec::new() };
        let mut previous = "";
        for (i, l) in lines.iter().enumerate() {
            let mut end = ending(i);
            if previous == "\r" && l.is_empty() && end == "\n" {
                end = "\r\n";
            }
            out.extend_from_slice(l.as_bytes());
            out.extend_from_slice(end.as_bytes());
            previous = end;
        }
        out
    }
}

const IGNORED: &[&str] = &["event", "id", "retry", "Data", "DATA", "datum", "data ", "dat", "x-data"];
const PIECES: &[&[u8]] = &[b"data", b":", b" ", b"\r", b"\n", BOM, b"x", "\u{e9}".as_bytes(), b"\xff", b"\xf0\x9f"];
const ENDINGS: [&str; 3] = ["\n", "\r\n", "\r"];

/// Feeds `body` in reads cut at `cuts` (taken modulo the length; empty reads included).
fn decode(body: &[u8], cuts: &[usize]) -> (Vec<String>, Option<DriverError>) {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    points.sort_unstable();
    points.push(body.len());
    let mut decoder = SseDecoder::new();
    let mut frames = Vec::new();
    let mut start = 0;
    for point in points {
        if let Err(e) = decoder.feed(&body[start..point], &mut frames) {
            return (frames, Some(e));
        }
        start = point;
    }
    let end = decoder.finish().err();
    (frames, end)
}

fn clean(body: &[u8], cuts: &[usize]) -> Vec<String> {
    match decode(body, cuts) {
        (frames, None) => frames,
        (_, Some(e)) => panic!("{body:?} in reads cut at {cuts:?}: {} {}", e.code, e.message),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_streams_decode_to_the_model_in_any_reads(
        m in model(),
        endings in prop::collection::vec(prop::sample::select(&ENDINGS[..]), 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let body = m.serialise(|i| endings[i % endings.len()]);
        prop_assert_eq!(clean(&body, &[]), m.expected());
        prop_assert_eq!(clean(&body, &cuts), m.expected());
        let every_byte: Vec<usize> = (0..body.len()).collect();
        prop_assert_eq!(clean(&body, &every_byte), m.expected());
    }

    #[test]
    fn line_endings_and_a_leading_bom_are_equivalent(m in model(), cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let want = m.expected();
        for end in ENDINGS {
            for bom in [false, true] {
                let variant = Model { bom, ..m.clone() };
                prop_assert_eq!(clean(&variant.serialise(|_| end), &cuts), want.clone(), "ending {:?} bom {}", end, bom);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_fail_only_with_typed_errors(
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..64),
            prop::collection::vec(
                prop::sample::select(PIECES),
                0..40,
            ).prop_map(|parts| parts.concat()),
        ],
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let (whole, whole_error) = decode(&body, &[]);
        let (split, split_error) = decode(&body, &cuts);
        for error in [&whole_error, &split_error].into_iter().flatten() {
            prop_assert!([codes::INVALID_STREAM, codes::INCOMPLETE_STREAM, codes::RESPONSE_TOO_LARGE].contains(&error.code.as_str()), "{}", error.code);
        }
        prop_assert_eq!(whole_error.map(|e| e.code), split_error.map(|e| e.code));
        // A read that fails loses its frames, so smaller reads may deliver more before the error.
        prop_assert_eq!(&split[..whole.len().min(split.len())], &whole[..whole.len().min(split.len())]);
        prop_assert!(split.len() >= whole.len());
    }
}

#[test]
fn a_bare_data_line_is_an_empty_data_value() {
    // Regression: the decoder looked for "data:" and dropped a line that is just "data".
    assert_eq!(clean(b"data\n\n", &[]), vec![String::new()]);
    assert_eq!(clean(b"data\ndata\n\n", &[1, 5]), vec!["\n".to_owned()]);
    assert_eq!(clean(b"data: a\r\ndata\r\ndata:b\r\n\r\n", &[3]), vec!["a\n\nb".to_owned()]);
    assert_eq!(clean(b"datax\n\n", &[]), Vec::<String>::new());
}

#[test]
fn a_body_of_only_a_bom_is_an_empty_stream() {
    for cuts in [vec![], vec![1], vec![1, 2]] {
        assert_eq!(clean(BOM, &cuts), Vec::<String>::new());
    }
    // The BOM is dropped once: a second one makes the field name unknown.
    assert_eq!(clean("\u{feff}\u{feff}data: x\n\n".as_bytes(), &[1, 4]), Vec::<String>::new());
}

// --- Submission checks ---

fn ticket() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => text().prop_map(|t| format!("{t}id")),
        1 => Just(String::new()),
        1 => Just("é".repeat(256)), // 256 code points, 512 bytes
        1 => Just("r".repeat(257)),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from)
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop_oneof![4 => text(), 1 => Just("__proto__".to_owned())], inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value nested `depth` arrays deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!([]), |inner, _| json!([inner]))
}

/// Depth of the deepest value below `value` (0 for a scalar or an empty container).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.iter().map(|v| 1 + depth(v)).max().unwrap_or(0),
        Value::Object(map) => map.values().map(|v| 1 + depth(v)).max().unwrap_or(0),
        _ => 0,
    }
}

fn has_proto(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(has_proto),
        Value::Object(map) => map.contains_key("__proto__") || map.values().any(has_proto),
        _ => false,
    }
}

/// The oracle, from the wire contract: ids of 1 to 256 code points; plain JSON is at most
/// 64 levels deep with no `__proto__` key.
fn ticket_ok(id: &str) -> bool {
    (1..=256).contains(&id.chars().count())
}

fn plain_ok(value: &Value) -> bool {
    depth(value) <= 64 && !has_proto(value)
}

fn deep_or_plain() -> impl Strategy<Value = Value> {
    prop_oneof![4 => json_value(), 1 => (60..70usize).prop_map(nested)]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn approval_decisions_are_refused_exactly_when_invalid(
        approval_id in ticket(),
        run_id in ticket(),
        call_id in ticket(),
        name in prop_oneof![Just("lookup".to_owned()), Just("_x9".to_owned()), Just("n".repeat(64)), Just("9bad".to_owned()), Just("bad-name".to_owned()), Just(String::new()), Just("n".repeat(65))],
        arguments in prop::collection::btree_map(prop_oneof![4 => text(), 1 => Just("__proto__".to_owned())], deep_or_plain(), 0..3),
        action in prop::sample::select(&[ApprovalAction::Approve, ApprovalAction::Deny, ApprovalAction::Cancel][..]),
    ) {
        let arguments: JsonObject = arguments.into_iter().collect();
        let args_value = Value::Object(arguments.clone());
        let valid_name = {
            let b = name.as_bytes();
            !b.is_empty() && b.len() <= 64 && (b[0].is_ascii_alphabetic() || b[0] == b'_') && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        };
        let want = ticket_ok(&approval_id) && ticket_ok(&run_id) && ticket_ok(&call_id) && valid_name && plain_ok(&args_value);
        let decision = ApprovalDecision { approval_id, run_id, call: DecidedCall { id: call_id, name, arguments }, decision: action };
        match approval_decision(&ops::DECIDE_APPROVAL, &decision) {
            Ok(()) => prop_assert!(want, "accepted an invalid decision"),
            Err(e) => {
                prop_assert!(!want, "refused a valid decision: {}", e.message);
                prop_assert_eq!(e.code, codes::INVALID_APPROVAL);
            }
        }
    }

    #[test]
    fn tool_results_and_identities_are_refused_exactly_when_invalid(
        execution_id in ticket(),
        run_id in ticket(),
        call_id in ticket(),
        output in prop::option::of(deep_or_plain()),
        failed in any::<bool>(),
    ) {
        let identity = ToolExecutionIdentity { execution_id: execution_id.clone(), run_id: run_id.clone(), call_id: call_id.clone() };
        let ids_ok = ticket_ok(&execution_id) && ticket_ok(&run_id) && ticket_ok(&call_id);
        match request(&ops::REPORT_TOOL_PROGRESS, &identity) {
            Ok(()) => prop_assert!(ids_ok),
            Err(e) => {
                prop_assert!(!ids_ok);
                prop_assert_eq!(e.code, codes::INVALID_TOOL_EXECUTION);
            }
        }
        let error = failed.then_some(ToolFailure::ApplicationToolFailed);
        let want = ids_ok && match (&output, &error) {
            (Some(value), None) => plain_ok(value),
            (None, Some(_)) => true,
            _ => false,
        };
        let result = ToolExecutionResult { execution_id, run_id, call_id, output, error };
        match tool_result(&result) {
            Ok(()) => prop_assert!(want, "accepted an invalid result"),
            Err(e) => {
                prop_assert!(!want, "refused a valid result: {}", e.message);
                prop_assert_eq!(e.code, codes::INVALID_TOOL_EXECUTION);
            }
        }
    }
}

// --- The whole stream path: decoder, then the event rules ---

const STREAM_CODES: &[&str] = &[codes::INVALID_STREAM, codes::INCOMPLETE_STREAM, codes::RESPONSE_TOO_LARGE, codes::UNSUPPORTED_EVENT];

fn event(sequence: usize, kind: &str, extra: Value) -> Value {
    let mut value = json!({"type": kind, "runId": "r1", "sequence": sequence, "timestamp": "2026-09-20T12:00:00.000Z"});
    value.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    value
}

/// A valid run: run.started, text deltas (some with an unfamiliar optional event between),
/// run.completed with the joined text.
fn run_events(deltas: &[(String, bool)]) -> Vec<Value> {
    let mut events = vec![event(1, "run.started", json!({"provider": "mock", "model": "demo"}))];
    for (text, optional) in deltas {
        if *optional {
            events.push(event(events.len() + 1, "x.future", json!({"optional": true, "anything": [1, 2]})));
        }
        events.push(event(events.len() + 1, "text.delta", json!({"text": text})));
    }
    let text: String = deltas.iter().map(|(t, _)| t.as_str()).collect();
    let result = json!({"runId": "r1", "provider": "mock", "model": "demo", "text": text, "usage": {}, "steps": 1, "finishReason": "stop"});
    events.push(event(events.len() + 1, "run.completed", json!({ "result": result })));
    events
}

/// Decodes `body` in the given reads and validates each frame: the delivered event types,
/// or the first error.
fn stream_events(body: &[u8], cuts: &[usize]) -> Result<Vec<String>, DriverError> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    points.sort_unstable();
    points.push(body.len());
    let mut decoder = SseDecoder::new();
    let mut validator = crate::validate::EventValidator::new(RunRequest::new("mock", "demo", "Hello"));
    let mut delivered = Vec::new();
    let mut start = 0;
    for point in points {
        let mut frames = Vec::new();
        decoder.feed(&body[start..point], &mut frames)?;
        start = point;
        for frame in frames {
            if let Some(event) = validator.accept(&frame)? {
                delivered.push(serde_json::to_value(&event).unwrap()["type"].as_str().unwrap_or_default().to_owned());
            }
            if validator.finished() {
                return Ok(delivered);
            }
        }
    }
    decoder.finish()?;
    Err(DriverError::new(codes::INCOMPLETE_STREAM, "no terminal event"))
}

fn frames_of(events: &[Value], ending: &str) -> Vec<u8> {
    events.iter().map(|e| format!(": hb{ending}data: {e}{ending}{ending}")).collect::<String>().into_bytes()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_valid_run_is_delivered_whole_in_any_reads(
        deltas in prop::collection::vec((text(), any::<bool>()), 0..5),
        ending in prop::sample::select(&ENDINGS[..]),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let body = frames_of(&run_events(&deltas), ending);
        let mut want = vec!["run.started".to_owned()];
        want.extend(deltas.iter().map(|_| "text.delta".to_owned()));
        want.push("run.completed".to_owned());
        match stream_events(&body, &cuts) {
            Ok(types) => prop_assert_eq!(types, want),
            Err(e) => prop_assert!(false, "{}: {}", e.code, e.message),
        }
    }

    #[test]
    fn a_damaged_run_fails_only_with_a_typed_stream_error(
        deltas in prop::collection::vec((text(), any::<bool>()), 0..4),
        damage in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut_at in any::<usize>(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut body = frames_of(&run_events(&deltas), "\n");
        for (at, byte) in damage {
            let at = at % body.len();
            body[at] = byte;
        }
        body.truncate(cut_at % (body.len() + 1));
        // Never a panic; either the run still reads as a run, or a typed error.
        if let Err(e) = stream_events(&body, &cuts) {
            prop_assert!(STREAM_CODES.contains(&e.code.as_str()), "{}: {}", e.code, e.message);
        }
    }
}
