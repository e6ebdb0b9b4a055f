//! The client side of one connection to a Fluss server (coordinator or tablet server).
//!
//! A [`ServerConnection`] owns two tasks: a writer that drains a queue of encoded request frames
//! onto the socket, and a reader that matches response frames to waiting requests by request id,
//! so any number of requests can be in flight and answered in any order. Every request has a
//! deadline ([`ConnectionConfig::request_timeout`]). When the socket dies, every waiting request
//! fails at once with [`ErrorKind::Network`] (or with the server's code after a SERVER_FAILURE
//! frame, or [`ErrorKind::Corrupt`] after a frame that does not decode), and so does every later
//! request.
//!
//! Connecting does what Fluss's own client does: API_VERSIONS first (the version used per API is
//! then the highest both sides support), then, when SASL is configured, one AUTHENTICATE
//! round with a PLAIN token.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::frame::{self, ResponseFrame, MAX_WIRE_FRAME_SIZE, REQUEST_HEADER_LENGTH};
use super::{sasl, ApiKey, RpcRequest, VersionRange};
use crate::error::codes;
use crate::proto::{ApiVersionsRequest, ApiVersionsResponse, AuthenticateRequest, PbApiVersion};
use crate::{Error, ErrorKind, Result};

/// Credentials for SASL/PLAIN.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslConfig {
    /// User name.
    pub username: String,
    /// Password.
    pub password: String,
}

impl fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslConfig")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// Settings of one connection.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// Deadline for the TCP connect.
    pub connect_timeout: Duration,
    /// Deadline of every request, handshake requests included.
    pub request_timeout: Duration,
    /// Largest response frame accepted (length field value).
    pub max_frame_size: usize,
    /// SASL/PLAIN credentials; `None` for a plaintext connection.
    pub sasl: Option<SaslConfig>,
    /// TLS around the connection; `None` for plain TCP.
    pub tls: Option<super::TlsClientConfig>,
    /// `client_software_name` sent in API_VERSIONS.
    pub client_software_name: String,
    /// `client_software_version` sent in API_VERSIONS.
    pub client_software_version: String,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_frame_size: MAX_WIRE_FRAME_SIZE,
            sasl: None,
            tls: None,
            client_software_name: "riverlet".to_string(),
            client_software_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// The outcome of API version negotiation: per API, the version to use or why there is none.
#[derive(Debug, Clone, Default)]
pub struct NegotiatedVersions {
    versions: HashMap<ApiKey, std::result::Result<i16, String>>,
}

impl NegotiatedVersions {
    /// Negotiates against the versions a server listed, the way Fluss's client does: for every
    /// API both sides know, the version used is `min(client max, server max)` provided it is not
    /// below `max(client min, server min)`. API keys unknown to Riverlet are ignored.
    pub fn negotiate(server: &[PbApiVersion]) -> Self {
        let mut versions = HashMap::new();
        for entry in server {
            let Some(key) = i16::try_from(entry.api_key).ok().and_then(ApiKey::from_i16) else {
                continue;
            };
            let Some(ours) = key.supported_versions() else {
                continue;
            };
            let server_min = clamp_i16(entry.min_version);
            let server_max = clamp_i16(entry.max_version);
            let low = ours.min.max(server_min);
            let high = ours.max.min(server_max);
            let outcome = if low <= high {
                Ok(high)
            } else {
                Err(format!(
                    "the server does not support {} with a version in Riverlet's range {ours}; the server supports [{},{}]",
                    key.name(),
                    entry.min_version,
                    entry.max_version
                ))
            };
            versions.insert(key, outcome);
        }
        NegotiatedVersions { versions }
    }

    /// The version to use for `key`, or `None` if the server lacks it or there is no overlap.
    pub fn get(&self, key: ApiKey) -> Option<i16> {
        self.versions
            .get(&key)
            .and_then(|v| v.as_ref().ok().copied())
    }

    /// The version to use for `key`, or an [`ErrorKind::Unsupported`] error saying why not.
    pub fn version(&self, key: ApiKey) -> Result<i16> {
        match self.versions.get(&key) {
            Some(Ok(v)) => Ok(*v),
            Some(Err(why)) => Err(Error::unsupported(why.clone())),
            None => Err(Error::unsupported(format!(
                "the server does not support {} (it is not in its API_VERSIONS answer)",
                key.name()
            ))),
        }
    }

    /// The versions Riverlet offers as a server: every implemented API with its range.
    pub fn riverlet_api_versions() -> Vec<PbApiVersion> {
        ApiKey::ALL
            .iter()
            .filter_map(|key| {
                key.supported_versions()
                    .map(|VersionRange { min, max }| PbApiVersion {
                        api_key: i32::from(key.id()),
                        min_version: i32::from(min),
                        max_version: i32::from(max),
                    })
            })
            .collect()
    }
}

fn clamp_i16(v: i32) -> i16 {
    v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

type Reply = oneshot::Sender<Result<Bytes>>;

struct State {
    pending: HashMap<i32, Reply>,
    /// Set once: why the connection ended.
    closed: Option<Error>,
}

/// What the connection's tasks and its handle share.
struct Shared {
    peer: String,
    state: Mutex<State>,
    shutdown: watch::Sender<bool>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked while holding it; the map itself
        // is still consistent (every operation on it is a single insert/remove).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn register(&self, request_id: i32, reply: Reply) -> Result<()> {
        let mut state = self.lock();
        if let Some(cause) = &state.closed {
            return Err(cause.clone());
        }
        if state.pending.contains_key(&request_id) {
            return Err(Error::internal(format!(
                "request id {request_id} is already in flight"
            )));
        }
        state.pending.insert(request_id, reply);
        Ok(())
    }

    fn forget(&self, request_id: i32) {
        self.lock().pending.remove(&request_id);
    }

    fn is_in_flight(&self, request_id: i32) -> bool {
        self.lock().pending.contains_key(&request_id)
    }

    fn closed_error(&self) -> Error {
        self.lock()
            .closed
            .clone()
            .unwrap_or_else(|| Error::network(format!("connection to {} is closed", self.peer)))
    }

    /// Ends the connection: records `cause` (the first cause wins), fails every waiting
    /// request with it, and tells the writer to stop.
    fn fail_all(&self, cause: Error) {
        let drained: Vec<Reply> = {
            let mut state = self.lock();
            if state.closed.is_none() {
                state.closed = Some(cause);
            }
            state.pending.drain().map(|(_, reply)| reply).collect()
        };
        let cause = self.closed_error();
        for reply in drained {
            let _ = reply.send(Err(cause.clone()));
        }
        let _ = self.shutdown.send(true);
    }

    fn deliver(&self, request_id: i32, result: Result<Bytes>) {
        let reply = self.lock().pending.remove(&request_id);
        match reply {
            Some(reply) => {
                let _ = reply.send(result);
            }
            None => tracing::debug!(
                peer = %self.peer,
                request_id,
                "dropping response for a request that is no longer waiting (timed out or cancelled)"
            ),
        }
    }
}

/// Removes a request from the in-flight map when its caller stops waiting (timeout, drop).
struct PendingGuard<'a> {
    shared: &'a Shared,
    request_id: i32,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.shared.forget(self.request_id);
    }
}

/// Bounded queue between callers and the writer task, so a stalled socket slows callers down.
const WRITE_QUEUE_DEPTH: usize = 256;

/// One multiplexed client connection to a Fluss server; see the module docs.
pub struct ServerConnection {
    shared: Arc<Shared>,
    write_tx: mpsc::Sender<Vec<u8>>,
    next_request_id: AtomicI32,
    request_timeout: Duration,
    versions: OnceLock<NegotiatedVersions>,
    server_type: OnceLock<Option<i32>>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl fmt::Debug for ServerConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConnection")
            .field("peer", &self.shared.peer)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl ServerConnection {
    /// Opens a TCP connection to `addr` (`host:port`), negotiates API versions and, when
    /// configured, authenticates. Must be called inside a tokio runtime.
    pub async fn connect(addr: &str, config: &ConnectionConfig) -> Result<Arc<ServerConnection>> {
        let stream =
            match tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr)).await {
                Err(_) => {
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "connecting to {addr} timed out after {:?}",
                            config.connect_timeout
                        ),
                    ))
                }
                Ok(Err(e)) => return Err(Error::network(format!("cannot connect to {addr}: {e}"))),
                Ok(Ok(stream)) => stream,
            };
        // Fluss's Netty client disables Nagle too; requests are small and latency matters.
        let _ = stream.set_nodelay(true);
        match &config.tls {
            None => Self::connect_with_stream(stream, addr, config).await,
            Some(tls) => {
                let handshake = tls.connect(addr, stream);
                let stream = match tokio::time::timeout(config.connect_timeout, handshake).await {
                    Ok(stream) => stream?,
                    Err(_) => {
                        return Err(Error::new(
                            ErrorKind::Timeout,
                            format!(
                                "the TLS handshake with {addr} timed out after {:?}",
                                config.connect_timeout
                            ),
                        ))
                    }
                };
                Self::connect_with_stream(stream, addr, config).await
            }
        }
    }

    /// Like [`ServerConnection::connect`] over an already-open byte stream (`peer` is only used
    /// in messages). Must be called inside a tokio runtime.
    pub async fn connect_with_stream<S>(
        stream: S,
        peer: &str,
        config: &ConnectionConfig,
    ) -> Result<Arc<ServerConnection>>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let conn = Arc::new(Self::start(stream, peer, config));
        if let Err(e) = conn.handshake(config).await {
            conn.close();
            return Err(e.context(format!("handshake with {peer}")));
        }
        Ok(conn)
    }

    fn start<S>(stream: S, peer: &str, config: &ConnectionConfig) -> ServerConnection
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (read_half, write_half) = tokio::io::split(stream);
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            peer: peer.to_string(),
            state: Mutex::new(State {
                pending: HashMap::new(),
                closed: None,
            }),
            shutdown: shutdown_tx,
        });
        let (write_tx, write_rx) = mpsc::channel(WRITE_QUEUE_DEPTH);
        let reader = tokio::spawn(reader_loop(
            shared.clone(),
            read_half,
            config.max_frame_size,
        ));
        let writer = tokio::spawn(writer_loop(
            shared.clone(),
            write_half,
            write_rx,
            shutdown_rx,
        ));
        ServerConnection {
            shared,
            write_tx,
            next_request_id: AtomicI32::new(0),
            request_timeout: config.request_timeout,
            versions: OnceLock::new(),
            server_type: OnceLock::new(),
            reader,
            writer,
        }
    }

    async fn handshake(&self, config: &ConnectionConfig) -> Result<()> {
        let api_versions_version = ApiKey::ApiVersions
            .supported_versions()
            .map_or(0, |r| r.max);
        let request = ApiVersionsRequest {
            client_software_name: config.client_software_name.clone(),
            client_software_version: config.client_software_version.clone(),
        };
        let body = self
            .call(ApiKey::ApiVersions, api_versions_version, &request)
            .await?;
        let response = ApiVersionsResponse::decode(body)
            .map_err(|e| Error::corrupt(format!("bad ApiVersionsResponse: {e}")))?;
        let negotiated = NegotiatedVersions::negotiate(&response.api_versions);
        let _ = self.server_type.set(response.server_type);
        let _ = self.versions.set(negotiated);

        if let Some(sasl_config) = &config.sasl {
            self.authenticate_plain(sasl_config).await?;
        }
        Ok(())
    }

    async fn authenticate_plain(&self, sasl_config: &SaslConfig) -> Result<()> {
        let version = self.negotiated()?.version(ApiKey::Authenticate)?;
        let request = AuthenticateRequest {
            protocol: sasl::PLAIN_MECHANISM.to_string(),
            token: sasl::encode_plain_token(&sasl_config.username, &sasl_config.password)?,
        };
        let mut backoff = Duration::from_millis(100);
        let mut attempt = 1;
        loop {
            match self.call(ApiKey::Authenticate, version, &request).await {
                // PLAIN is complete once the server accepted the initial response; like Fluss's
                // client, whatever challenge comes back (normally an empty one) is not evaluated.
                Ok(_) => return Ok(()),
                Err(e)
                    if e.fluss_code() == Some(codes::RETRIABLE_AUTHENTICATE_EXCEPTION)
                        && attempt < 3 =>
                {
                    tracing::warn!(peer = %self.shared.peer, attempt, "retriable authentication failure: {e}");
                    tokio::time::sleep(backoff).await;
                    backoff *= 2;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn negotiated(&self) -> Result<&NegotiatedVersions> {
        self.versions
            .get()
            .ok_or_else(|| Error::internal("API versions have not been negotiated yet"))
    }

    /// Sends `request` with the negotiated version of its API and waits for the response.
    ///
    /// Errors: [`ErrorKind::Unsupported`] when the server has no common version for the API;
    /// [`Error::from_fluss`] for an ERROR response; [`ErrorKind::Timeout`] past the deadline;
    /// [`ErrorKind::Network`] when the connection dies; [`ErrorKind::Corrupt`] for a response
    /// that does not decode.
    pub async fn request<R: RpcRequest>(&self, request: &R) -> Result<R::Response> {
        let version = self
            .negotiated()?
            .version(R::API_KEY)
            .map_err(|e| e.context(format!("server {}", self.shared.peer)))?;
        let body = self.call(R::API_KEY, version, request).await?;
        R::Response::decode(body).map_err(|e| {
            Error::corrupt(format!(
                "bad {} response from {}: {e}",
                R::API_KEY.name(),
                self.shared.peer
            ))
        })
    }

    /// Sends one request of `api_key` at `api_version` and returns the raw SUCCESS body.
    async fn call<M: Message>(
        &self,
        api_key: ApiKey,
        api_version: i16,
        message: &M,
    ) -> Result<Bytes> {
        let encoded_len = message.encoded_len();
        if encoded_len > MAX_WIRE_FRAME_SIZE - REQUEST_HEADER_LENGTH {
            return Err(Error::invalid(format!(
                "{} request of {encoded_len} bytes is too large for one frame",
                api_key.name()
            )));
        }
        let request_id = self.allocate_request_id();
        let frame = frame::encode_request(api_key.id(), api_version, request_id, message)?;
        let sent = frame.len();
        let started = std::time::Instant::now();
        let (reply_tx, reply_rx) = oneshot::channel();
        self.shared.register(request_id, reply_tx)?;
        let _guard = PendingGuard {
            shared: &self.shared,
            request_id,
        };

        let exchange = async {
            if self.write_tx.send(frame).await.is_err() {
                return Err(self.shared.closed_error());
            }
            match reply_rx.await {
                Ok(result) => result,
                Err(_) => Err(self.shared.closed_error()),
            }
        };
        let result = match tokio::time::timeout(self.request_timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "{} request {request_id} to {} timed out after {:?}",
                    api_key.name(),
                    self.shared.peer,
                    self.request_timeout
                ),
            )),
        };
        crate::metrics::client_request(
            api_key.name(),
            sent,
            result.as_ref().map_or(0, |body| body.len()),
            started.elapsed().as_secs_f64(),
            result.as_ref().err(),
        );
        result
    }

    fn allocate_request_id(&self) -> i32 {
        loop {
            // Wraps at i32::MAX; skip an id that is somehow still waiting from a lap earlier.
            let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
            if !self.shared.is_in_flight(id) {
                return id;
            }
        }
    }

    /// The version negotiated for `api_key`, or `None` when there is no common version.
    pub fn api_version(&self, api_key: ApiKey) -> Option<i16> {
        self.versions.get().and_then(|v| v.get(api_key))
    }

    /// The full negotiation outcome (set once the handshake has run).
    pub fn negotiated_versions(&self) -> Option<&NegotiatedVersions> {
        self.versions.get()
    }

    /// The `server_type` the server reported (1 coordinator, 2 tablet server), if any.
    pub fn server_type(&self) -> Option<i32> {
        self.server_type.get().copied().flatten()
    }

    /// The address this connection was opened to.
    pub fn peer(&self) -> &str {
        &self.shared.peer
    }

    /// Closes the connection: waiting requests fail with [`ErrorKind::Closed`], the socket is
    /// shut down, and later requests fail at once. Idempotent.
    pub fn close(&self) {
        self.shared.fail_all(Error::new(
            ErrorKind::Closed,
            format!("connection to {} was closed", self.shared.peer),
        ));
        // The writer sees the shutdown signal and closes the write side; the reader is stopped.
        self.reader.abort();
    }

    /// Whether the connection has ended (closed, or the socket died).
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed.is_some()
    }

    /// Why the connection ended, if it has.
    pub fn close_cause(&self) -> Option<Error> {
        self.shared.lock().closed.clone()
    }
}

impl Drop for ServerConnection {
    fn drop(&mut self) {
        self.close();
        self.writer.abort();
    }
}

async fn reader_loop<S: AsyncRead>(
    shared: Arc<Shared>,
    mut read_half: ReadHalf<S>,
    max_frame_size: usize,
) {
    let cause = loop {
        match frame::read_frame(&mut read_half, max_frame_size).await {
            Ok(Some(bytes)) => match ResponseFrame::decode(bytes) {
                Ok(ResponseFrame::Success { request_id, body }) => {
                    shared.deliver(request_id, Ok(body))
                }
                Ok(ResponseFrame::Error { request_id, error }) => {
                    shared.deliver(request_id, Err(frame::error_from_response(&error)))
                }
                Ok(ResponseFrame::ServerFailure { error }) => {
                    break frame::error_from_response(&error)
                        .context(format!("server {} failed the connection", shared.peer));
                }
                Err(e) => break e.context(format!("response from {}", shared.peer)),
            },
            Ok(None) => {
                break Error::network(format!(
                    "connection to {} was closed by the server",
                    shared.peer
                ))
            }
            Err(e) if e.kind() == ErrorKind::Corrupt => {
                break e.context(format!("response from {}", shared.peer))
            }
            Err(e) => {
                break Error::network(format!(
                    "connection to {} lost: {}",
                    shared.peer,
                    e.message()
                ))
            }
        }
    };
    tracing::debug!(peer = %shared.peer, "connection reader stopped: {cause}");
    shared.fail_all(cause);
}

async fn writer_loop<S: AsyncWrite>(
    shared: Arc<Shared>,
    mut write_half: WriteHalf<S>,
    mut queue: mpsc::Receiver<Vec<u8>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let frame = tokio::select! {
            biased;
            _ = shutdown.wait_for(|stop| *stop) => break,
            frame = queue.recv() => match frame {
                Some(frame) => frame,
                None => break,
            },
        };
        let mut result = write_half.write_all(&frame).await;
        // Write whatever else is already queued before flushing once.
        while result.is_ok() {
            match queue.try_recv() {
                Ok(more) => result = write_half.write_all(&more).await,
                Err(_) => break,
            }
        }
        if result.is_ok() {
            result = write_half.flush().await;
        }
        if let Err(e) = result {
            shared.fail_all(Error::network(format!(
                "connection to {} lost while writing: {e}",
                shared.peer
            )));
            return;
        }
    }
    let _ = write_half.shutdown().await;
}

#[cfg(test)]
mod tests;
