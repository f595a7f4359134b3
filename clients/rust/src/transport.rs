//! HTTP exchanges with a host: URL and token rules, negotiation headers, no redirects,
//! no retries, response version check, bounded bodies, error envelopes.
use crate::error::{codes, DriverError, Error};
use crate::validate;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Method, Response, Url};
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

pub const WIRE_VERSION: &str = "1.0";
const VERSION_HEADER: &str = "agenticdriver-version";
const OPTIONAL_EVENTS_HEADER: &str = "agenticdriver-accept-optional-events";
const MAX_JSON_BYTES: usize = 2_000_000;
const MAX_ERROR_BYTES: usize = 64_000;
const MAX_TOKEN_CHARS: usize = 4096;
/// Discovery calls are bounded; runs have no client deadline.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a client is built from.
#[derive(Clone)]
pub struct ClientConfig {
    pub url: String,
    pub token: String,
    pub ca_pem: Option<Vec<u8>>,
}

pub struct Transport {
    http: reqwest::Client,
    base: Url,
    auth: HeaderValue,
}

pub fn transport_error(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Transport(Box::new(e))
}

/// The host's loopback rule, the same in every client (protocol/fixtures/base-url.json):
/// `localhost`, a dotted-quad 127.0.0.0/8 literal, `::1` and `::ffff:127.x.y.z`. It reads the
/// host as written: the URL parser would turn the name `127.1` into the address 127.0.0.1.
fn is_loopback(text: &str) -> bool {
    let rest = text.trim_start().split_once("://").map_or("", |(_, rest)| rest);
    let authority = rest.split(['/', '\\', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4: Ipv4Addr| v4.is_loopback()),
        Err(_) => false,
    }
}

/// `https://` anywhere, `http://` only on loopback; no user info, query or fragment.
/// The path is kept as a prefix that endpoints resolve under.
fn base_url(text: &str) -> Result<Url, Error> {
    let insecure = |why: &str| Error::driver(codes::INSECURE_TRANSPORT, format!("host URL {why}"));
    let invalid = || Error::driver(codes::INVALID_URL, "host URL is not an absolute http(s) URL (e.g. http://127.0.0.1:7433)");
    let mut url = Url::parse(text).map_err(|_| invalid())?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(text) => {}
        "http" => return Err(insecure("must use https:// unless the host is loopback")),
        _ => return Err(invalid()),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(insecure("must not carry credentials"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(insecure("must not have a query or fragment"));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

fn bearer(token: &str) -> Result<HeaderValue, Error> {
    let required = || Error::driver(codes::AUTH_REQUIRED, "a bearer token of 1-4096 visible characters is required");
    if token.is_empty() || token.chars().count() > MAX_TOKEN_CHARS || token.chars().any(|c| c.is_whitespace() || c == '\0') {
        return Err(required());
    }
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| required())?;
    value.set_sensitive(true);
    Ok(value)
}

impl Transport {
    pub fn new(config: &ClientConfig) -> Result<Self, Error> {
        let base = base_url(&config.url)?;
        let auth = bearer(&config.token)?;
        let mut headers = HeaderMap::new();
        headers.insert(VERSION_HEADER, HeaderValue::from_static(WIRE_VERSION));
        headers.insert(OPTIONAL_EVENTS_HEADER, HeaderValue::from_static("true"));
        let mut builder = reqwest::Client::builder()
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .https_only(base.scheme() == "https");
        if let Some(pem) = &config.ca_pem {
            for certificate in reqwest::Certificate::from_pem_bundle(pem).map_err(transport_error)? {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let http = builder.build().map_err(transport_error)?;
        Ok(Transport { http, base, auth })
    }

    /// `GET` an endpoint without a client deadline and return its JSON body.
    pub async fn get_answer(&self, path: &str) -> Result<Value, Error> {
        let response = self.send(Method::GET, path, None, "application/json", None, None).await?;
        read_json(response).await
    }

    /// `GET` a discovery endpoint and return its JSON body.
    pub async fn get_json(&self, path: &str) -> Result<Value, Error> {
        let response = self.send(Method::GET, path, None, "application/json", Some(DISCOVERY_TIMEOUT), None).await?;
        read_json(response).await
    }

    /// `POST` a JSON body and return the JSON response.
    pub async fn post_json(&self, path: &str, body: Vec<u8>) -> Result<Value, Error> {
        let response = self.send(Method::POST, path, Some(body), "application/json", None, None).await?;
        read_json(response).await
    }

    /// `POST` a JSON body and return the accepted `text/event-stream` response.
    pub async fn post_stream(&self, path: &str, body: Vec<u8>) -> Result<Response, Error> {
        let response = self.send(Method::POST, path, Some(body), "text/event-stream", None, None).await?;
        event_stream(response)
    }

    /// `GET` an event stream, resuming after `last_event_id` (the `Last-Event-ID` header).
    pub async fn get_stream(&self, path: &str, last_event_id: Option<u64>) -> Result<Response, Error> {
        let response = self.send(Method::GET, path, None, "text/event-stream", None, last_event_id).await?;
        event_stream(response)
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        accept: &'static str,
        timeout: Option<Duration>,
        last_event_id: Option<u64>,
    ) -> Result<Response, Error> {
        let url = self.base.join(path).map_err(transport_error)?;
        let mut request = self.http.request(method, url).header(AUTHORIZATION, self.auth.clone()).header(ACCEPT, accept);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        if let Some(body) = body {
            request = request.header(CONTENT_TYPE, "application/json").body(body);
        }
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        let response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        if !status.is_success() {
            return Err(http_error(response).await);
        }
        let versions: Vec<&HeaderValue> = response.headers().get_all(VERSION_HEADER).iter().collect();
        if !versions.is_empty() && (versions.len() > 1 || versions[0] != WIRE_VERSION) {
            return Err(Error::driver(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("the host answered with protocol version {versions:?}"),
            ));
        }
        Ok(response)
    }
}

/// An accepted response must be `text/event-stream`.
fn event_stream(response: Response) -> Result<Response, Error> {
    let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !content_type.to_ascii_lowercase().contains("text/event-stream") {
        return Err(Error::driver(codes::INVALID_RESPONSE, format!("expected text/event-stream, got {content_type:?}")));
    }
    Ok(response)
}

enum Body {
    Complete(Vec<u8>),
    TooLarge,
}

/// Reads at most `limit` bytes of a body.
async fn read_body(mut response: Response, limit: usize) -> Result<Body, Error> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Ok(Body::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > limit {
            return Ok(Body::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Body::Complete(body))
}

async fn read_json(response: Response) -> Result<Value, Error> {
    match read_body(response, MAX_JSON_BYTES).await? {
        Body::Complete(bytes) => Ok(validate::parse_json(&bytes)?),
        Body::TooLarge => Err(Error::driver(codes::RESPONSE_TOO_LARGE, format!("the response body exceeds {MAX_JSON_BYTES} bytes"))),
    }
}

/// A non-2xx response: the host's wire error when the body is an error envelope,
/// otherwise `HTTP_ERROR` (retryable for 429 and 5xx).
async fn http_error(response: Response) -> Error {
    let status = response.status().as_u16();
    if let Ok(Body::Complete(bytes)) = read_body(response, MAX_ERROR_BYTES).await {
        if let Some(error) = validate::error_envelope(&bytes, status) {
            return Error::Driver(error);
        }
    }
    Error::Driver(DriverError {
        code: codes::HTTP_ERROR.to_owned(),
        message: format!("the host answered HTTP {status}"),
        retryable: status == 429 || status >= 500,
        outcome: None,
        status: Some(status),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_need_tls_off_loopback_and_keep_their_path() {
        for ok in [
            "https://example.test",
            "http://127.0.0.1:9/",
            "http://localhost:1/x",
            "http://[::1]:2",
            "http://127.8.0.1",
            "http://[::ffff:127.0.0.1]",
            "http://[::ffff:7f00:1]",
            "HTTP://LOCALHOST:1",
        ] {
            assert!(base_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.test",
            "https://u:p@example.test",
            "https://example.test/?q=1",
            "https://example.test/#f",
            "http://127.1",
            "http://0x7f.0.0.1",
            "http://2130706433",
            "http://[::ffff:10.0.0.1]",
            "http://localhost.example.test",
        ] {
            assert_eq!(base_url(bad).unwrap_err().code(), Some(codes::INSECURE_TRANSPORT), "{bad}");
        }
        // Not an absolute http(s) URL at all: a URL mistake, not a transport one.
        for bad in ["ftp://example.test", "nope", "127.0.0.1:7433", "localhost:7433", ""] {
            assert_eq!(base_url(bad).unwrap_err().code(), Some(codes::INVALID_URL), "{bad}");
        }
        let url = base_url("https://example.test/fixtures/case").unwrap();
        assert_eq!(url.join("v1/runs").unwrap().as_str(), "https://example.test/fixtures/case/v1/runs");
    }

    #[test]
    fn tokens_must_be_visible_and_bounded() {
        assert!(bearer("a-token").is_ok());
        for bad in ["", "has space", "nul\0", &"x".repeat(4097), "tab\t"] {
            assert_eq!(bearer(bad).unwrap_err().code(), Some(codes::AUTH_REQUIRED));
        }
    }
}
