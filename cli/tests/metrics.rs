//! `riverlet serve --metrics-port`: after real client requests, GET /metrics answers the
//! server's request, error, byte and connection metrics in Prometheus's text format.

use std::io::{BufRead, Read, Write};
use std::process::Command;

use crate::common;

/// The server with its metrics endpoint, and the endpoint's address.
fn serve() -> (common::Served, String) {
    let mut s = common::serve(&["--metrics-port", "0"]);
    let mut line = String::new();
    s.stdout.read_line(&mut line).unwrap();
    let metrics = line.trim().strip_prefix("metrics: ").unwrap().to_string();
    (s, metrics)
}

fn get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

fn riverlet(bootstrap: &str, args: &[&str]) -> bool {
    Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .args(args)
        .env("RIVERLET_BOOTSTRAP", bootstrap)
        .output()
        .unwrap()
        .status
        .success()
}

/// The value of the sample line that starts with `prefix`, if any.
fn value(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn the_metrics_endpoint_counts_requests_errors_and_bytes() {
    let (s, metrics) = serve();
    let b = s.bootstrap.as_str();
    assert!(riverlet(b, &["create-table", "m.t", "--schema", "id INT"]));
    assert!(riverlet(b, &["write", "m.t", "[[1], [2], [3]]"]));
    assert!(riverlet(b, &["read", "m.t"]));
    assert!(!riverlet(b, &["read", "m.missing"]));

    let text = get(&metrics, "/metrics");
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(
        text.contains("Content-Type: text/plain; version=0.0.4"),
        "{text}"
    );
    assert!(
        text.contains("# TYPE riverlet_server_requests_total counter"),
        "{text}"
    );
    for api in ["CREATE_TABLE", "PRODUCE_LOG", "FETCH_LOG"] {
        let n = value(
            &text,
            &format!("riverlet_server_requests_total{{api=\"{api}\"}}"),
        );
        assert!(n.unwrap_or(0.0) >= 1.0, "{api}: {text}");
    }
    let missing = value(
        &text,
        "riverlet_server_request_errors_total{api=\"GET_TABLE_INFO\",code=\"TABLE_NOT_EXIST\"}",
    );
    assert!(missing.unwrap_or(0.0) >= 1.0, "{text}");
    assert!(value(&text, "riverlet_server_bytes_received_total").unwrap_or(0.0) > 0.0);
    assert!(value(&text, "riverlet_server_bytes_sent_total").unwrap_or(0.0) > 0.0);
    let produce = value(
        &text,
        "riverlet_server_request_seconds_count{api=\"PRODUCE_LOG\"}",
    );
    assert!(produce.unwrap_or(0.0) >= 1.0, "{text}");
    assert!(text.contains("riverlet_server_connections"), "{text}");

    assert!(get(&metrics, "/other").starts_with("HTTP/1.1 404"));
}
