//! The CLI's commands against a `riverlet serve` child process, as a user runs them.

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
fn create_write_list_and_read() {
    let s = serve(&[]);
    let b = s.bootstrap.as_str();
    let (ok, out, err) = riverlet(
        b,
        &[
            "create-table",
            "shop.orders",
            "--schema",
            "order_id BIGINT, item STRING, amount INT, dt STRING",
            "--partition-by",
            "dt",
            "--buckets",
            "2",
        ],
    );
    assert!(ok, "{out}{err}");
    let rows = r#"[[1, "a", 10, "2026-01-01"], {"order_id": 2, "item": "b", "amount": 20, "dt": "2026-01-02"}]"#;
    let (ok, out, err) = riverlet(b, &["write", "shop.orders", rows]);
    assert!(ok && out.contains("wrote 2 row(s)"), "{out}{err}");

    let (ok, out, _) = riverlet(b, &["tables", "--database", "shop"]);
    assert!(
        ok && out.contains("orders  [log, partitioned by (dt); 2 buckets]"),
        "{out}"
    );

    let (ok, out, err) = riverlet(
        b,
        &[
            "read",
            "shop.orders",
            "--columns",
            "order_id,amount",
            "--filter",
            "amount >= 20",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("| 2        | 20     |"), "{out}");
    assert!(!out.contains("| 1        |"), "{out}");
    assert!(err.contains("1 row(s)"), "{err}");

    // The whole history as one window, then a window before the data.
    let (ok, _, err) = riverlet(b, &["read", "shop.orders", "--between", "0"]);
    assert!(ok && err.contains("2 row(s)"), "{err}");
    let (ok, out, err) = riverlet(b, &["read", "shop.orders", "--between", "0", "1000"]);
    assert!(ok && out.contains("(no rows)"), "{out}{err}");
}

#[test]
fn a_window_before_retention_warns_on_stderr() {
    let s = serve(&[]);
    let b = s.bootstrap.as_str();
    let (ok, out, err) = riverlet(
        b,
        &[
            "create-table",
            "shop.short",
            "--schema",
            "id BIGINT",
            "--property",
            "table.log.ttl=1h",
        ],
    );
    assert!(ok, "{out}{err}");
    let (ok, out, err) = riverlet(b, &["write", "shop.short", "[[1]]"]);
    assert!(ok, "{out}{err}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let old = (now - 2 * 3_600_000).to_string();
    let (ok, out, err) = riverlet(b, &["read", "shop.short", "--between", &old]);
    assert!(ok, "{out}{err}");
    assert!(err.contains("1 row(s)"), "{err}");
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(
        err.contains("riverlet: warning:") && err.contains("table.log.ttl"),
        "{err}"
    );
    let recent = (now - 60_000).to_string();
    let (ok, _, err) = riverlet(b, &["read", "shop.short", "--between", &recent]);
    assert!(ok && !err.contains("warning"), "{err}");
}

#[test]
fn bad_input_gets_a_clear_error_and_exit_code() {
    let s = serve(&[]);
    let b = s.bootstrap.as_str();
    let (ok, _, err) = riverlet(b, &["read", "shop.missing"]);
    assert!(!ok && err.contains("shop.missing"), "{err}");
    let (ok, _, err) = riverlet(b, &["create-table", "shop.t", "--schema", "id BIGINTEGER"]);
    assert!(!ok && err.contains("unknown type 'BIGINTEGER'"), "{err}");
    riverlet(b, &["create-table", "shop.t", "--schema", "id BIGINT"]);
    let (ok, _, err) = riverlet(b, &["read", "shop.t", "--between", "not a time"]);
    assert!(!ok && err.contains("not a time"), "{err}");
    let (ok, _, err) = riverlet(b, &["read", "shop.t", "--between", "2000", "1000"]);
    assert!(!ok && err.contains("[start, end)"), "{err}");
    let (ok, _, err) = riverlet(b, &["write", "shop.t", "{not json"]);
    assert!(!ok && err.contains("not valid JSON"), "{err}");
}

#[test]
fn read_optimized_reads_the_periodic_kv_snapshot() {
    let s = serve(&["--set", "kv.snapshot.interval=100ms"]);
    let b = s.bootstrap.as_str();
    let (ok, out, err) = riverlet(
        b,
        &[
            "create-table",
            "shop.stock",
            "--schema",
            "item STRING NOT NULL, qty INT",
            "--primary-key",
            "item",
            "--buckets",
            "1",
        ],
    );
    assert!(ok, "{out}{err}");
    let (ok, out, err) = riverlet(
        b,
        &["write", "shop.stock", r#"[["apple", 3], ["pear", 5]]"#],
    );
    assert!(ok, "{out}{err}");
    // The snapshot comes within kv.snapshot.interval; poll (no timing assertion) until the
    // read-optimized read shows both rows.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let (ok, out, err) = riverlet(b, &["read", "shop.stock", "--read-optimized"]);
        assert!(ok, "{out}{err}");
        if err.contains("2 row(s)") {
            assert!(out.contains("apple") && out.contains("pear"), "{out}");
            break;
        }
        assert!(
            err.contains("0 row(s)"),
            "a snapshot has no partial state: {out}{err}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "no KV snapshot: {err}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (ok, _, err) = riverlet(
        b,
        &[
            "serve",
            "--data-dir",
            "x",
            "--set",
            "kv.snapshot.interval=soon",
        ],
    );
    assert!(!ok && err.contains("kv.snapshot.interval"), "{err}");
}

#[test]
fn add_columns_then_old_rows_read_null() {
    let s = serve(&[]);
    let b = s.bootstrap.as_str();
    let (ok, out, err) = riverlet(
        b,
        &[
            "create-table",
            "shop.ev",
            "--schema",
            "id INT NOT NULL, name STRING",
        ],
    );
    assert!(ok, "{out}{err}");
    let (ok, out, err) = riverlet(b, &["write", "shop.ev", r#"[[1, "a"]]"#]);
    assert!(ok, "{out}{err}");
    let (ok, out, err) = riverlet(b, &["add-columns", "shop.ev", "--columns", "note STRING"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("schema id 2, columns id, name, note"), "{out}");
    let (ok, out, err) = riverlet(b, &["write", "shop.ev", r#"[[2, "b", "x"]]"#]);
    assert!(ok, "{out}{err}");
    let (ok, out, err) = riverlet(b, &["read", "shop.ev", "--filter", "note IS NULL"]);
    assert!(
        ok && err.contains("1 row(s)") && out.contains("| 1 "),
        "{out}{err}"
    );
    let (ok, out, err) = riverlet(b, &["read", "shop.ev", "--filter", "note = 'x'"]);
    assert!(
        ok && err.contains("1 row(s)") && out.contains("| 2 "),
        "{out}{err}"
    );
    let (ok, out, err) = riverlet(b, &["add-columns", "shop.ev", "--columns", "name BIGINT"]);
    assert!(!ok && err.contains("'name'"), "{out}{err}");
}
