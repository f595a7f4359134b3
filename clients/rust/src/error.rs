//! The one error type every client operation returns.
use std::fmt;

/// `outcome` of a wire error: the only defined value is `"uncertain"` (effects may have
/// happened and need reconciliation before anything is repeated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ErrorOutcome {
    #[serde(rename = "uncertain")]
    Uncertain,
}

/// A coded failure: a wire error sent by the host (HTTP error envelope, `run.failed`,
/// `run.cancelled`) or a client-side code (`INVALID_STREAM`, `HTTP_ERROR`, ...).
/// Unknown codes are kept as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    pub code: String,
    pub message: String,
    /// A hint that the condition may be transient; never permission to replay effects.
    pub retryable: bool,
    pub outcome: Option<ErrorOutcome>,
    /// The HTTP status when the failure was an HTTP error response.
    pub status: Option<u16>,
}

impl DriverError {
    #[cfg_attr(not(feature = "async"), allow(dead_code))] // the types-only build raises nothing
    pub(crate) fn new(code: &str, message: impl Into<String>) -> Self {
        DriverError { code: code.to_owned(), message: message.into(), retryable: false, outcome: None, status: None }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// Why an operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A coded failure (see [`DriverError`]).
    Driver(DriverError),
    /// No HTTP exchange completed: connection refused or reset, TLS handshake rejected
    /// (untrusted certificate, hostname mismatch), DNS failure, or a failure to start the
    /// blocking client's runtime. The source error says which.
    Transport(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl Error {
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    pub(crate) fn driver(code: &str, message: impl Into<String>) -> Self {
        Error::Driver(DriverError::new(code, message))
    }

    /// The wire or client code, when the failure has one.
    pub fn code(&self) -> Option<&str> {
        self.as_driver().map(|e| e.code.as_str())
    }

    /// The coded error, when the failure has one.
    pub fn as_driver(&self) -> Option<&DriverError> {
        match self {
            Error::Driver(e) => Some(e),
            Error::Transport(_) => None,
        }
    }

    /// The `retryable` hint (false for transport failures: nothing says they are transient).
    pub fn retryable(&self) -> bool {
        self.as_driver().is_some_and(|e| e.retryable)
    }

    /// `Some(Uncertain)` when effects may have happened.
    pub fn outcome(&self) -> Option<ErrorOutcome> {
        self.as_driver().and_then(|e| e.outcome)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Driver(e) => e.fmt(f),
            Error::Transport(e) => write!(f, "transport failure: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver(_) => None,
            Error::Transport(e) => Some(e.as_ref()),
        }
    }
}

impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        Error::Driver(e)
    }
}

/// The client-side codes, for comparing with [`Error::code`]. Host codes pass through
/// unchanged and are not listed here.
pub mod codes {
    pub const INVALID_RESPONSE: &str = "INVALID_RESPONSE";
    pub const INVALID_STREAM: &str = "INVALID_STREAM";
    pub const INCOMPLETE_STREAM: &str = "INCOMPLETE_STREAM";
    pub const UNSUPPORTED_EVENT: &str = "UNSUPPORTED_EVENT";
    pub const RESPONSE_TOO_LARGE: &str = "RESPONSE_TOO_LARGE";
    pub const UNSUPPORTED_PROTOCOL_VERSION: &str = "UNSUPPORTED_PROTOCOL_VERSION";
    pub const HTTP_ERROR: &str = "HTTP_ERROR";
    pub const INSECURE_TRANSPORT: &str = "INSECURE_TRANSPORT";
    pub const INVALID_URL: &str = "INVALID_URL";
    pub const AUTH_REQUIRED: &str = "AUTH_REQUIRED";
    pub const TOOL_STREAM_REQUIRED: &str = "TOOL_STREAM_REQUIRED";
    pub const APPROVAL_STREAM_REQUIRED: &str = "APPROVAL_STREAM_REQUIRED";
    /// A malformed approval decision, refused before it is sent (the host's code).
    pub const INVALID_APPROVAL: &str = "INVALID_APPROVAL";
    /// A malformed tool progress report or result, refused before it is sent (the host's code).
    pub const INVALID_TOOL_EXECUTION: &str = "INVALID_TOOL_EXECUTION";
    /// A misused client call: an event this stream did not deliver, or a function
    /// registered for a tool the request does not declare.
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// A malformed session request, refused before it is sent (the host's code).
    pub const INVALID_SESSION: &str = "INVALID_SESSION";
    /// A malformed job submission, identity or events request, refused before it is sent
    /// (the host's code).
    pub const INVALID_JOB: &str = "INVALID_JOB";
    /// `tail_job` gave up: its connection attempts failed too many times in a row.
    pub const JOB_STREAM_LOST: &str = "JOB_STREAM_LOST";
    /// A malformed search, index or delete request, refused before it is sent (the host's code).
    pub const INVALID_RETRIEVAL: &str = "INVALID_RETRIEVAL";
    /// A malformed ingestion request, refused before it is sent (the host's code).
    pub const INVALID_INGESTION: &str = "INVALID_INGESTION";
    /// A malformed operator request, refused before it is sent (the host's code).
    pub const INVALID_OPERATOR_REQUEST: &str = "INVALID_OPERATOR_REQUEST";
    /// A `[source:ID]` citation that is malformed or names no source of the result.
    pub const INVALID_CITATION: &str = "INVALID_CITATION";
}
