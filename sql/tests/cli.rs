//! `riverlet sql` (the riverlet-sql binary) against the embedded server: a statement printed as
//! a table or written as CSV, Parquet and Arrow IPC; the interactive prompt reading statements
//! ending in `;` from stdin; errors; `--embedded`; and `riverlet sql` dispatching to it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use riverlet::blocking::Connection;
use riverlet::metadata::{parse_columns, Schema, TableDescriptor, TablePath};

const SQL: &str = env!("CARGO_BIN_EXE_riverlet-sql");

fn create_orders(bootstrap: &str) {
    let conn = Connection::connect_to(bootstrap).unwrap();
    let schema = Schema::builder()
        .from_columns(parse_columns("order_id BIGINT, item STRING, amount INT").unwrap())
        .build()
        .unwrap();
    let descriptor = TableDescriptor::builder(schema)
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    let admin = conn.admin();
    admin.create_database("fluss", true).unwrap();
    admin
        .create_table(&TablePath::new("fluss", "orders"), &descriptor, false)
        .unwrap();
    conn.close().unwrap();
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(SQL)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn ok(args: &[&str], stdin: Option<&str>) -> String {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn server() -> (riverlet_server::LocalServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = riverlet_server::ServerConfig::new(dir.path()).with_port(0);
    (riverlet_server::LocalServer::start(config).unwrap(), dir)
}

fn trimmed(text: &str) -> String {
    text.trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn statements_and_output_formats() {
    let (server, _dir) = server();
    let b = server.bootstrap_servers();
    create_orders(&b);
    let insert = "INSERT INTO orders VALUES (1, 'apple', 10), (2, 'pear', 20), (3, 'plum', 30)";
    ok(&["--bootstrap", &b, insert], None);

    let query = "SELECT order_id, item FROM orders WHERE amount >= 20 ORDER BY order_id";
    assert_eq!(
        trimmed(&ok(&["--bootstrap", &b, query], None)),
        trimmed(
            "+----------+------+
             | order_id | item |
             +----------+------+
             | 2        | pear |
             | 3        | plum |
             +----------+------+"
        )
    );
    assert_eq!(
        ok(&["--bootstrap", &b, "--format", "csv", query], None),
        "order_id,item\n2,pear\n3,plum\n"
    );

    let out = tempfile::tempdir().unwrap();
    let parquet = out.path().join("r.parquet");
    ok(
        &[
            "--bootstrap",
            &b,
            "--format",
            "parquet",
            "--output",
            parquet.to_str().unwrap(),
            query,
        ],
        None,
    );
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&parquet).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    assert_eq!(pretty(&batches), pretty_expected());

    let ipc = out.path().join("r.arrow");
    ok(
        &[
            "--bootstrap",
            &b,
            "--format",
            "arrow",
            "--output",
            ipc.to_str().unwrap(),
            query,
        ],
        None,
    );
    let reader =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&ipc).unwrap(), None).unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    assert_eq!(pretty(&batches), pretty_expected());
}

fn pretty(batches: &[arrow::record_batch::RecordBatch]) -> String {
    arrow::util::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string()
}

fn pretty_expected() -> String {
    trimmed(
        "+----------+------+
         | order_id | item |
         +----------+------+
         | 2        | pear |
         | 3        | plum |
         +----------+------+",
    )
}

#[test]
fn prompt_reads_statements_ending_in_semicolons() {
    let (server, _dir) = server();
    let b = server.bootstrap_servers();
    create_orders(&b);
    let input = "INSERT INTO orders VALUES (7, 'fig', 70);\n\
                 SELECT item\n  FROM orders\n  WHERE order_id = 7;\n\
                 SELECT nonsense FROM;\n\
                 SELECT count(*) AS n FROM orders;\n";
    let out = run(&["--bootstrap", &b, "--format", "csv"], Some(input));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    // Every statement ran, the bad one reported, and the exit status says one failed.
    assert_eq!(stdout, "count\n1\nitem\nfig\nn\n1\n");
    assert!(stderr.contains("riverlet sql:"), "{stderr}");
    assert!(!out.status.success());
    // Input ending inside a statement is an error naming it.
    let out = run(&["--bootstrap", &b], Some("SELECT 1"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ended inside a statement"));
}

#[test]
fn errors_are_reported_not_crashed() {
    let (server, _dir) = server();
    let b = server.bootstrap_servers();
    create_orders(&b);
    let out = run(
        &[
            "--bootstrap",
            &b,
            "SELECT * FROM fluss_incremental_between_timestamp('orders', '2026-01-02 00:00:00', '2026-01-01 00:00:00')",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("strictly before"), "{stderr}");
    let out = run(&["--bootstrap", &b, "SELECT * FROM no_such_table"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_table"));
}

#[test]
fn embedded_server_on_a_data_directory() {
    let (server, dir) = server();
    create_orders(&server.bootstrap_servers());
    ok(
        &[
            "--bootstrap",
            &server.bootstrap_servers(),
            "INSERT INTO orders VALUES (5, 'kiwi', 50)",
        ],
        None,
    );
    server.shutdown().unwrap();
    let data = dir.path().to_str().unwrap();
    assert_eq!(
        ok(
            &[
                "--embedded",
                data,
                "--format",
                "csv",
                "SELECT * FROM orders"
            ],
            None
        ),
        "order_id,item,amount\n5,kiwi,50\n"
    );
}

/// The `riverlet` binary of the same build (cargo builds every binary of the workspace for
/// `cargo test --workspace`; alone, `cargo test -p riverlet-sql` may not have built it).
fn riverlet_cli() -> Option<PathBuf> {
    let p = Path::new(SQL).parent()?.join("riverlet");
    p.is_file().then_some(p)
}

#[test]
fn riverlet_sql_runs_this_binary() {
    let Some(cli) = riverlet_cli() else {
        eprintln!(
            "NOT APPLICABLE: riverlet_sql_runs_this_binary (target/debug/riverlet is not built; \
             `cargo build -p riverlet-cli`)"
        );
        return;
    };
    let (server, _dir) = server();
    let b = server.bootstrap_servers();
    create_orders(&b);
    let out = Command::new(&cli)
        .args([
            "sql",
            "--bootstrap",
            &b,
            "--format",
            "csv",
            "SELECT count(*) AS n FROM orders",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "n\n0\n");
    let out = Command::new(&cli).args(["nosuch"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("riverlet-nosuch"));
}
