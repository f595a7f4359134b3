//! Building either client from a URL, a token and an optional private CA.
use crate::error::Error;
use crate::transport::ClientConfig;
use std::marker::PhantomData;

/// Configures a client before it is built: `AsyncAgenticClient::builder(url, token)`
/// (or `AgenticClient::builder` with the `blocking` feature).
pub struct ClientBuilder<C> {
    config: ClientConfig,
    client: PhantomData<fn() -> C>,
}

/// The clients a [`ClientBuilder`] can build.
pub trait Build: Sized + sealed::Sealed {
    #[doc(hidden)]
    fn build(config: ClientConfig) -> Result<Self, Error>;
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

impl<C: Build> ClientBuilder<C> {
    pub(crate) fn new(url: &str, token: &str) -> Self {
        ClientBuilder { config: ClientConfig { url: url.to_owned(), token: token.to_owned(), ca_pem: None }, client: PhantomData }
    }

    /// Also trust the CA certificate(s) of this PEM text, for this client only. Built-in
    /// roots stay trusted; certificate and hostname verification stay on.
    pub fn with_ca_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.config.ca_pem = Some(pem.as_ref().to_vec());
        self
    }

    /// Checks the URL (`https://`, or `http://` on loopback only) and token, then builds.
    pub fn build(self) -> Result<C, Error> {
        C::build(self.config)
    }
}
