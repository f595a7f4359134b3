//! Run records: `read_run` and `run_events` against their rules on scripted peers,
//! `follow_run` against a loopback server that drops its connections, and the real host.
use super::tail::{fast, script, stream, Answer, Script};
use super::*;
use crate::support::live::{live_host, Transport};
use futures_util::StreamExt;

/// A run record of the test run, read back, with fields replaced (`null` removes one).
fn run(changes: Value) -> Value {
    let mut run = json!({
        "runId": RUN_ID, "mode": "attached", "provider": "mock", "model": "demo", "state": "completed", "cursor": 4,
        "createdAt": "2026-09-21T12:00:00.000Z", "updatedAt": "2026-09-21T12:00:01.000Z", "expiresAt": "2026-09-22T12:00:00.000Z",
        "result": result("demo")["result"],
    });
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            run.as_object_mut().unwrap().remove(key);
        } else {
            run[key] = value.clone();
        }
    }
    run
}

fn running(cursor: u64) -> Value {
    run(json!({"state": "running", "cursor": cursor, "expiresAt": null, "result": null}))
}

#[tokio::test]
async fn read_run_checks_the_record() {
    let read = answering(&run(json!({}))).await.read_run(RUN_ID).await.unwrap();
    assert_eq!(read.state, RunState::Completed);
    assert_eq!(read.result.unwrap().text, "Hello");
    let other = "00000000-0000-4000-8000-000000000009";
    let cases = [
        ("another run", run(json!({"runId": other}))),
        ("expiry while running", run(json!({"state": "running", "result": null}))),
        ("result while failed", run(json!({"state": "failed"}))),
        ("job id on an attached run", run(json!({"jobId": JOB_ID}))),
        ("no job id on a background run", run(json!({"mode": "background"}))),
        ("unknown state", run(json!({"state": "paused"}))),
    ];
    for (name, record) in cases {
        let error = answering(&record).await.read_run(RUN_ID).await.unwrap_err();
        assert_eq!(error.code(), Some(codes::INVALID_RESPONSE), "{name}: {error}");
    }
    let error = answering(&run(json!({}))).await.read_run("not-a-uuid").await.unwrap_err();
    assert_eq!(error.code(), Some(codes::INVALID_RUN_READ));
}

#[tokio::test]
async fn run_events_checks_the_page() {
    let log = completed_log();
    let page = json!({"run": run(json!({})), "events": log, "nextCursor": 4, "hasMore": false});
    let request = RunEventsRequest { run_id: RUN_ID.into(), after: 0, limit: None };
    assert_eq!(answering(&page).await.run_events(&request).await.unwrap().events.len(), 4);
    let mut gap = log.clone();
    gap[1]["sequence"] = json!(3);
    let cases = [
        ("gap", json!({"run": run(json!({})), "events": gap, "nextCursor": 4, "hasMore": false})),
        ("beyond the cursor", json!({"run": running(3), "events": log, "nextCursor": 4, "hasMore": false})),
        ("terminal while running", json!({"run": running(4), "events": log, "nextCursor": 4, "hasMore": false})),
        ("next cursor", json!({"run": run(json!({})), "events": log, "nextCursor": 3, "hasMore": false})),
    ];
    for (name, value) in cases {
        let error = answering(&value).await.run_events(&request).await.unwrap_err();
        assert_eq!(error.code(), Some(codes::INVALID_RESPONSE), "{name}: {error}");
    }
}

async fn follow(script: &Script, options: TailOptions) -> (Vec<u64>, Option<Error>) {
    let client = AsyncAgenticClient::new(&script.url, TOKEN).unwrap();
    let mut tail = match client.follow_run(RUN_ID, &options).await {
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
async fn follow_run_resumes_with_last_event_id() {
    let log = completed_log();
    let s = script(running(1), vec![Answer::Drop(log[..2].to_vec()), stream(&log[2..])]).await;
    let (sequences, error) = follow(&s, fast(0, 3)).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(sequences, [1, 2, 3, 4]);
    assert_eq!(s.last_event_ids(), ["0", "2"]);
}

#[tokio::test]
async fn follow_run_gives_up_with_run_stream_lost() {
    let s = script(running(1), vec![Answer::Drop(Vec::new())]).await;
    let (_, error) = follow(&s, fast(0, 3)).await;
    let error = error.expect("the follow gives up");
    assert_eq!(error.code(), Some(codes::RUN_STREAM_LOST), "{error}");
    assert!(error.retryable());
    assert_eq!(s.last_event_ids().len(), 3);
}

#[tokio::test]
async fn follow_run_of_a_finished_run_read_to_its_end_opens_no_stream() {
    let s = script(run(json!({})), vec![]).await;
    let (sequences, error) = follow(&s, fast(4, 3)).await;
    assert!(error.is_none() && sequences.is_empty(), "{sequences:?} {error:?}");
    assert!(s.last_event_ids().is_empty());
    let s = script(run(json!({})), vec![]).await;
    let (_, error) = follow(&s, fast(5, 3)).await;
    assert_eq!(error.unwrap().code(), Some(codes::INVALID_RUN_CURSOR));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_attached_run_is_read_back_paged_and_followed_on_the_real_host() {
    let client = live_host(Transport::Http).async_client();
    let answered = client.run(&RunRequest::new("mock", "demo", "read me back")).await.unwrap();
    let read = client.read_run(&answered.run_id).await.unwrap();
    assert_eq!(read.mode, RunMode::Attached);
    assert_eq!(read.state, RunState::Completed);
    assert_eq!(read.result.as_ref(), Some(&answered));
    let mut followed = Vec::new();
    let mut tail = client.follow_run(&answered.run_id, &TailOptions::default()).await.unwrap();
    while let Some(event) = tail.next().await {
        followed.push(event.unwrap());
    }
    assert!(followed.last().unwrap().is_terminal());
    assert_eq!(followed.len() as u64, read.cursor);
    let page = client.run_events(&RunEventsRequest { run_id: answered.run_id.clone(), after: 2, limit: None }).await.unwrap();
    assert_eq!(page.events, followed[2..]);
}
