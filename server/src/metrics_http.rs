//! The Prometheus endpoint of `riverlet serve --metrics-port`: `GET /metrics` answers the
//! process's metrics in the text exposition format (HTTP/1.1, one response per connection).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest request head read; a scraper sends a few hundred bytes.
const MAX_HEAD: usize = 16 * 1024;
/// A client that does not send its request head in this time is dropped.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `GET /metrics` on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        tokio::spawn(async move {
            let _ = tokio::time::timeout(READ_TIMEOUT, answer(stream)).await;
        });
    }
}

async fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (status, content_type, body) =
        if method == "GET" && path.split('?').next() == Some("/metrics") {
            (
                "200 OK",
                "text/plain; version=0.0.4; charset=utf-8",
                riverlet::metrics::render_prometheus(),
            )
        } else {
            (
                "404 Not Found",
                "text/plain; charset=utf-8",
                "riverlet serves only GET /metrics here\n".to_string(),
            )
        };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
