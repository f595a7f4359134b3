//! The real agenticdriver host (`conformance/live-host-process.ts`, run with `node --import tsx`) as a child
//! process: one over HTTP and one over verified HTTPS, each started on first use and
//! shared by every test of the binary. A host exits when its stdin closes, which happens
//! when the test process ends.
use super::Pki;
use agenticdriver::blocking::AgenticClient;
use agenticdriver::AsyncAgenticClient;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

const START_TIMEOUT: Duration = Duration::from_secs(60);

pub struct LiveHost {
    pub url: String,
    pub token: String,
    pub ca_pem: Option<Vec<u8>>,
    /// Holds the host's stdin open.
    _process: Child,
}

#[derive(Clone, Copy, Debug)]
pub enum Transport {
    Http,
    Https,
}

/// The shared host for `transport`, started on first use.
pub fn live_host(transport: Transport) -> &'static LiveHost {
    static HTTP: OnceLock<LiveHost> = OnceLock::new();
    static HTTPS: OnceLock<LiveHost> = OnceLock::new();
    match transport {
        Transport::Http => HTTP.get_or_init(|| start(None)),
        Transport::Https => HTTPS.get_or_init(|| start(Some(Pki::new("live")))),
    }
}

fn random_token() -> String {
    // RandomState is seeded from the OS; four draws give 256 bits.
    (0..4).map(|_| format!("{:016x}", RandomState::new().build_hasher().finish())).collect()
}

fn start(pki: Option<Pki>) -> LiveHost {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let token = random_token();
    let mut options = serde_json::json!({ "main": token, "restricted": random_token() });
    if let Some(pki) = &pki {
        let (cert, key) = pki.leaf_files();
        options["certFile"] = cert.to_string_lossy().into();
        options["keyFile"] = key.to_string_lossy().into();
    }
    // A file, not a pipe: an unread pipe could fill up and stall the host's logging.
    let log = std::env::temp_dir().join(format!("agenticdriver-rust-live-{}-{}.log", std::process::id(), pki.is_some()));
    let mut process = Command::new("node")
        .args(["--import", "tsx"])
        .arg("conformance/live-host-process.ts")
        .arg(options.to_string())
        .current_dir(crate_dir.join("../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("a host log file"))
        .spawn()
        .expect("node runs");
    let stdout = process.stdout.take().expect("piped stdout");
    let (sender, first_line) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    let line = first_line.recv_timeout(START_TIMEOUT).unwrap_or_default();
    let started: Option<serde_json::Value> = serde_json::from_str(&line).ok();
    let Some(url) = started.as_ref().and_then(|v| v["url"].as_str()) else {
        let _ = process.kill();
        let _ = process.wait();
        panic!("the live host did not start: {}", std::fs::read_to_string(&log).unwrap_or_default());
    };
    let _ = std::fs::remove_file(&log);
    LiveHost { url: url.to_owned(), token, ca_pem: pki.map(|pki| pki.ca_pem.clone()), _process: process }
}

impl LiveHost {
    pub fn async_client(&self) -> AsyncAgenticClient {
        let builder = AsyncAgenticClient::builder(&self.url, &self.token);
        match &self.ca_pem {
            Some(pem) => builder.with_ca_pem(pem).build().unwrap(),
            None => builder.build().unwrap(),
        }
    }

    pub fn blocking_client(&self) -> AgenticClient {
        let builder = AgenticClient::builder(&self.url, &self.token);
        match &self.ca_pem {
            Some(pem) => builder.with_ca_pem(pem).build().unwrap(),
            None => builder.build().unwrap(),
        }
    }
}
