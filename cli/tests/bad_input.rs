//! The CLI's bad-input catalogue (issue 18, item 4): each case runs the `riverlet` binary with
//! one bad value against a real `riverlet serve` and expects a failing exit status and a message
//! on stderr that names the bad value — never a panic, a hang or a success.

use std::process::{Command, Stdio};

use crate::common;
use common::serve;

/// Runs the CLI and returns (exited successfully, stderr). A command still running after
/// 120 s is killed and reported as a hang (this guards the suite; it asserts no duration).
fn run(bootstrap: &str, args: &[String]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .args(args)
        .env("RIVERLET_BOOTSTRAP", bootstrap)
        .env_remove("RIVERLET_PASSWORD")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let err = reader.join().unwrap();
    match status {
        Some(status) => (status.success(), err),
        None => (true, format!("HUNG (killed after 120 s): {err}")),
    }
}

/// A port nobody listens on (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// One bad invocation and the text its error message must contain.
struct Case {
    id: &'static str,
    args: Vec<String>,
    names: String,
}

fn case(id: &'static str, args: &[&str], names: &str) -> Case {
    Case {
        id,
        args: args.iter().map(|s| s.to_string()).collect(),
        names: names.to_string(),
    }
}

fn catalogue(file: &str, dir: &str, dead: u16) -> Vec<Case> {
    let deep = format!("{}id = 1{}", "(".repeat(20_000), ")".repeat(20_000));
    let nots = format!("{}id = 1", "NOT ".repeat(20_000));
    let dead_bootstrap = format!("127.0.0.1:{dead}");
    let mut cases = vec![
        // connecting
        case(
            "empty bootstrap",
            &["tables", "--bootstrap", ""],
            "bootstrap",
        ),
        case(
            "bootstrap without port",
            &["tables", "--bootstrap", "localhost"],
            "localhost",
        ),
        case(
            "bootstrap port not a number",
            &["tables", "--bootstrap", "localhost:http"],
            "http",
        ),
        case(
            "bootstrap port out of range",
            &["tables", "--bootstrap", "localhost:70000"],
            "70000",
        ),
        case(
            "nothing listening",
            &["tables", "--bootstrap", &dead_bootstrap],
            &dead.to_string(),
        ),
        // serve
        case(
            "serve port out of range",
            &["serve", "--data-dir", dir, "--port", "70000"],
            "70000",
        ),
        case(
            "serve port negative",
            &["serve", "--data-dir", dir, "--port", "-5"],
            "-5",
        ),
        case(
            "serve unknown fsync policy",
            &["serve", "--data-dir", dir, "--fsync", "sometimes"],
            "sometimes",
        ),
        case(
            "serve SASL user without password",
            &["serve", "--data-dir", dir, "--sasl-user", "alice"],
            "alice",
        ),
        case(
            "serve unknown server option",
            &[
                "serve",
                "--data-dir",
                dir,
                "--set",
                "remote.data.dirr=/tmp/x",
            ],
            "remote.data.dirr",
        ),
        case(
            "serve server option without a value",
            &["serve", "--data-dir", dir, "--set", "log.segment.file-size"],
            "log.segment.file-size",
        ),
        case(
            "serve server option with a bad value",
            &[
                "serve",
                "--data-dir",
                dir,
                "--set",
                "log.segment.file-size=huge",
            ],
            "huge",
        ),
        case(
            "serve data dir is a file",
            &["serve", "--port", "0", "--data-dir", file],
            file,
        ),
        case(
            "serve unresolvable host",
            &[
                "serve",
                "--data-dir",
                dir,
                "--port",
                "0",
                "--host",
                "no-such-host.invalid",
            ],
            "no-such-host.invalid",
        ),
        // create-table
        case(
            "table name with two dots",
            &["create-table", "a.b.c", "--schema", "id INT"],
            "a.b.c",
        ),
        case(
            "database name with a space",
            &["create-table", "bad db.t", "--schema", "id INT"],
            "bad db",
        ),
        case(
            "table name with a slash",
            &["create-table", "shop.a/b", "--schema", "id INT"],
            "a/b",
        ),
        case(
            "empty schema",
            &["create-table", "shop.x", "--schema", ""],
            "no columns",
        ),
        case(
            "unknown type",
            &["create-table", "shop.x", "--schema", "id BIGINTEGER"],
            "BIGINTEGER",
        ),
        case(
            "column without a type",
            &["create-table", "shop.x", "--schema", "id"],
            "id",
        ),
        case(
            "duplicate column",
            &["create-table", "shop.x", "--schema", "id INT, id BIGINT"],
            "id",
        ),
        case(
            "decimal precision too big",
            &["create-table", "shop.x", "--schema", "d DECIMAL(50, 2)"],
            "50",
        ),
        case(
            "decimal scale above precision",
            &["create-table", "shop.x", "--schema", "d DECIMAL(5, 9)"],
            "9",
        ),
        case(
            "char length zero",
            &["create-table", "shop.x", "--schema", "c CHAR(0)"],
            "0",
        ),
        case(
            "timestamp precision too big",
            &["create-table", "shop.x", "--schema", "t TIMESTAMP(12)"],
            "12",
        ),
        case(
            "unclosed type parenthesis",
            &["create-table", "shop.x", "--schema", "d DECIMAL(10, 2"],
            "DECIMAL",
        ),
        case(
            "primary key names unknown column",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--primary-key",
                "nope",
            ],
            "nope",
        ),
        case(
            "partition key names unknown column",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--partition-by",
                "nope",
            ],
            "nope",
        ),
        case(
            "bucket key names unknown column",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--bucket-key",
                "nope",
            ],
            "nope",
        ),
        case(
            "zero buckets",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--buckets",
                "0",
            ],
            "0",
        ),
        case(
            "negative buckets",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--buckets",
                "-3",
            ],
            "-3",
        ),
        case(
            "buckets beyond 32 bits",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--buckets",
                "99999999999",
            ],
            "99999999999",
        ),
        case(
            "property without '='",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--property",
                "noequals",
            ],
            "noequals",
        ),
        case(
            "TTL not a duration",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT",
                "--property",
                "table.log.ttl=forever",
            ],
            "forever",
        ),
        case(
            "unknown merge engine",
            &[
                "create-table",
                "shop.x",
                "--schema",
                "id INT NOT NULL, v INT",
                "--primary-key",
                "id",
                "--property",
                "table.merge-engine=sideways",
            ],
            "sideways",
        ),
        case(
            "table exists",
            &["create-table", "shop.logs", "--schema", "id INT"],
            "logs",
        ),
        // write
        case(
            "write to an unknown table",
            &["write", "shop.nope", "[[1]]"],
            "nope",
        ),
        case(
            "write text that is not JSON",
            &["write", "shop.logs", "{not json"],
            "JSON",
        ),
        case(
            "write JSON that is not rows",
            &["write", "shop.logs", "42"],
            "42",
        ),
        case(
            "write a row with too many values",
            &["write", "shop.logs", "[[1, \"a\", 3]]"],
            "3",
        ),
        case(
            "write text into an INT column",
            &["write", "shop.logs", "[[\"x\", \"a\"]]"],
            "x",
        ),
        case(
            "write a value beyond INT",
            &["write", "shop.logs", "[[4294967296, \"a\"]]"],
            "4294967296",
        ),
        case(
            "write a fraction into an INT column",
            &["write", "shop.logs", "[[1.5, \"a\"]]"],
            "1.5",
        ),
        case(
            "write an object with an unknown column",
            &["write", "shop.logs", "[{\"nope\": 1}]"],
            "nope",
        ),
        case(
            "write a null key",
            &["write", "shop.users", "[[null, \"a\"]]"],
            "id",
        ),
        // read
        case("read an unknown table", &["read", "shop.nope"], "shop.nope"),
        case("read from an unknown database", &["read", "nodb.t"], "nodb"),
        case(
            "read an unknown column",
            &["read", "shop.logs", "--columns", "nope"],
            "nope",
        ),
        case(
            "filter on an unknown column",
            &["read", "shop.logs", "--filter", "nope = 1"],
            "nope",
        ),
        case(
            "filter cut short",
            &["read", "shop.logs", "--filter", "id >"],
            "id >",
        ),
        case(
            "filter with an unknown operator",
            &["read", "shop.logs", "--filter", "id ~~ 3"],
            "~~",
        ),
        case(
            "filter with an unclosed string",
            &["read", "shop.logs", "--filter", "name = 'abc"],
            "abc",
        ),
        case(
            "filter nested 20000 deep",
            &["read", "shop.logs", "--filter", &deep],
            "deep",
        ),
        case(
            "filter NOT repeated 20000 times",
            &["read", "shop.logs", "--filter", &nots],
            "deep",
        ),
        case(
            "filter value of the wrong type",
            &["read", "shop.logs", "--filter", "id = 'abc'"],
            "abc",
        ),
        case(
            "window start not a time",
            &["read", "shop.logs", "--between", "not a time"],
            "not a time",
        ),
        case(
            "window start after end",
            &["read", "shop.logs", "--between", "2000", "1000"],
            "2000",
        ),
        case(
            "window start blank",
            &["read", "shop.logs", "--between", " "],
            "start",
        ),
        case(
            "window start beyond 64 bits",
            &["read", "shop.logs", "--between", "99999999999999999999"],
            "99999999999999999999",
        ),
        case(
            "window in an unknown zone",
            &[
                "read",
                "shop.logs",
                "--between",
                "2024-01-01 00:00:00",
                "--tz",
                "Mars/Olympus_Mons",
            ],
            "Mars/Olympus_Mons",
        ),
        case(
            "window with an impossible date",
            &["read", "shop.logs", "--between", "2024-02-30 00:00:00"],
            "2024-02-30",
        ),
        case(
            "negative limit",
            &["read", "shop.logs", "--limit", "-1"],
            "-1",
        ),
        case(
            "limit beyond 64 bits",
            &["read", "shop.logs", "--limit", "99999999999999999999999"],
            "99999999999999999999999",
        ),
        case(
            "tables of an unknown database",
            &["tables", "--database", "nodb"],
            "nodb",
        ),
        case("unknown command", &["frobnicate"], "frobnicate"),
        case(
            "unknown flag",
            &["read", "shop.logs", "--colums", "id"],
            "--colums",
        ),
    ];
    cases.push(case(
        "wrong password",
        &["tables", "--username", "alice", "--password", "wrong"],
        "authentication",
    ));
    cases
}

#[test]
fn every_bad_input_fails_with_a_message_naming_it() {
    let s = serve(&[]);
    let b = s.bootstrap.as_str();
    let setup: [&[&str]; 2] = [
        &[
            "create-table",
            "shop.logs",
            "--schema",
            "id INT, name STRING",
        ],
        &[
            "create-table",
            "shop.users",
            "--schema",
            "id INT NOT NULL, name STRING",
            "--primary-key",
            "id",
        ],
    ];
    for args in setup {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (ok, err) = run(b, &args);
        assert!(ok, "{args:?}: {err}");
    }
    let sasl = serve(&["--sasl-user", "alice:secret"]);
    let file = tempfile::NamedTempFile::new().unwrap();
    let file = file.path().to_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let cases = catalogue(&file, dir.path().to_str().unwrap(), closed_port());
    assert!(cases.len() >= 50, "{} cases", cases.len());

    let mut failures = Vec::new();
    for c in &cases {
        let bootstrap = if c.id == "wrong password" {
            sasl.bootstrap.as_str()
        } else {
            b
        };
        let (ok, err) = run(bootstrap, &c.args);
        if ok {
            failures.push(format!("{}: succeeded", c.id));
        } else if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
            failures.push(format!("{}: panicked: {err}", c.id));
        } else if !err.to_lowercase().contains(&c.names.to_lowercase()) {
            failures.push(format!(
                "{}: the message does not name {:?}: {err}",
                c.id, c.names
            ));
        } else if c.id == "wrong password" && err.contains("wrong") {
            failures.push(format!("{}: the password is shown: {err}", c.id));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
