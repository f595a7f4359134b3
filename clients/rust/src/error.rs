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

/// Every error code of the contract (generated from `protocol/status-codes.json`), for
/// comparing with [`Error::code`]. Host codes pass through unchanged, also unknown ones.
pub use crate::generated::codes;
