//! A `riverlet serve` child process on a temporary data directory, shared by the CLI tests.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};

/// The running server; killed when dropped.
pub struct Served {
    child: Child,
    /// `host:port` from the server's first line.
    pub bootstrap: String,
    /// The rest of the server's standard output (e.g. the `metrics: ...` line).
    // Each test binary compiles this module; only some read the output.
    #[allow(dead_code)]
    pub stdout: BufReader<ChildStdout>,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `riverlet serve --port 0` with `extra` flags and waits for its `bootstrap:` line.
pub fn serve(extra: &[&str]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .args(["serve", "--data-dir"])
        .arg(dir.path())
        .args(["--port", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let bootstrap = line
        .trim()
        .strip_prefix("bootstrap: ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Served {
        child,
        bootstrap,
        stdout,
        _dir: dir,
    }
}
