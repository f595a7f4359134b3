//! Real loopback peers for the client tests: a raw HTTP/1.1 server that answers every
//! request with scripted bytes, over TCP or TLS (a throwaway CA made with openssl).
#![allow(dead_code)] // each test binary uses a different part
pub mod live;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

pub const TOKEN: &str = "test-token-0123456789-0123456789-abcdef";

/// What the peer does after reading a request.
#[derive(Clone)]
pub enum Reply {
    /// Write these bytes, then close.
    Close(Vec<u8>),
    /// Write these bytes, then wait for the client to close and report it.
    Hold(Vec<u8>),
}

pub struct Peer {
    pub url: String,
    /// Each request's head and body, as received.
    pub requests: mpsc::UnboundedReceiver<String>,
    /// One message per held connection the client closed.
    pub closed: mpsc::UnboundedReceiver<()>,
}

pub fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

pub fn sse(events: &[serde_json::Value]) -> Vec<u8> {
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    response("200 OK", &[("content-type", "text/event-stream"), ("agenticdriver-version", "1.0")], body.as_bytes())
}

pub fn json(status: &str, body: &serde_json::Value) -> Vec<u8> {
    response(status, &[("content-type", "application/json")], body.to_string().as_bytes())
}

async fn read_request<S: AsyncRead + Unpin>(stream: &mut S) -> Option<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return Some(text);
            }
        }
    }
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    reply: Reply,
    requests: mpsc::UnboundedSender<String>,
    closed: mpsc::UnboundedSender<()>,
) {
    let Some(request) = read_request(&mut stream).await else { return };
    let _ = requests.send(request);
    let (bytes, hold) = match reply {
        Reply::Close(bytes) => (bytes, false),
        Reply::Hold(bytes) => (bytes, true),
    };
    if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
        return;
    }
    if hold {
        let mut buf = [0u8; 64];
        while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
        let _ = closed.send(());
    } else {
        let _ = stream.shutdown().await;
    }
}

/// Serves `reply` to every connection on 127.0.0.1 (TLS when `tls` is given).
pub async fn serve(reply: Reply, tls: Option<&Pki>) -> Peer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (request_tx, requests) = mpsc::unbounded_channel();
    let (closed_tx, closed) = mpsc::unbounded_channel();
    let acceptor = tls.map(|pki| tokio_rustls::TlsAcceptor::from(pki.server_config()));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (reply, requests, closed, acceptor) = (reply.clone(), request_tx.clone(), closed_tx.clone(), acceptor.clone());
            tokio::spawn(async move {
                match acceptor {
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(tcp).await {
                            answer(stream, reply, requests, closed).await;
                        }
                    }
                    None => answer(tcp, reply, requests, closed).await,
                }
            });
        }
    });
    let scheme = if tls.is_some() { "https" } else { "http" };
    Peer { url: format!("{scheme}://127.0.0.1:{port}/"), requests, closed }
}

/// A throwaway CA and a server certificate for `IP:127.0.0.1` only.
pub struct Pki {
    dir: PathBuf,
    pub ca_pem: Vec<u8>,
}

fn openssl(dir: &PathBuf, args: &[&str]) {
    let status = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl runs");
    assert!(status.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

impl Pki {
    pub fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("agenticdriver-rust-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            &dir,
            &[
                &["req", "-x509"],
                &ec[..],
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "1",
                    "-subj",
                    "/CN=agenticdriver test CA",
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign",
                ],
            ]
            .concat(),
        );
        openssl(&dir, &[&["req"], &ec[..], &["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"]].concat());
        std::fs::write(dir.join("leaf.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
            .unwrap();
        openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                "leaf.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "leaf.pem",
                "-days",
                "1",
                "-extfile",
                "leaf.ext",
            ],
        );
        let ca_pem = std::fs::read(dir.join("ca.pem")).unwrap();
        Pki { dir, ca_pem }
    }

    /// The server certificate and its key, as PEM files.
    pub fn leaf_files(&self) -> (PathBuf, PathBuf) {
        (self.dir.join("leaf.pem"), self.dir.join("leaf.key"))
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let certs =
            rustls_pemfile::certs(&mut &std::fs::read(self.dir.join("leaf.pem")).unwrap()[..]).collect::<Result<Vec<_>, _>>().unwrap();
        let key = rustls_pemfile::private_key(&mut &std::fs::read(self.dir.join("leaf.key")).unwrap()[..]).unwrap().unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        Arc::new(config)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn base_events() -> Vec<serde_json::Value> {
    let at = "2026-09-20T12:00:00.000Z";
    vec![
        serde_json::json!({"type": "run.started", "runId": "r1", "sequence": 1, "timestamp": at, "provider": "mock", "model": "demo"}),
        serde_json::json!({"type": "text.delta", "runId": "r1", "sequence": 2, "timestamp": at, "text": "Hi"}),
        serde_json::json!({"type": "run.completed", "runId": "r1", "sequence": 3, "timestamp": at,
            "result": {"runId": "r1", "provider": "mock", "model": "demo", "text": "Hi", "usage": {}, "steps": 1, "finishReason": "stop"}}),
    ]
}
