//! Every API key Fluss defines (`ApiKey::ALL`: Fluss 0.9.1's keys and the newer ones the
//! protocol file knows), on the wire against the embedded server: each is either served —
//! advertised by ApiVersions, and a minimal request (an empty message) gets an answer that is
//! not UNSUPPORTED_VERSION — or listed in `NOT_SERVED` with its reason, not advertised, and
//! answered UNSUPPORTED_VERSION naming the key and that reason. A key in neither table, or in
//! both, fails: no API answers UNSUPPORTED silently.

use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use riverlet::error::codes;
use riverlet::proto::{ApiVersionsResponse, ErrorResponse};
use riverlet::rpc::frame::{encode_request_frame, ResponseFrame};
use riverlet::rpc::ApiKey;
use riverlet_server::service::{NOT_SERVED, SERVED_APIS};
use riverlet_server::{LocalServer, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What the server answered one raw request (an empty message) of `key` on a new connection.
#[derive(Debug)]
enum Answer {
    Success(Bytes),
    Error(ErrorResponse),
    /// The connection was failed or closed without an answer to the request.
    Silent(String),
}

async fn call(addr: &str, key: ApiKey) -> Answer {
    let exchange = async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let frame = encode_request_frame(key.id(), 0, 7, &[]).unwrap();
        s.write_all(&frame).await.unwrap();
        let mut len = [0u8; 4];
        if let Err(e) = s.read_exact(&mut len).await {
            return Answer::Silent(format!("closed: {e}"));
        }
        let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
        if let Err(e) = s.read_exact(&mut body).await {
            return Answer::Silent(format!("closed mid-frame: {e}"));
        }
        match ResponseFrame::decode(Bytes::from(body)).unwrap() {
            ResponseFrame::Success { request_id, body } => {
                assert_eq!(request_id, 7, "{key}");
                Answer::Success(body)
            }
            ResponseFrame::Error { request_id, error } => {
                assert_eq!(request_id, 7, "{key}");
                Answer::Error(error)
            }
            ResponseFrame::ServerFailure { error } => {
                Answer::Silent(format!("server failure {error:?}"))
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .unwrap_or_else(|_| Answer::Silent("no answer within 30 s".into()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_key_is_served_or_listed_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let srv = LocalServer::start(ServerConfig::new(dir.path()).with_port(0)).unwrap();
    let addr = srv.bootstrap_servers();

    let advertised: Vec<(ApiKey, i32, i32)> = match call(&addr, ApiKey::ApiVersions).await {
        Answer::Success(body) => ApiVersionsResponse::decode(body)
            .unwrap()
            .api_versions
            .iter()
            .map(|v| {
                let k = ApiKey::from_i16(v.api_key as i16)
                    .unwrap_or_else(|| panic!("advertised unknown key {}", v.api_key));
                (k, v.min_version, v.max_version)
            })
            .collect(),
        other => panic!("ApiVersions: {other:?}"),
    };

    let mut problems = Vec::new();
    let (mut served, mut listed) = (0, 0);
    for &key in ApiKey::ALL {
        let serves = SERVED_APIS.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let reason = NOT_SERVED.iter().find(|(k, _)| *k == key).map(|(_, r)| *r);
        let ad = advertised.iter().find(|(k, _, _)| *k == key);
        match (serves, reason) {
            (Some(_), Some(why)) => problems.push(format!("{key}: served and listed ({why})")),
            (None, None) => problems.push(format!(
                "{key}: neither served nor in NOT_SERVED (add a row or a reason)"
            )),
            (Some(max), None) => {
                served += 1;
                if ad.map(|&(_, min, m)| (min, m)) != Some((0, max as i32)) {
                    problems.push(format!("{key}: served up to v{max}, advertised {ad:?}"));
                }
                match call(&addr, key).await {
                    Answer::Success(_) => {}
                    Answer::Error(e) if e.error_code == codes::UNSUPPORTED_VERSION => {
                        problems.push(format!("{key}: served but answered UNSUPPORTED: {e:?}"))
                    }
                    Answer::Error(_) => {} // a real answer to an empty request
                    Answer::Silent(why) if key == ApiKey::Authenticate => {
                        // Without SASL configured, the login itself is refused by the
                        // connection layer; it must still not be UNSUPPORTED.
                        let _ = why;
                    }
                    Answer::Silent(why) => problems.push(format!("{key}: {why}")),
                }
            }
            (None, Some(why)) => {
                listed += 1;
                assert!(!why.trim().is_empty(), "{key}: empty reason");
                if ad.is_some() {
                    problems.push(format!("{key}: not served but advertised {ad:?}"));
                }
                match call(&addr, key).await {
                    Answer::Error(e)
                        if e.error_code == codes::UNSUPPORTED_VERSION
                            && e.error_message
                                .as_deref()
                                .is_some_and(|m| m.contains(key.name()) && m.contains(why)) => {}
                    other => problems.push(format!(
                        "{key}: listed as not served, answered {other:?} (expected \
                         UNSUPPORTED_VERSION naming it and why)"
                    )),
                }
            }
        }
    }
    // Nothing else is advertised, and each table names each key once.
    for (k, _, _) in &advertised {
        if !SERVED_APIS.iter().any(|(s, _)| s == k) {
            problems.push(format!("{k}: advertised but not in SERVED_APIS"));
        }
    }
    for (i, (k, _)) in NOT_SERVED.iter().enumerate() {
        if NOT_SERVED[..i].iter().any(|(p, _)| p == k) {
            problems.push(format!("{k}: twice in NOT_SERVED"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(served + listed, ApiKey::ALL.len());
    srv.shutdown().unwrap();
}
