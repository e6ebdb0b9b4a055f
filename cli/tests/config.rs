//! `riverlet config describe|alter` against `riverlet serve`, as a user runs them: a start-up
//! option is described as INITIAL_SERVER_CONFIG, a dynamic one set with `alter` is described
//! as DYNAMIC_SERVER_CONFIG and deleted again; an option the server does not change at run
//! time exits non-zero with the server's message naming it; a malformed `--set` is named.

use std::process::Command;

use crate::common;
use common::serve;

fn riverlet(bootstrap: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .args(args)
        .env("RIVERLET_BOOTSTRAP", bootstrap)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn describe_and_alter() {
    let s = serve(&["--set", "log.segment.file-size=1mb"]);
    let b = s.bootstrap.as_str();
    let (ok, out, err) = riverlet(b, &["config", "describe"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l == "log.segment.file-size\t1mb\tINITIAL_SERVER_CONFIG"),
        "{out}"
    );
    assert!(!out.contains("kv.snapshot.interval"), "{out}");

    let (ok, out, err) = riverlet(
        b,
        &["config", "alter", "--set", "kv.snapshot.interval=10 min"],
    );
    assert!(ok, "{out}{err}");
    let (_, out, _) = riverlet(b, &["config", "describe"]);
    assert!(
        out.lines()
            .any(|l| l == "kv.snapshot.interval\t10 min\tDYNAMIC_SERVER_CONFIG"),
        "{out}"
    );

    let (ok, out, err) = riverlet(
        b,
        &["config", "alter", "--set", "log.segment.file-size=2mb"],
    );
    assert!(!ok, "{out}");
    assert!(
        err.contains("log.segment.file-size")
            && err.contains("not allowed to be changed dynamically"),
        "{err}"
    );
    let (ok, _, err) = riverlet(b, &["config", "alter", "--set", "no-equals-sign"]);
    assert!(!ok);
    assert!(err.contains("no-equals-sign"), "{err}");

    let (ok, out, err) = riverlet(b, &["config", "alter", "--delete", "kv.snapshot.interval"]);
    assert!(ok, "{out}{err}");
    let (_, out, _) = riverlet(b, &["config", "describe"]);
    assert!(!out.contains("kv.snapshot.interval"), "{out}");
}
