//! A fault-injecting TCP proxy between the client and real servers (the embedded server or a
//! real Fluss cluster): real frames from real servers go through it, and a [`Faults`] hook may
//! hold a frame back (and let it through later, out of order) or see what it carries. Nothing
//! is made up: every answer the client gets was written by the server, only its timing and
//! order change (and, with `rewrite_metadata`, the server addresses in metadata answers, so the
//! client keeps talking through the proxy; optionally minus some bucket leaders).
//!
//! Use it from a test file with `#[path = "common/proxy.rs"] mod proxy;`.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use prost::Message;
use riverlet::proto::MetadataResponse;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};

/// GET_METADATA.
pub const API_METADATA: i16 = 1012;
/// PRODUCE_LOG.
pub const API_PRODUCE_LOG: i16 = 1014;

/// Which way a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// A request, client to server.
    ToServer,
    /// An answer, server to client.
    ToClient,
}

/// What to do with one frame.
pub enum Action {
    /// Pass it on now.
    Forward,
    /// Pass it on once the future completes (later frames of the connection go on meanwhile).
    Hold(Pin<Box<dyn Future<Output = ()> + Send>>),
}

/// The hook the proxy asks about every frame. `frame` is the frame without its length prefix
/// (request: api key, version, request id, protobuf; answer: type, request id, protobuf);
/// `api_key` of an answer is its request's.
pub trait Faults: Send + Sync + 'static {
    fn on_frame(&self, dir: Dir, api_key: i16, request_id: i32, frame: &[u8]) -> Action;
}

/// Forwards everything unchanged.
pub struct NoFaults;

impl Faults for NoFaults {
    fn on_frame(&self, _: Dir, _: i16, _: i32, _: &[u8]) -> Action {
        Action::Forward
    }
}

/// The protobuf body of a request frame.
pub fn request_body(frame: &[u8]) -> &[u8] {
    &frame[8.min(frame.len())..]
}

/// The protobuf body of a SUCCESS answer frame (None for an error frame).
pub fn response_body(frame: &[u8]) -> Option<&[u8]> {
    (frame.first() == Some(&0) && frame.len() >= 5).then(|| &frame[5..])
}

struct Inner {
    faults: Arc<dyn Faults>,
    rewrite_metadata: bool,
    /// upstream address -> the local address that forwards to it
    routes: Mutex<HashMap<String, String>>,
    /// local address -> upstream it forwards to (changeable: [`Proxy::retarget`])
    upstreams: Mutex<HashMap<String, String>>,
    /// (table id, bucket) whose leader is taken out of metadata answers
    hidden_leaders: Mutex<HashSet<(i64, i32)>>,
}

/// The proxy: one local listener per upstream server.
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
    first: String,
}

impl Proxy {
    /// A proxy in front of `upstream` (`host:port`). With `rewrite_metadata`, every server a
    /// metadata answer names gets a listener of its own and the answer names that instead.
    pub fn start(upstream: &str, faults: Arc<dyn Faults>, rewrite_metadata: bool) -> Proxy {
        let inner = Arc::new(Inner {
            faults,
            rewrite_metadata,
            routes: Mutex::new(HashMap::new()),
            upstreams: Mutex::new(HashMap::new()),
            hidden_leaders: Mutex::new(HashSet::new()),
        });
        let first = route(&inner, upstream);
        Proxy { inner, first }
    }

    /// The address clients bootstrap from.
    pub fn bootstrap(&self) -> String {
        self.first.clone()
    }

    /// Makes the first listener forward new connections to `upstream` from now on, and closes
    /// nothing (connections already made go on to where they went).
    pub fn retarget(&self, upstream: &str) {
        self.inner
            .upstreams
            .lock()
            .unwrap()
            .insert(self.first.clone(), upstream.to_string());
    }

    /// Takes the leader of `bucket` of table `table_id` out of every later metadata answer
    /// (needs `rewrite_metadata`).
    pub fn hide_leader(&self, table_id: i64, bucket: i32) {
        self.inner
            .hidden_leaders
            .lock()
            .unwrap()
            .insert((table_id, bucket));
    }
}

/// The local address forwarding to `upstream`, listening on first use.
fn route(inner: &Arc<Inner>, upstream: &str) -> String {
    if let Some(local) = inner.routes.lock().unwrap().get(upstream) {
        return local.clone();
    }
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("proxy bind");
    std_listener.set_nonblocking(true).unwrap();
    let local = std_listener.local_addr().unwrap().to_string();
    let listener = TcpListener::from_std(std_listener).expect("proxy listener");
    inner
        .routes
        .lock()
        .unwrap()
        .insert(upstream.to_string(), local.clone());
    inner
        .upstreams
        .lock()
        .unwrap()
        .insert(local.clone(), upstream.to_string());
    let inner2 = inner.clone();
    let local2 = local.clone();
    tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                return;
            };
            let upstream = inner2.upstreams.lock().unwrap().get(&local2).cloned();
            let Some(upstream) = upstream else {
                continue;
            };
            tokio::spawn(serve(inner2.clone(), client, upstream));
        }
    });
    local
}

async fn read_frame(s: &mut tokio::net::tcp::OwnedReadHalf) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await.ok()?;
    let n = i32::from_be_bytes(len);
    if n < 0 {
        return None;
    }
    let mut buf = vec![0u8; n as usize];
    s.read_exact(&mut buf).await.ok()?;
    Some(buf)
}

async fn write_frame(w: &tokio::sync::Mutex<OwnedWriteHalf>, frame: &[u8]) -> bool {
    let mut out = Vec::with_capacity(frame.len() + 4);
    out.extend_from_slice(&(frame.len() as i32).to_be_bytes());
    out.extend_from_slice(frame);
    w.lock().await.write_all(&out).await.is_ok()
}

/// Writes `frame` to `w` once `until` completes, in a task of its own.
fn hold(
    w: Arc<tokio::sync::Mutex<OwnedWriteHalf>>,
    frame: Vec<u8>,
    until: Pin<Box<dyn Future<Output = ()> + Send>>,
) {
    tokio::spawn(async move {
        until.await;
        write_frame(&w, &frame).await;
    });
}

async fn serve(inner: Arc<Inner>, client: TcpStream, upstream: String) {
    let Ok(server) = TcpStream::connect(&upstream).await else {
        return; // the client sees the connection close
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut c_read, c_write) = client.into_split();
    let (mut s_read, s_write) = server.into_split();
    let c_write = Arc::new(tokio::sync::Mutex::new(c_write));
    let s_write = Arc::new(tokio::sync::Mutex::new(s_write));
    let api_of: Arc<Mutex<HashMap<i32, i16>>> = Arc::new(Mutex::new(HashMap::new()));

    let requests = {
        let inner = inner.clone();
        let api_of = api_of.clone();
        let s_write = s_write.clone();
        async move {
            while let Some(frame) = read_frame(&mut c_read).await {
                if frame.len() < 8 {
                    break;
                }
                let api = i16::from_be_bytes([frame[0], frame[1]]);
                let id = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
                api_of.lock().unwrap().insert(id, api);
                match inner.faults.on_frame(Dir::ToServer, api, id, &frame) {
                    Action::Forward => {
                        if !write_frame(&s_write, &frame).await {
                            break;
                        }
                    }
                    Action::Hold(until) => hold(s_write.clone(), frame, until),
                }
            }
            let _ = s_write.lock().await.shutdown().await;
        }
    };
    let answers = {
        let inner = inner.clone();
        let c_write = c_write.clone();
        async move {
            while let Some(mut frame) = read_frame(&mut s_read).await {
                if frame.len() < 5 {
                    break;
                }
                let id = i32::from_be_bytes([frame[1], frame[2], frame[3], frame[4]]);
                let api = api_of.lock().unwrap().remove(&id).unwrap_or(-1);
                if api == API_METADATA && inner.rewrite_metadata {
                    if let Some(body) = response_body(&frame) {
                        if let Ok(mut m) = MetadataResponse::decode(body) {
                            rewrite(&inner, &mut m);
                            let mut out = frame[..5].to_vec();
                            m.encode(&mut out).unwrap();
                            frame = out;
                        }
                    }
                }
                match inner.faults.on_frame(Dir::ToClient, api, id, &frame) {
                    Action::Forward => {
                        if !write_frame(&c_write, &frame).await {
                            break;
                        }
                    }
                    Action::Hold(until) => hold(c_write.clone(), frame, until),
                }
            }
            let _ = c_write.lock().await.shutdown().await;
        }
    };
    tokio::join!(requests, answers);
}

fn rewrite(inner: &Arc<Inner>, m: &mut MetadataResponse) {
    let node = |host: &mut String, port: &mut i32, listeners: &mut Option<String>| {
        let upstream = format!("{host}:{port}");
        let local = route(inner, &upstream);
        let addr: SocketAddr = local.parse().unwrap();
        *host = addr.ip().to_string();
        *port = addr.port() as i32;
        *listeners = None;
    };
    if let Some(c) = &mut m.coordinator_server {
        node(&mut c.host, &mut c.port, &mut c.listeners);
    }
    for t in &mut m.tablet_servers {
        node(&mut t.host, &mut t.port, &mut t.listeners);
    }
    let hidden = inner.hidden_leaders.lock().unwrap().clone();
    for t in &mut m.table_metadata {
        for b in &mut t.bucket_metadata {
            if hidden.contains(&(t.table_id, b.bucket_id)) {
                b.leader_id = None;
            }
        }
    }
}
