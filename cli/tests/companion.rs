//! `riverlet flight ...` runs `riverlet-flight` in place of itself (Unix `exec`): stopping the
//! `riverlet` process a script started (SIGTERM to its pid) stops the Flight SQL server, and
//! its port is free again (issue: orphans used to keep serving).

#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RIVERLET: &str = env!("CARGO_BIN_EXE_riverlet");

#[test]
fn sigterm_to_riverlet_flight_frees_its_port() {
    // cargo builds every binary of the workspace for `cargo test --workspace`; alone,
    // `cargo test -p riverlet-cli` needs `cargo build -p riverlet-sql` first.
    let flight = Path::new(RIVERLET).with_file_name("riverlet-flight");
    assert!(
        flight.is_file(),
        "{} is not built: run `cargo build -p riverlet-sql --bin riverlet-flight` first",
        flight.display()
    );
    let server = common::serve(&[]);
    let mut child = Command::new(RIVERLET)
        .args(["flight", "--bootstrap", &server.bootstrap, "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line
        .split_once("grpc://")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    // It is listening: the port is taken.
    assert!(
        TcpListener::bind(&addr).is_err(),
        "{addr} should be held by riverlet flight"
    );

    let pid = child.id().to_string();
    let kill = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(kill.success(), "kill -TERM {pid}: {kill}");
    let status = child.wait().unwrap();
    // The process that got the signal is the one that served Flight SQL, and it died of it.
    assert_eq!(
        status.signal(),
        Some(15),
        "riverlet flight ended with {status}"
    );

    // No orphan holds the port: it can be bound again (a bounded wait for the kernel only).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match TcpListener::bind(&addr) {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("{addr} is still taken after SIGTERM to riverlet flight: {e}"),
        }
    }
}
