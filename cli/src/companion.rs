//! Companion programs of `riverlet`: finding `riverlet-NAME` git-style (next to this executable,
//! else on PATH) and `serve --flight-port`, which runs `riverlet-flight` against the embedded
//! server as a child process, so the `riverlet` binary itself never links DataFusion.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use riverlet::{Error, ErrorKind, Result};

/// How `riverlet-NAME` is started: the file next to this executable when there is one (a
/// `cargo build` puts them side by side), else the name, looked up on PATH.
pub fn program(name: &str) -> (String, Command) {
    let program = format!("riverlet-{name}");
    let beside: Option<PathBuf> = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&program)))
        .filter(|p| p.is_file());
    let command = match &beside {
        Some(path) => Command::new(path),
        None => Command::new(&program),
    };
    (program, command)
}

/// A running `riverlet-flight` serving next to `riverlet serve`. Dropping it closes the
/// child's stdin, on which it stops (also when this process is killed), and waits for it.
pub struct FlightGateway {
    child: Child,
    stdin: Option<ChildStdin>,
    _stdout: BufReader<ChildStdout>,
}

impl FlightGateway {
    /// Starts `riverlet-flight` against `bootstrap`, listening on `host:port` (0: a free port),
    /// and prints `flight: grpc://HOST:PORT` once it listens. `tls_ca` is the CA file the
    /// gateway trusts when the server serves TLS.
    pub fn start(bootstrap: &str, host: &str, port: u16, tls_ca: Option<&str>) -> Result<Self> {
        let (name, mut command) = program("flight");
        command
            .args(["--bootstrap", bootstrap, "--host", host])
            .args(["--port", &port.to_string(), "--stop-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(ca) = tls_ca {
            command.args(["--tls-ca", ca]);
        }
        let mut child = command.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::invalid(format!(
                    "--flight-port needs the program '{name}' next to riverlet or on PATH \
                     (it comes with `cargo build -p riverlet-sql`)"
                ))
            } else {
                Error::new(ErrorKind::Io, format!("cannot run {name}: {e}"))
            }
        })?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            return Err(Error::internal(format!("{name}: no stdout pipe")));
        };
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        let read = stdout.read_line(&mut line);
        let uri = line
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .map(str::to_string);
        let Some(uri) = uri.filter(|_| read.is_ok()) else {
            // It failed before listening and said why on stderr (inherited).
            let _ = child.kill();
            let status = child.wait();
            return Err(Error::invalid(format!(
                "{name} did not start the Flight SQL service on {host}:{port} ({})",
                match status {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                }
            )));
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "flight: {uri}");
        let _ = out.flush();
        Ok(FlightGateway {
            child,
            stdin,
            _stdout: stdout,
        })
    }
}

impl Drop for FlightGateway {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
