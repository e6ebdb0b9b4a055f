//! Connection tests against tiny scripted servers on 127.0.0.1.

use super::*;
use crate::proto::{
    AuthenticateResponse, ListDatabasesRequest, ListDatabasesResponse, ListTablesRequest,
    ListTablesResponse, PutKvRequest, PutKvResponse,
};
use crate::rpc::frame::{
    decode_request_header, encode_error_response, encode_server_failure,
    encode_success_response_message, read_frame, write_frame, RequestHeader,
};
use tokio::net::TcpListener;

const WAIT: Duration = Duration::from_secs(10);

async fn listen() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

async fn read_request(sock: &mut TcpStream) -> (RequestHeader, Bytes) {
    let frame = read_frame(sock, 1 << 20)
        .await
        .unwrap()
        .expect("client closed early");
    let (header, _) = decode_request_header(&frame).unwrap();
    (header, frame.slice(8..))
}

async fn reply<M: Message>(sock: &mut TcpStream, request_id: i32, message: &M) {
    write_frame(
        sock,
        &encode_success_response_message(request_id, message).unwrap(),
    )
    .await
    .unwrap();
}

/// Reads the ApiVersions request, checks it, and answers with `versions`.
async fn answer_api_versions(sock: &mut TcpStream, versions: Vec<PbApiVersion>) {
    let (header, body) = read_request(sock).await;
    assert_eq!(header.api_key, 1000);
    assert_eq!(header.api_version, 0);
    let req = ApiVersionsRequest::decode(body).unwrap();
    assert_eq!(req.client_software_name, "riverlet");
    reply(
        sock,
        header.request_id,
        &ApiVersionsResponse {
            api_versions: versions,
            server_type: Some(2),
        },
    )
    .await;
}

fn config() -> ConnectionConfig {
    ConnectionConfig {
        request_timeout: Duration::from_secs(30),
        ..Default::default()
    }
}

fn list_tables(db: &str) -> ListTablesRequest {
    ListTablesRequest {
        database_name: db.to_string(),
    }
}

fn version(key: ApiKey, min: i32, max: i32) -> PbApiVersion {
    PbApiVersion {
        api_key: i32::from(key.id()),
        min_version: min,
        max_version: max,
    }
}

#[test]
fn negotiation_picks_min_of_maxima_and_reports_no_overlap() {
    let server = vec![
        version(ApiKey::PutKv, 0, 1),
        version(ApiKey::Lookup, 0, 5),
        version(ApiKey::PrefixLookup, 1, 1),
        version(ApiKey::FetchLog, 1, 3),
        PbApiVersion {
            api_key: 5000,
            min_version: 0,
            max_version: 9,
        },
        version(ApiKey::UpdateMetadata, 0, 0),
    ];
    let n = NegotiatedVersions::negotiate(&server);
    assert_eq!(n.get(ApiKey::PutKv), Some(1));
    assert_eq!(n.get(ApiKey::Lookup), Some(1));
    assert_eq!(n.get(ApiKey::PrefixLookup), Some(1));
    assert_eq!(n.get(ApiKey::FetchLog), None);
    let err = n.version(ApiKey::FetchLog).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert!(
        err.message().contains("FETCH_LOG")
            && err.message().contains("[0,0]")
            && err.message().contains("[1,3]"),
        "{err}"
    );
    let err = n.version(ApiKey::ListTables).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert!(err.message().contains("LIST_TABLES"), "{err}");
    assert_eq!(n.get(ApiKey::UpdateMetadata), None);

    // Against a server offering exactly Riverlet's ranges, every API gets its own max.
    let n = NegotiatedVersions::negotiate(&NegotiatedVersions::riverlet_api_versions());
    assert_eq!(n.get(ApiKey::PutKv), Some(2));
    assert_eq!(n.get(ApiKey::ScanKv), Some(0));
}

#[tokio::test]
async fn multiplexed_requests_answered_out_of_order() {
    let (listener, addr) = listen().await;
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
        let (h1, b1) = read_request(&mut sock).await;
        let (h2, b2) = read_request(&mut sock).await;
        assert_eq!((h1.api_key, h2.api_key), (1008, 1008));
        assert_ne!(h1.request_id, h2.request_id);
        // Answer the second first; each answer echoes the database it was asked about.
        for (h, b) in [(h2, b2), (h1, b1)] {
            let db = ListTablesRequest::decode(b).unwrap().database_name;
            reply(
                &mut sock,
                h.request_id,
                &ListTablesResponse {
                    table_name: vec![db],
                },
            )
            .await;
        }
        // PUT_KV must arrive at the negotiated version 2.
        let (h, _) = read_request(&mut sock).await;
        assert_eq!((h.api_key, h.api_version), (1016, 2));
        reply(&mut sock, h.request_id, &PutKvResponse::default()).await;
        // An error response.
        let (h, _) = read_request(&mut sock).await;
        write_frame(
            &mut sock,
            &encode_error_response(h.request_id, 7, "Table 'a.x' does not exist."),
        )
        .await
        .unwrap();
        // Clean close from the client: EOF.
        assert!(read_frame(&mut sock, 1 << 20).await.unwrap().is_none());
    });

    let conn = ServerConnection::connect(&addr, &config()).await.unwrap();
    assert_eq!(conn.api_version(ApiKey::PutKv), Some(2));
    assert_eq!(conn.server_type(), Some(2));
    let (first, second) = (list_tables("first"), list_tables("second"));
    let (a, b) = tokio::time::timeout(WAIT, async {
        tokio::join!(conn.request(&first), conn.request(&second))
    })
    .await
    .unwrap();
    assert_eq!(a.unwrap().table_name, vec!["first"]);
    assert_eq!(b.unwrap().table_name, vec!["second"]);
    conn.request(&PutKvRequest::default()).await.unwrap();
    let err = conn.request(&list_tables("a")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(err.fluss_code(), Some(7));
    assert_eq!(err.message(), "Table 'a.x' does not exist.");
    assert!(!conn.is_closed());
    conn.close();
    assert!(conn.is_closed());
    assert_eq!(
        conn.request(&list_tables("a")).await.unwrap_err().kind(),
        ErrorKind::Closed
    );
    tokio::time::timeout(WAIT, server).await.unwrap().unwrap();
}

#[tokio::test]
async fn socket_dropped_mid_flight_fails_every_pending_request() {
    let (listener, addr) = listen().await;
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
        for _ in 0..3 {
            read_request(&mut sock).await;
        }
        drop(sock);
    });
    let conn = ServerConnection::connect(&addr, &config()).await.unwrap();
    let (ra, rb, rc) = (
        list_tables("a"),
        ListDatabasesRequest::default(),
        list_tables("c"),
    );
    let (a, b, c) = tokio::time::timeout(WAIT, async {
        tokio::join!(conn.request(&ra), conn.request(&rb), conn.request(&rc))
    })
    .await
    .expect("pending requests must fail, not hang");
    for err in [a.unwrap_err(), b.map(|_| ()).unwrap_err(), c.unwrap_err()] {
        assert_eq!(err.kind(), ErrorKind::Network, "{err}");
    }
    assert!(conn.is_closed());
    let err = conn.request(&list_tables("later")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Network);
    server.await.unwrap();
}

#[tokio::test]
async fn request_deadline_and_late_response_is_ignored() {
    let (listener, addr) = listen().await;
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
        let (late, _) = read_request(&mut sock).await;
        let (next, _) = read_request(&mut sock).await;
        // Too late for the first request; the second is answered normally.
        reply(
            &mut sock,
            late.request_id,
            &ListTablesResponse {
                table_name: vec!["late".into()],
            },
        )
        .await;
        reply(
            &mut sock,
            next.request_id,
            &ListTablesResponse {
                table_name: vec!["next".into()],
            },
        )
        .await;
        assert!(read_frame(&mut sock, 1 << 20).await.unwrap().is_none());
    });
    let cfg = ConnectionConfig {
        request_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let conn = ServerConnection::connect(&addr, &cfg).await.unwrap();
    let err = conn.request(&list_tables("slow")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(
        err.message().contains("LIST_TABLES") && err.message().contains("timed out"),
        "{err}"
    );
    let ok = conn.request(&list_tables("next")).await.unwrap();
    assert_eq!(ok.table_name, vec!["next"]);
    drop(conn);
    tokio::time::timeout(WAIT, server).await.unwrap().unwrap();
}

#[tokio::test]
async fn no_common_version_is_a_clear_error() {
    let (listener, addr) = listen().await;
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut versions = NegotiatedVersions::riverlet_api_versions();
        versions.retain(|v| v.api_key != i32::from(ApiKey::PutKv.id()));
        versions.push(version(ApiKey::PutKv, 3, 5));
        answer_api_versions(&mut sock, versions).await;
        // The unsupported request is never sent: the next frame is the ListTables one.
        let (h, _) = read_request(&mut sock).await;
        assert_eq!(h.api_key, ApiKey::ListTables.id());
        reply(&mut sock, h.request_id, &ListTablesResponse::default()).await;
    });
    let conn = ServerConnection::connect(&addr, &config()).await.unwrap();
    assert_eq!(conn.api_version(ApiKey::PutKv), None);
    let err = conn.request(&PutKvRequest::default()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert!(
        err.message().contains("PUT_KV") && err.message().contains(&addr),
        "{err}"
    );
    conn.request(&list_tables("x")).await.unwrap();
    tokio::time::timeout(WAIT, server).await.unwrap().unwrap();
}

#[tokio::test]
async fn api_versions_rejected_with_unsupported_version() {
    let (listener, addr) = listen().await;
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let (h, _) = read_request(&mut sock).await;
        let frame = encode_error_response(h.request_id, 2, "The version of API is not supported.");
        write_frame(&mut sock, &frame).await.unwrap();
    });
    let err = ServerConnection::connect(&addr, &config())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert_eq!(err.fluss_code(), Some(2));
    assert!(err.message().contains("handshake with"), "{err}");
}

async fn sasl_server(listener: TcpListener, then_serve: bool) {
    let (mut sock, _) = listener.accept().await.unwrap();
    answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
    let (h, body) = read_request(&mut sock).await;
    assert_eq!(h.api_key, ApiKey::Authenticate.id());
    let req = AuthenticateRequest::decode(body).unwrap();
    assert_eq!(req.protocol, "PLAIN");
    let creds = sasl::parse_plain_token(&req.token).unwrap();
    assert_eq!(creds.authzid, "");
    if creds.username == "admin" && creds.password == "pw" {
        reply(
            &mut sock,
            h.request_id,
            &AuthenticateResponse {
                challenge: Some(Vec::new()),
            },
        )
        .await;
    } else {
        let frame = encode_error_response(
            h.request_id,
            46,
            "Authentication failed: Invalid username or password",
        );
        write_frame(&mut sock, &frame).await.unwrap();
    }
    if then_serve {
        let (h, _) = read_request(&mut sock).await;
        assert_eq!(h.api_key, ApiKey::ListDatabases.id());
        reply(
            &mut sock,
            h.request_id,
            &ListDatabasesResponse {
                database_name: vec!["fluss".into()],
                database_summary: vec![],
            },
        )
        .await;
    }
}

#[tokio::test]
async fn sasl_plain_success_and_wrong_password() {
    let (listener, addr) = listen().await;
    let server = tokio::spawn(sasl_server(listener, true));
    let mut cfg = config();
    cfg.sasl = Some(SaslConfig {
        username: "admin".into(),
        password: "pw".into(),
    });
    assert!(
        !format!("{cfg:?}").contains("\"pw\""),
        "password must not be printed"
    );
    let conn = ServerConnection::connect(&addr, &cfg).await.unwrap();
    let dbs = conn
        .request(&ListDatabasesRequest::default())
        .await
        .unwrap();
    assert_eq!(dbs.database_name, vec!["fluss"]);
    server.await.unwrap();

    let (listener, addr) = listen().await;
    let server = tokio::spawn(sasl_server(listener, false));
    cfg.sasl = Some(SaslConfig {
        username: "admin".into(),
        password: "wrong".into(),
    });
    let err = ServerConnection::connect(&addr, &cfg).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Authentication);
    assert_eq!(err.fluss_code(), Some(46));
    server.await.unwrap();
}

#[tokio::test]
async fn server_failure_frame_fails_pending_requests() {
    let (listener, addr) = listen().await;
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
        read_request(&mut sock).await;
        write_frame(
            &mut sock,
            &encode_server_failure(-1, "server is going away"),
        )
        .await
        .unwrap();
        // Keep the socket open: the failure frame alone must end the connection.
        tokio::time::sleep(WAIT).await;
    });
    let conn = ServerConnection::connect(&addr, &config()).await.unwrap();
    let err = tokio::time::timeout(WAIT, conn.request(&list_tables("a")))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.fluss_code(), Some(-1));
    assert!(err.message().contains("server is going away"), "{err}");
    assert!(conn.is_closed());
}

#[tokio::test]
async fn garbage_from_server_fails_pending_requests_without_panicking() {
    let (listener, addr) = listen().await;
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
        read_request(&mut sock).await;
        // A frame with an unknown response type 9.
        sock.write_all(&[0, 0, 0, 5, 9, 0, 0, 0, 1]).await.unwrap();
        tokio::time::sleep(WAIT).await;
    });
    let conn = ServerConnection::connect(&addr, &config()).await.unwrap();
    let err = tokio::time::timeout(WAIT, conn.request(&list_tables("a")))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert!(conn.is_closed());
}

#[tokio::test]
async fn close_fails_waiting_requests_with_closed() {
    let (listener, addr) = listen().await;
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        answer_api_versions(&mut sock, NegotiatedVersions::riverlet_api_versions()).await;
        read_request(&mut sock).await;
        // After close() the client shuts its side down.
        assert!(read_frame(&mut sock, 1 << 20).await.unwrap().is_none());
    });
    let conn = ServerConnection::connect(&addr, &config()).await.unwrap();
    let c2 = conn.clone();
    let waiting = tokio::spawn(async move { c2.request(&list_tables("a")).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    conn.close();
    let err = tokio::time::timeout(WAIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Closed);
    tokio::time::timeout(WAIT, server).await.unwrap().unwrap();
}

#[tokio::test]
async fn connect_refused_is_a_network_error() {
    let (listener, addr) = listen().await;
    drop(listener);
    let err = ServerConnection::connect(&addr, &config())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Network, "{err}");
}
