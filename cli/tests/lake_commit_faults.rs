//! A lake commit killed at each of its steps (issue #31 item 6): `riverlet serve` runs with the
//! test-only knob `RIVERLET_FAULT_LAKE_COMMIT=<step>` and aborts when its lake commit reaches
//! that step; started again on the same data directory without the knob, it resumes from the
//! offsets the lake recorded. After every step the union read and `$lake` hold every
//! acknowledged row exactly once (ids, and each bucket's `__offset`s contiguous from 0), and the
//! lake's snapshots are the ones before plus new ones only.
//!
//! The table's `table.datalake.freshness` is 1 h, so a server commits only in the round it runs
//! right after starting (a table unseen since the start is due): every commit here happens at a
//! start, with the rows written to the previous (killed) process pending. Each test runs with
//! an Iceberg lake and with a Paimon lake (the same tiering service over both formats); a
//! Paimon commit has no `manifests` step of its own (the crate writes its manifests inside
//! the commit call), so that step is Iceberg's only.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{Array, Int32Array, Int64Array, RecordBatch, StringArray};
use riverlet::blocking::{block_on, Connection, ReadRequest};
use riverlet::client::{ClientConfig, OffsetSpec};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
// The knob and the steps of a commit, in their order (the test kills at every one).
use riverlet_server::lake::COMMIT_FAULT;

const BUCKETS: i32 = 3;
/// Rows per write: several per bucket (round-robin), so every commit writes every bucket.
const ROWS_PER_WRITE: i64 = 12;

/// One `riverlet serve` process; killed (SIGKILL) when dropped.
pub(super) struct Serve {
    child: Child,
    bootstrap: String,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `riverlet serve` on `data` with the Iceberg lake in `warehouse`, aborting at lake commit
/// step `fault` (None: no fault).
pub(super) fn serve(data: &Path, warehouse: &Path, fault: Option<&str>) -> Serve {
    serve_lake("iceberg", data, warehouse, fault)
}

/// [`serve`] with a lake of `format` (`iceberg` or `paimon`).
pub(super) fn serve_lake(
    format: &str,
    data: &Path,
    warehouse: &Path,
    fault: Option<&str>,
) -> Serve {
    let lake = [
        format!("datalake.format={format}"),
        format!("datalake.{format}.warehouse={}", warehouse.display()),
    ];
    serve_with(data, &lake, COMMIT_FAULT.env(), fault)
}

/// `riverlet serve` on `data` with `options` (`--set`), the fault knob `knob` set to `fault`
/// (None: unset).
pub(super) fn serve_with(
    data: &Path,
    options: &[String],
    knob: &str,
    fault: Option<&str>,
) -> Serve {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_riverlet"));
    cmd.args(["serve", "--data-dir"])
        .arg(data)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for o in options {
        cmd.arg("--set").arg(o);
    }
    match fault {
        Some(step) => cmd.env(knob, step),
        None => cmd.env_remove(knob),
    };
    let mut child = cmd.spawn().unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let (mut err, sink) = (child.stderr.take().unwrap(), stderr.clone());
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let Some(bootstrap) = line.trim().strip_prefix("bootstrap: ").map(str::to_string) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "riverlet serve (fault {fault:?}) printed {line:?}; stderr:\n{}",
            stderr.lock().unwrap()
        );
    };
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Serve {
        child,
        bootstrap,
        stderr,
    }
}

impl Serve {
    pub(super) fn connect(&self) -> Connection {
        let props = BTreeMap::from([
            ("bootstrap.servers".to_string(), self.bootstrap.clone()),
            (
                "client.writer.bucket.no-key-assigner".to_string(),
                "round_robin".to_string(),
            ),
        ]);
        Connection::connect(ClientConfig::from_properties(&props).unwrap()).unwrap()
    }

    /// Waits for the process to abort at lake commit step `step`.
    fn expect_abort_at(self, step: &str) {
        let line = format!(
            "{}: aborting the process at lake commit step {step}",
            COMMIT_FAULT.env()
        );
        self.expect_abort(&line);
    }

    /// Waits for the process to abort (SIGABRT) after writing `want` to stderr.
    pub(super) fn expect_abort(mut self, want: &str) {
        let until = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < until,
                "the server did not abort ({want}) within 120 s; stderr:\n{}",
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // the stderr thread ends at the pipe's end; give it the last bytes
        let until = Instant::now() + Duration::from_secs(10);
        while !self.stderr.lock().unwrap().contains(want) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let err = self.stderr.lock().unwrap().clone();
        assert_eq!(
            status.signal(),
            Some(6),
            "not SIGABRT ({want}): {status}; stderr:\n{err}"
        );
        assert!(err.contains(want), "no line {want:?} in stderr:\n{err}");
    }
}

pub(super) fn schema() -> Schema {
    Schema::builder()
        .column("id", DataType::bigint().not_null())
        .column("note", DataType::string())
        .build()
        .unwrap()
}

/// Appends rows `ids` (one batch each, so the round-robin assigner spreads them); returns when
/// every one is acknowledged.
pub(super) fn write(conn: &Connection, path: &TablePath, ids: std::ops::Range<i64>) {
    let table = conn.table(path).unwrap();
    let w = table.new_append_writer().unwrap();
    let mut handles = Vec::new();
    for id in ids {
        let batch = RecordBatch::try_new(
            table.arrow_schema(),
            vec![
                Arc::new(Int64Array::from(vec![id])),
                Arc::new(StringArray::from(vec![format!("row {id}")])),
            ],
        )
        .unwrap();
        handles.push(w.append(&batch).unwrap());
    }
    w.flush().unwrap();
    for h in handles {
        h.wait().unwrap();
    }
    w.close().unwrap();
}

fn column<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap()
}

pub(super) fn read(conn: &Connection, name: &str) -> Vec<RecordBatch> {
    let t = conn.table(&TablePath::parse(name).unwrap()).unwrap();
    t.read(&ReadRequest::default())
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// The ids of `batches`, each checked to appear once.
pub(super) fn ids_once(batches: &[RecordBatch], what: &str) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for b in batches {
        let ids = column::<Int64Array>(b, "id");
        for i in 0..b.num_rows() {
            assert!(
                out.insert(ids.value(i)),
                "{what}: id {} twice",
                ids.value(i)
            );
        }
    }
    out
}

/// Checks the union read and `$lake` (see the module doc); `lake_exact`: the rows the lake must
/// hold (None: any acknowledged rows, each once). Returns the latest snapshot's offsets.
fn check(
    conn: &Connection,
    path: &TablePath,
    written: &BTreeSet<i64>,
    lake_exact: Option<&BTreeSet<i64>>,
    at: &str,
) -> BTreeMap<i32, i64> {
    let name = path.to_string();
    assert_eq!(
        &ids_once(&read(conn, &name), &format!("{at}: union read")),
        written,
        "{at}: the union read is not the acknowledged rows"
    );
    // the snapshot $lake read: the latest one before and after it (a commit may run meanwhile)
    let (recorded, lake) = loop {
        let before = recorded_offsets(conn, path);
        let lake = read(conn, &format!("{name}$lake"));
        if recorded_offsets(conn, path) == before {
            break (before, lake);
        }
    };
    let lake_ids = ids_once(&lake, &format!("{at}: $lake"));
    match lake_exact {
        Some(want) => assert_eq!(&lake_ids, want, "{at}: $lake"),
        None => assert!(
            lake_ids.is_subset(written),
            "{at}: $lake holds rows never written"
        ),
    }
    // each bucket's rows in the lake are its log's offsets 0..recorded, each once
    let mut offsets: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for b in &lake {
        let (bucket, offset) = (
            column::<Int32Array>(b, "__bucket"),
            column::<Int64Array>(b, "__offset"),
        );
        for i in 0..b.num_rows() {
            offsets
                .entry(bucket.value(i))
                .or_default()
                .push(offset.value(i));
        }
    }
    for bucket in 0..BUCKETS {
        let mut got = offsets.remove(&bucket).unwrap_or_default();
        got.sort_unstable();
        let upto = recorded.get(&bucket).copied().unwrap_or(0);
        assert_eq!(
            got,
            (0..upto).collect::<Vec<_>>(),
            "{at}: bucket {bucket}'s __offset values in $lake are not 0..{upto} once each"
        );
    }
    assert!(offsets.is_empty(), "{at}: $lake rows of unknown buckets");
    recorded
}

/// The latest lake snapshot's offset of each bucket (empty: no snapshot).
pub(super) fn recorded_offsets(conn: &Connection, path: &TablePath) -> BTreeMap<i32, i64> {
    block_on(conn.admin().inner().lake_snapshot(path, None))
        .unwrap()
        .map(|s| {
            s.buckets
                .iter()
                .map(|b| (b.bucket, b.log_offset.unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

/// The snapshot ids `$lake$snapshots` lists.
pub(super) fn snapshot_ids(conn: &Connection, path: &TablePath) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for b in read(conn, &format!("{path}$lake$snapshots")) {
        let ids = column::<Int64Array>(&b, "snapshot_id");
        for i in 0..b.num_rows() {
            assert!(out.insert(ids.value(i)), "snapshot {} twice", ids.value(i));
        }
    }
    out
}

/// Polls until the latest lake snapshot records every bucket's high watermark.
pub(super) fn wait_all_committed(conn: &Connection, path: &TablePath, at: &str) {
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let end = conn
            .admin()
            .list_offsets(path, None, &[], OffsetSpec::Latest)
            .unwrap();
        let recorded = recorded_offsets(conn, path);
        if end
            .iter()
            .all(|(b, o)| recorded.get(b).copied().unwrap_or(0) == *o)
        {
            return;
        }
        assert!(
            Instant::now() < until,
            "{at}: the lake did not reach the log's end {end:?} within 120 s (recorded {recorded:?})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_lake_commit_killed_at_each_step_resumes_with_every_row_once() {
    killed_at_each_step("iceberg");
}

#[test]
fn a_paimon_commit_killed_at_each_step_resumes_with_every_row_once() {
    killed_at_each_step("paimon");
}

fn killed_at_each_step(format: &str) {
    let serve = |data: &Path, warehouse: &Path, fault: Option<&str>| {
        serve_lake(format, data, warehouse, fault)
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, warehouse) = (dir.path().join("data"), dir.path().join("warehouse"));
    let path = TablePath::new("faults", "events");
    let mut next_id = 0i64;
    let mut written = BTreeSet::new();
    let mut write_more = |conn: &Connection, written: &mut BTreeSet<i64>| {
        write(conn, &path, next_id..next_id + ROWS_PER_WRITE);
        written.extend(next_id..next_id + ROWS_PER_WRITE);
        next_id += ROWS_PER_WRITE;
    };

    // The table, and rows pending for the first faulted start (no commit in this process: a
    // new table's first commit is one freshness interval after its creation).
    {
        let s = serve(&data, &warehouse, None);
        let conn = s.connect();
        conn.admin().create_database("faults", true).unwrap();
        let d = TableDescriptor::builder(schema())
            .distributed_by(Some(BUCKETS), Vec::<String>::new())
            .property("table.datalake.enabled", "true")
            .property("table.datalake.freshness", "1h")
            .build()
            .unwrap();
        conn.admin().create_table(&path, &d, false).unwrap();
        write_more(&conn, &mut written);
        let end = conn
            .admin()
            .list_offsets(&path, None, &[], OffsetSpec::Latest)
            .unwrap();
        assert!(
            end.values().all(|o| *o >= 2),
            "every bucket needs rows: {end:?}"
        );
    }

    let mut snapshots = BTreeSet::new();
    for &step in COMMIT_FAULT.steps() {
        if format == "paimon" && step == "manifests" {
            continue;
        }
        // Killed at `step` by the commit of the pending rows it runs as it starts.
        serve(&data, &warehouse, Some(step)).expect_abort_at(step);

        // Restarted without the knob, the server's first round commits what the killed one
        // did not (nothing when the kill came after the commit point): then the lake holds
        // every row once, in exactly one snapshot more than before the kill.
        {
            let s = serve(&data, &warehouse, None);
            let conn = s.connect();
            let at = format!("after the kill at {step}");
            wait_all_committed(&conn, &path, &at);
            check(&conn, &path, &written, Some(&written.clone()), &at);
            let now = snapshot_ids(&conn, &path);
            assert!(
                now.is_superset(&snapshots) && now.len() == snapshots.len() + 1,
                "{at}: the lake lists snapshots {now:?}, before the kill {snapshots:?}"
            );
            snapshots = now;
            // more rows (a round of this process may commit some: no fault here)
            write_more(&conn, &mut written);
            check(&conn, &path, &written, None, &at);
        }

        // The next start commits everything: the lake holds every row once, the snapshots are
        // the ones before plus new ones; then rows only in the log for the next step.
        let s = serve(&data, &warehouse, None);
        let conn = s.connect();
        let at = format!("committed after the kill at {step}");
        wait_all_committed(&conn, &path, &at);
        check(&conn, &path, &written, Some(&written.clone()), &at);
        let now = snapshot_ids(&conn, &path);
        assert!(
            now.is_superset(&snapshots),
            "{at}: the lake lists {now:?}, before {snapshots:?}"
        );
        snapshots = now;
        let in_lake = written.clone();
        write_more(&conn, &mut written);
        check(&conn, &path, &written, Some(&in_lake), &at);
    }
}

/// The offsets file of the newest lake snapshot gone while the server was down: the next
/// commit fails naming it instead of resuming from the snapshot before (which tiered the rows
/// after that one a second time); reads stay exact.
#[test]
fn a_lost_offsets_file_stops_the_tiering_instead_of_tiering_rows_twice() {
    lost_offsets_file("iceberg");
}

#[test]
fn a_lost_paimon_offsets_file_stops_the_tiering_instead_of_tiering_rows_twice() {
    lost_offsets_file("paimon");
}

fn lost_offsets_file(format: &str) {
    let serve = |data: &Path, warehouse: &Path, fault: Option<&str>| {
        serve_lake(format, data, warehouse, fault)
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, warehouse) = (dir.path().join("data"), dir.path().join("warehouse"));
    let path = TablePath::new("lost", "events");
    let name = path.to_string();
    {
        let s = serve(&data, &warehouse, None);
        let conn = s.connect();
        conn.admin().create_database("lost", true).unwrap();
        let d = TableDescriptor::builder(schema())
            .distributed_by(Some(2), Vec::<String>::new())
            .property("table.datalake.enabled", "true")
            .property("table.datalake.freshness", "1h")
            .build()
            .unwrap();
        conn.admin().create_table(&path, &d, false).unwrap();
        write(&conn, &path, 0..10);
    }
    let offsets_files = || -> BTreeSet<std::path::PathBuf> {
        std::fs::read_dir(data.join("lake-offsets"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    };
    // two commits, each at a start; rows 20..30 pending after the second
    for (rows, at) in [(10..20, "first commit"), (20..30, "second commit")] {
        let s = serve(&data, &warehouse, None);
        let conn = s.connect();
        wait_all_committed(&conn, &path, at);
        write(&conn, &path, rows);
    }
    let files = offsets_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let newest = files
        .iter()
        .max_by_key(|f| std::fs::metadata(f).unwrap().modified().unwrap())
        .unwrap()
        .clone();
    std::fs::remove_file(&newest).unwrap();

    // the start's commit round: it fails, or (the bug) commits from the older snapshot
    let s = serve(&data, &warehouse, None);
    let conn = s.connect();
    let until = Instant::now() + Duration::from_secs(120);
    while !s.stderr.lock().unwrap().contains("lake tiering failed")
        && snapshot_ids(&conn, &path).len() == 2
    {
        assert!(
            Instant::now() < until,
            "no lake commit round within 120 s; stderr:\n{}",
            s.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let all: BTreeSet<i64> = (0..30).collect();
    let lake = ids_once(&read(&conn, &format!("{name}$lake")), "$lake");
    assert!(lake.is_subset(&all), "{lake:?}");
    assert_eq!(ids_once(&read(&conn, &name), "union read"), all);
    assert_eq!(
        snapshot_ids(&conn, &path).len(),
        2,
        "a commit after the loss"
    );
    let err = s.stderr.lock().unwrap().clone();
    let want = newest.display().to_string();
    assert!(
        err.contains(&want),
        "the failure does not name {want}:\n{err}"
    );
    assert_eq!(offsets_files().len(), 1, "a commit wrote an offsets file");
}
