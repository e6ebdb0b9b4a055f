//! Fluss RPC: API keys, framing, request/response pairing, and the client connection.
//!
//! - [`ApiKey`] and [`VersionRange`]: Fluss's API keys and the versions Riverlet speaks.
//! - [`frame`]: the big-endian frame layout, encoders/decoders and async `read_frame`/`write_frame`
//!   shared by the client and the embedded server.
//! - [`RpcRequest`]: ties each request message to its key and response message.
//! - [`ServerConnection`]: one multiplexed client connection with version negotiation and
//!   SASL/PLAIN.
//! - [`sasl`]: PLAIN tokens, shared by client and server.
//! - [`tls`]: TLS around a connection (client trust, server identity), shared likewise.

mod api_key;
mod connection;
pub mod frame;
mod message;
pub mod sasl;
pub mod tls;

pub use api_key::{ApiKey, VersionRange};
pub use connection::{ConnectionConfig, NegotiatedVersions, SaslConfig, ServerConnection};
pub use frame::{RequestHeader, ResponseFrame, ResponseType};
pub use message::{RpcRequest, IMPLEMENTED_APIS};
pub use tls::{install_default_crypto, TlsClientConfig, TlsServerConfig};
