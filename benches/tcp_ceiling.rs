//! The loopback ceiling of the scan benchmark: pushes N bytes from one thread to another over
//! a plain 127.0.0.1 TCP socket and reports how fast they arrived. No framing, no decoding:
//! whatever a Fluss client does on top of this costs time this program does not spend.
//!
//! Built by benches/run.py with `rustc -O` (std only, no cargo):
//!     tcp_ceiling BYTES [CHUNK] [fresh|reuse]
//! `fresh`: the receiver writes into one newly allocated BYTES-long buffer (so it pays the page
//! faults a client pays to hold the result); `reuse`: it reads into one CHUNK-sized buffer.
//! Prints one JSON line: {"bytes":..,"seconds":..,"mode":".."}.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .expect("usage: tcp_ceiling BYTES [CHUNK] [fresh|reuse]");
    let chunk: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let mode = args.get(3).map(String::as_str).unwrap_or("fresh").to_string();

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    // The sender plays the server: one chunk of (non-zero) bytes written again and again.
    let sender = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).ok();
        let buf: Vec<u8> = (0..chunk).map(|i| (i % 251) as u8 + 1).collect();
        let mut left = total;
        while left > 0 {
            let n = left.min(chunk);
            s.write_all(&buf[..n]).expect("write");
            left -= n;
        }
    });
    let (mut conn, _) = listener.accept().expect("accept");
    let start = Instant::now();
    let mut got = 0usize;
    let mut checksum = 0u64;
    if mode == "reuse" {
        let mut buf = vec![0u8; chunk];
        while got < total {
            let n = conn.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            checksum = checksum.wrapping_add(buf[0] as u64);
            got += n;
        }
    } else {
        // vec![0; n] of this size is a fresh zero mapping (calloc): the pages are faulted in by
        // the copy out of the socket, as they are for a client building its result.
        let mut buf = vec![0u8; total];
        while got < total {
            let end = (got + chunk).min(total);
            let n = conn.read(&mut buf[got..end]).expect("read");
            if n == 0 {
                break;
            }
            got += n;
        }
        checksum = buf.iter().step_by(4096).map(|&b| b as u64).sum();
    }
    let secs = start.elapsed().as_secs_f64();
    sender.join().expect("sender");
    println!("{{\"bytes\":{got},\"seconds\":{secs:.6},\"mode\":\"{mode}\",\"chunk\":{chunk},\"checksum\":{checksum}}}");
}
