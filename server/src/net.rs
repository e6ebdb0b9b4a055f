//! TCP listener and connections: Fluss framing (through `riverlet::rpc::frame`), SASL/PLAIN
//! state per connection, requests served concurrently, responses written by one writer task.
//!
//! Writes (ProduceLog, PutKv) of one connection are applied one after the other, in the order
//! they arrived: an idempotent writer keeps several batches of a bucket in flight on one
//! connection and numbers them, and a server that applied batch n+1 before batch n would answer
//! OUT_OF_ORDER_SEQUENCE. Other requests (fetches, lookups, metadata) are served concurrently.
//!
//! The work one connection can queue is bounded: at most `max_in_flight_per_connection`
//! requests are served at once and the response queue holds no more than that; the reader
//! waits for a free slot before it reads the next frame, so a flooding client meets TCP
//! backpressure.
//!
//! Behaviour on bad input (never a panic):
//! - a frame whose length is negative or above `max_frame_size`, or a header that does not
//!   decode: a SERVER_FAILURE frame (CORRUPT_MESSAGE) is sent and the connection closed, as
//!   Fluss's `exceptionCaught` does;
//! - an unknown API key: the request is dropped with a warning and no response, as Fluss does;
//! - a known key whose body does not decode: an ERROR_RESPONSE with CORRUPT_MESSAGE (Fluss sends
//!   nothing at all in that case; answering lets the client fail fast instead of timing out).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use riverlet::error::codes as error_codes;
use riverlet::proto::{AuthenticateRequest, AuthenticateResponse};
use riverlet::rpc::frame;
use riverlet::rpc::ApiKey;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};

use crate::authz::Session;
use crate::response::{self, Encoded, FramePieces};
use crate::service::{code_of, Server};
use riverlet::acl::Principal;

/// Accepts connections until `shutdown` turns true.
pub async fn accept_loop(
    server: Arc<Server>,
    listener: TcpListener,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut conns = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            acc = listener.accept() => match acc {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let s = server.clone();
                    let sd = shutdown.clone();
                    conns.spawn(async move {
                        let _open = count_open_connection();
                        let host = peer.ip().to_string();
                        let served = match s.config.tls.clone() {
                            None => serve_connection(s, stream, sd, host).await,
                            Some(tls) => match tokio::time::timeout(
                                TLS_HANDSHAKE_TIMEOUT,
                                tls.accept(stream),
                            )
                            .await
                            {
                                Ok(Ok(stream)) => serve_connection(s, stream, sd, host).await,
                                Ok(Err(e)) => {
                                    tracing::debug!("TLS handshake with {peer} failed: {e}");
                                    return;
                                }
                                Err(_) => {
                                    tracing::debug!("TLS handshake with {peer} timed out");
                                    return;
                                }
                            },
                        };
                        if let Err(e) = served {
                            tracing::debug!("connection {peer}: {e}");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    conns.shutdown().await;
}

/// Counts a connection as open until the returned guard drops (however its task ends).
fn count_open_connection() -> impl Drop {
    struct Open(metrics::Gauge);
    impl Drop for Open {
        fn drop(&mut self) {
            self.0.decrement(1.0);
        }
    }
    let gauge = metrics::gauge!(riverlet::metrics::SERVER_CONNECTIONS);
    gauge.increment(1.0);
    Open(gauge)
}

/// A client that connects and never completes the TLS handshake is dropped after this.
const TLS_HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

async fn serve_connection<S>(
    server: Arc<Server>,
    stream: S,
    mut shutdown: watch::Receiver<bool>,
    host: String,
) -> riverlet::Result<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
{
    let (mut rd, mut wr) = tokio::io::split(stream);
    let in_flight = server.config.max_in_flight_per_connection.max(1);
    // One slot per in-flight request plus a few frames the reader answers itself.
    let (tx, mut rx) = mpsc::channel::<FramePieces>(in_flight + 4);
    let slots = Arc::new(Semaphore::new(in_flight));
    let writer = tokio::spawn(async move {
        let sent = metrics::counter!(riverlet::metrics::SERVER_BYTES_SENT);
        while let Some(mut frames) = rx.recv().await {
            // Frames already queued go out in the same vectored write (pipelined small answers:
            // one system call instead of one each).
            while frames.len() < response::MAX_SLICES_PER_WRITE {
                match rx.try_recv() {
                    Ok(more) => frames.extend(more),
                    Err(_) => break,
                }
            }
            sent.increment(frames.iter().map(|p| p.len() as u64).sum::<u64>());
            if response::write_pieces(&mut wr, frames).await.is_err() {
                break;
            }
        }
        let _ = wr.shutdown().await;
    });
    // The connection's writes, applied in arrival order by one task (see the module doc).
    // (Unbounded, but every queued write holds one of the connection's in-flight slots.)
    let (writes_tx, mut writes_rx) = mpsc::unbounded_channel::<(Job, OwnedSemaphorePermit)>();
    let writes = {
        let (s, tx) = (server.clone(), tx.clone());
        tokio::spawn(async move {
            while let Some((job, permit)) = writes_rx.recv().await {
                let out = job.serve(&s).await;
                let _ = tx.send(out).await;
                drop(permit);
            }
        })
    };
    let sasl = server.config.sasl_users.is_some();
    let authenticated = Arc::new(AtomicBool::new(!sasl));
    // The connection's principal: the SASL login's user, or ANONYMOUS without SASL (as
    // Fluss's PLAINTEXT authenticator); set once authenticated.
    let mut session = Session::new(Principal::anonymous(), host);
    let max = server.config.max_frame_size;
    let result = loop {
        let permit = tokio::select! {
            _ = shutdown.changed() => break Ok(()),
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break Ok(()),
            },
        };
        let frame = tokio::select! {
            _ = shutdown.changed() => break Ok(()),
            f = frame::read_frame(&mut rd, max) => f,
        };
        let received = std::time::Instant::now();
        let frame = match frame {
            Ok(Some(f)) => {
                metrics::counter!(riverlet::metrics::SERVER_BYTES_RECEIVED)
                    .increment(f.len() as u64);
                f
            }
            Ok(None) => break Ok(()),
            Err(e) => {
                if e.kind() == riverlet::ErrorKind::Corrupt {
                    let _ = tx
                        .send(one_piece(frame::encode_server_failure(
                            error_codes::CORRUPT_MESSAGE,
                            e.message(),
                        )))
                        .await;
                }
                break Err(e);
            }
        };
        let (header, body) = match frame::decode_request_header(&frame) {
            Ok((h, b)) => (h, frame.slice_ref(b)),
            Err(e) => {
                let _ = tx
                    .send(one_piece(frame::encode_server_failure(
                        error_codes::CORRUPT_MESSAGE,
                        e.message(),
                    )))
                    .await;
                break Err(e);
            }
        };
        let request_id = header.request_id;
        let Some(key) = ApiKey::from_i16(header.api_key) else {
            tracing::warn!("Received unknown API key {}.", header.api_key);
            continue;
        };
        if key == ApiKey::Authenticate {
            let resp = authenticate(&server, &body, &authenticated, &mut session);
            let out = match resp {
                Ok(b) => response::success_frame(request_id, Encoded::from(b)),
                Err((code, msg)) => one_piece(frame::encode_error_response(request_id, code, &msg)),
            };
            let _ = tx.send(out).await;
            continue;
        }
        if !authenticated.load(Ordering::Acquire) && key != ApiKey::ApiVersions {
            let out = one_piece(frame::encode_error_response(
                request_id,
                error_codes::AUTHENTICATE_EXCEPTION,
                "The connection has not completed authentication yet. This may be caused by a \
                 missing or incorrect configuration of 'client.security.protocol' on the client side.",
            ));
            let _ = tx.send(out).await;
            continue;
        }
        let job = Job {
            session: session.clone(),
            key,
            api_version: header.api_version,
            request_id,
            body,
            received,
        };
        if matches!(key, ApiKey::ProduceLog | ApiKey::PutKv) {
            if writes_tx.send((job, permit)).is_err() {
                break Ok(());
            }
            continue;
        }
        let s = server.clone();
        let tx2 = tx.clone();
        tokio::spawn(async move {
            let out = job.serve(&s).await;
            // The slot is freed once the response is queued (the queue is bounded too).
            let _ = tx2.send(out).await;
            drop(permit);
        });
    };
    drop(writes_tx);
    let _ = writes.await;
    drop(tx);
    let _ = writer.await;
    result
}

/// One decoded request, ready to be served.
struct Job {
    /// Who sent it.
    session: Session,
    key: ApiKey,
    api_version: i16,
    request_id: i32,
    body: Bytes,
    /// When its frame was read off the connection.
    received: std::time::Instant,
}

impl Job {
    /// Serves the request and returns the response frame.
    async fn serve(self, server: &Arc<Server>) -> FramePieces {
        use riverlet::metrics as m;
        let id = self.request_id;
        let api = self.key.name();
        let started = std::time::Instant::now();
        metrics::histogram!(m::SERVER_REQUEST_QUEUED_SECONDS, "api" => api)
            .record(started.duration_since(self.received).as_secs_f64());
        let out = match server
            .handle_as(&self.session, self.key, self.api_version, self.body)
            .await
        {
            Ok(b) => response::success_frame(id, b),
            Err(e) => {
                let code = code_of(&e);
                let name = riverlet::error::codes::name_of(code);
                metrics::counter!(m::SERVER_REQUEST_ERRORS, "api" => api, "code" => name)
                    .increment(1);
                one_piece(frame::encode_error_response(id, code, e.message()))
            }
        };
        metrics::counter!(m::SERVER_REQUESTS, "api" => api).increment(1);
        metrics::histogram!(m::SERVER_REQUEST_SECONDS, "api" => api)
            .record(started.elapsed().as_secs_f64());
        out
    }
}

fn authenticate(
    server: &Server,
    body: &Bytes,
    authenticated: &AtomicBool,
    session: &mut Session,
) -> Result<Vec<u8>, (i32, String)> {
    let req = AuthenticateRequest::decode(body.clone()).map_err(|e| {
        (
            error_codes::CORRUPT_MESSAGE,
            format!("malformed Authenticate request: {e}"),
        )
    })?;
    let auth_err = |m: String| (error_codes::AUTHENTICATE_EXCEPTION, m);
    let Some(users) = &server.config.sasl_users else {
        if !req.protocol.eq_ignore_ascii_case("PLAINTEXT") {
            return Err(auth_err(format!(
                "Authenticate protocol not match: protocol of server is 'PLAINTEXT' while protocol of client is '{}'",
                req.protocol
            )));
        }
        return Ok(AuthenticateResponse {
            challenge: Some(Vec::new()),
        }
        .encode_to_vec());
    };
    if !req
        .protocol
        .eq_ignore_ascii_case(riverlet::rpc::sasl::PLAIN_MECHANISM)
    {
        return Err(auth_err(format!(
            "SASL server enables [PLAIN] while protocol of client is '{}'",
            req.protocol
        )));
    }
    if authenticated.load(Ordering::Acquire) {
        return Ok(AuthenticateResponse { challenge: None }.encode_to_vec());
    }
    let creds = riverlet::rpc::sasl::parse_plain_token(&req.token)
        .map_err(|e| auth_err(e.message().to_string()))?;
    match users.get(&creds.username) {
        Some(p) if *p == creds.password => {
            session.principal = Principal::user(creds.username.clone());
            authenticated.store(true, Ordering::Release);
            Ok(AuthenticateResponse {
                challenge: Some(Vec::new()),
            }
            .encode_to_vec())
        }
        _ => Err(auth_err(
            "Authentication failed: Invalid username or password".to_string(),
        )),
    }
}

/// A frame built in one buffer (error frames, which are small), as frame pieces.
fn one_piece(frame: Vec<u8>) -> FramePieces {
    vec![Bytes::from(frame)]
}
