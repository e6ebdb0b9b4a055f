//! `riverlet serve --metrics-port`: after real client requests, GET /metrics answers the
//! server's request, error, byte and connection metrics in Prometheus's text format.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

struct Served {
    child: Child,
    bootstrap: String,
    metrics: String,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .args(["serve", "--port", "0", "--metrics-port", "0", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    let mut second = String::new();
    out.read_line(&mut first).unwrap();
    out.read_line(&mut second).unwrap();
    Served {
        child,
        bootstrap: first
            .trim()
            .strip_prefix("bootstrap: ")
            .unwrap()
            .to_string(),
        metrics: second.trim().strip_prefix("metrics: ").unwrap().to_string(),
        _dir: dir,
    }
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
    let s = serve();
    let b = s.bootstrap.as_str();
    assert!(riverlet(b, &["create-table", "m.t", "--schema", "id INT"]));
    assert!(riverlet(b, &["write", "m.t", "[[1], [2], [3]]"]));
    assert!(riverlet(b, &["read", "m.t"]));
    assert!(!riverlet(b, &["read", "m.missing"]));

    let text = get(&s.metrics, "/metrics");
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

    assert!(get(&s.metrics, "/other").starts_with("HTTP/1.1 404"));
}
