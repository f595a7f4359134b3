//! `tail_job` against a loopback HTTP server that answers each connection from a script:
//! the job read first, then the live stream, dropping connections mid-stream.
use super::*;
use agenticdriver::blocking::AgenticClient;
use futures_util::StreamExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What one connection gets.
#[derive(Clone)]
pub(super) enum Answer {
    /// A whole response, then close.
    Whole(Vec<u8>),
    /// The events and the start of another frame in a chunked body without its last
    /// chunk, then an abrupt close.
    Drop(Vec<Value>),
}

fn frames(events: &[Value]) -> String {
    events.iter().map(|e| format!("id: {}\nevent: {}\ndata: {e}\n\n", e["sequence"], e["type"].as_str().unwrap())).collect()
}

pub(super) fn stream(events: &[Value]) -> Answer {
    Answer::Whole(response(
        "200 OK",
        &[("content-type", "text/event-stream"), ("agenticdriver-version", "1.0")],
        format!(": heartbeat\n\n{}", frames(events)).as_bytes(),
    ))
}

pub(super) struct Script {
    pub(super) url: String,
    /// The head of each request, in order.
    heads: Arc<Mutex<Vec<String>>>,
}

impl Script {
    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }

    /// The Last-Event-ID of each stream request, in order.
    pub(super) fn last_event_ids(&self) -> Vec<String> {
        self.heads()
            .iter()
            .filter(|head| head.starts_with("GET "))
            .map(|head| {
                head.lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("last-event-id:").map(|v| v.trim().to_owned()))
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// Serves `job` (or a run: any record read first) to the first request, then `answers` in order (the last one repeats).
pub(super) async fn script(job: Value, answers: Vec<Answer>) -> Script {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&heads);
    let mut all = vec![Answer::Whole(json("200 OK", &job))];
    all.extend(answers);
    tokio::spawn(async move {
        let mut served = 0;
        while let Ok((mut tcp, _)) = listener.accept().await {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            // Stream requests have no body; the job read's body follows its head.
            while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
                match tcp.read(&mut buf).await {
                    Ok(n) if n > 0 => seen.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            recorded.lock().unwrap().push(String::from_utf8_lossy(&seen).into_owned());
            let answer = all[served.min(all.len() - 1)].clone();
            served += 1;
            let bytes = match answer {
                Answer::Whole(bytes) => bytes,
                Answer::Drop(events) => {
                    let body = format!("{}id: 99\ndata: {{\"type\":\"text.de", frames(&events));
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nagenticdriver-version: 1.0\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n",
                        body.len()
                    )
                    .into_bytes()
                }
            };
            let _ = tcp.write_all(&bytes).await;
            let _ = tcp.shutdown().await;
        }
    });
    Script { url, heads }
}

fn running() -> Value {
    job(json!({"state": "running", "cursor": 1, "expiresAt": null}))
}

pub(super) fn fast(after: u64, max_attempts: u32) -> TailOptions {
    TailOptions { after, max_attempts, initial_backoff: Duration::from_millis(1), max_backoff: Duration::from_millis(4) }
}

async fn tail(script: &Script, options: TailOptions) -> (Vec<u64>, Option<Error>) {
    let client = AsyncAgenticClient::new(&script.url, TOKEN).unwrap();
    let mut tail = match client.tail_job(JOB_ID, &options).await {
        Ok(tail) => tail,
        Err(error) => return (Vec::new(), Some(error)),
    };
    let mut sequences = Vec::new();
    while let Some(item) = tail.next().await {
        match item {
            Ok(event) => sequences.push(event.sequence),
            Err(error) => return (sequences, Some(error)),
        }
    }
    (sequences, None)
}

#[tokio::test]
async fn a_dropped_connection_resumes_after_the_last_event_without_duplicates_or_gaps() {
    let log = completed_log();
    let s = script(running(), vec![Answer::Drop(log[..2].to_vec()), Answer::Drop(log[2..3].to_vec()), stream(&log[3..])]).await;
    let (sequences, error) = tail(&s, fast(0, 3)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(sequences, [1, 2, 3, 4]);
    assert_eq!(s.last_event_ids(), ["0", "2", "3"]);
    let heads = s.heads();
    assert!(heads[0].starts_with("POST /v1/jobs/read "), "{}", heads[0]);
    let stream_head = heads[1].to_ascii_lowercase();
    assert!(stream_head.starts_with(&format!("get /v1/jobs/{JOB_ID}/stream ")), "{stream_head}");
    assert!(
        stream_head.contains("accept: text/event-stream")
            && stream_head.contains(&format!("authorization: bearer {}", TOKEN.to_ascii_lowercase()))
    );
}

#[tokio::test]
async fn the_tail_starts_after_the_given_sequence() {
    let log = completed_log();
    let s = script(job(json!({"state": "running", "cursor": 2, "expiresAt": null})), vec![stream(&log[2..])]).await;
    let (sequences, error) = tail(&s, fast(2, 3)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(sequences, [3, 4]);
    assert_eq!(s.last_event_ids(), ["2"]);
}

#[tokio::test]
async fn progress_renews_the_attempt_budget() {
    let log = completed_log();
    let drops = log.iter().map(|e| Answer::Drop(vec![e.clone()])).collect();
    let s = script(running(), drops).await;
    let (sequences, error) = tail(&s, fast(0, 2)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(sequences, [1, 2, 3, 4]);
}

#[tokio::test]
async fn the_tail_gives_up_after_max_attempts_in_a_row() {
    let log = completed_log();
    let s = script(running(), vec![Answer::Drop(log[..1].to_vec()), Answer::Drop(Vec::new())]).await;
    let (sequences, error) = tail(&s, fast(0, 3)).await;
    let error = error.expect("the tail gives up");
    assert_eq!(error.code(), Some(codes::JOB_STREAM_LOST), "{error}");
    assert!(error.retryable());
    assert_eq!(sequences, [1]);
    assert_eq!(s.last_event_ids(), ["0", "1", "1", "1"]);

    let busy = json("503 Service Unavailable", &json!({"error": {"code": "HOST_STARTING", "message": "starting", "retryable": true}}));
    let s = script(running(), vec![Answer::Whole(busy)]).await;
    let (_, error) = tail(&s, fast(0, 3)).await;
    let error = error.expect("the tail gives up");
    assert_eq!(error.code(), Some(codes::JOB_STREAM_LOST));
    assert!(error.to_string().contains("HOST_STARTING"), "{error}");
    assert_eq!(s.last_event_ids().len(), 3);
}

#[tokio::test]
async fn rule_violations_and_final_host_errors_end_the_tail_at_once() {
    let log = completed_log();
    let not_found = json("404 Not Found", &json!({"error": {"code": "JOB_NOT_FOUND", "message": "none", "retryable": false}}));
    let wrong_id =
        Answer::Whole(response("200 OK", &[("content-type", "text/event-stream")], format!("id: 7\ndata: {}\n\n", log[0]).as_bytes()));
    let execution = event(
        2,
        "tool.execution.requested",
        json!({"execution": {"executionId": "e", "runId": RUN_ID, "call": {"id": "c", "name": "t", "arguments": {}}}}),
    );
    let cases = [
        ("replay ignoring Last-Event-ID", vec![Answer::Drop(log[..2].to_vec()), stream(&log)], codes::INVALID_STREAM, 2),
        ("frame id is not the sequence", vec![wrong_id], codes::INVALID_STREAM, 1),
        ("tool execution event", vec![stream(&[log[0].clone(), execution])], codes::INVALID_STREAM, 1),
        (
            "unknown optional event",
            vec![stream(&[log[0].clone(), event(2, "future.event", json!({"optional": true}))])],
            codes::UNSUPPORTED_EVENT,
            1,
        ),
        (
            "another run",
            vec![stream(&[event(
                1,
                "run.started",
                json!({"provider": "mock", "model": "demo", "runId": "00000000-0000-4000-8000-000000000003"}),
            )])],
            codes::INVALID_STREAM,
            1,
        ),
        ("job not found", vec![Answer::Whole(not_found)], "JOB_NOT_FOUND", 1),
    ];
    for (name, answers, code, connections) in cases {
        let s = script(running(), answers).await;
        let (_, error) = tail(&s, fast(0, 3)).await;
        assert_eq!(error.as_ref().and_then(Error::code), Some(code), "{name}: {error:?}");
        assert_eq!(s.last_event_ids().len(), connections, "{name}");
    }
}

#[tokio::test]
async fn a_finished_job_at_the_given_sequence_has_nothing_to_tail() {
    let s = script(job(json!({})), vec![stream(&[])]).await;
    let (sequences, error) = tail(&s, fast(4, 3)).await;
    assert!(sequences.is_empty() && error.is_none(), "{error:?}");
    assert!(s.last_event_ids().is_empty());
    let s = script(job(json!({})), vec![stream(&[])]).await;
    let (_, error) = tail(&s, fast(5, 3)).await;
    assert_eq!(error.as_ref().and_then(Error::code), Some(codes::INVALID_ARGUMENT));
}

#[test]
fn the_blocking_tail_resumes_too() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let log = completed_log();
    let s = runtime.block_on(script(running(), vec![Answer::Drop(log[..3].to_vec()), stream(&log[3..])]));
    let client = AgenticClient::new(&s.url, TOKEN).unwrap();
    let events: Vec<Event> = client.tail_job(JOB_ID, &fast(0, 3)).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(events.iter().map(|e| e.sequence).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(events.last().unwrap().is_terminal());
    assert_eq!(s.last_event_ids(), ["0", "3"]);
}
