//! Client for hosts speaking AgenticDriver wire protocol 1.0.
//!
//! - [`AsyncAgenticClient`] (feature `async`, default): tokio + reqwest with rustls.
//! - [`blocking::AgenticClient`] (feature `blocking`).
//! - Without features: the wire types only.
//!
//! Every response is validated before it is returned: an event stream yields only
//! events that passed the protocol's consumer rules, and anything else fails with an
//! [`Error`] whose [`code`](Error::code) says what was wrong (`INVALID_STREAM`,
//! `INVALID_RESPONSE`, `INCOMPLETE_STREAM`, `UNSUPPORTED_EVENT`, ... or the host's code).
//!
//! Interactive approvals and application tools: answer an `approval.requested` or a
//! `tool.execution.requested` with one call ([`AsyncAgenticClient::approval`],
//! [`AsyncAgenticClient::execution`]), or let [`AsyncAgenticClient::stream_with_tools`]
//! run your registered [`ToolFunctions`] while you read the stream. The names are those of
//! the TypeScript, Python and Go clients (`docs/client.md`).
mod citations;
pub mod error;
pub mod types;

#[cfg(feature = "async")]
mod async_client;
#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(feature = "async")]
mod builder;
mod generated;
#[cfg(feature = "async")]
mod interactive;
#[cfg(feature = "async")]
mod operator;
#[cfg(feature = "async")]
mod sse;
#[cfg(feature = "async")]
mod tail;
#[cfg(feature = "async")]
mod transport;
#[cfg(feature = "async")]
mod validate;

#[cfg(all(test, feature = "async"))]
mod proptests;

pub use citations::check_citations;
pub use error::{codes, DriverError, Error, ErrorOutcome};
pub use types::*;

#[cfg(feature = "async")]
pub use async_client::{AsyncAgenticClient, EventStream};
#[cfg(feature = "async")]
pub use builder::{Build, ClientBuilder};
#[cfg(feature = "async")]
pub use interactive::{PendingApproval, PendingExecution, ToolContext, ToolFunctions, ToolStream};
#[cfg(feature = "async")]
pub use operator::{AsyncOperatorClient, OperatorTap, OperatorUpdates};
#[cfg(feature = "async")]
pub use tail::{JobTail, RunTail, TailOptions};

/// The wire protocol version this crate speaks.
pub const WIRE_VERSION: &str = "1.0";
