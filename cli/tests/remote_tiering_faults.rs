//! The remote log tiering killed at each step of a bucket's round (issue #31 item 6):
//! `riverlet serve` with `RIVERLET_FAULT_REMOTE_TIERING=<step>` aborts when its tiering round
//! reaches the step; started again without it on the same data directory, it tiers the rest,
//! and a read from the earliest offset (remote segments, then local ones) holds every
//! acknowledged row once.
//!
//! Each step: a server that never tiers in the test's time (a round every hour) writes rows
//! rolling several 2 KiB segments and is killed; the faulted server's first round (50 ms after
//! its start) tiers them and aborts at the step; a server without the knob tiers the rest
//! (polled on the bucket's `remote-log.json`), then the read is checked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use riverlet::metadata::{TableDescriptor, TablePath};

use super::lake_commit_faults::{ids_once, read, schema, serve_with, write, Serve};

const FAULT_ENV: &str = "RIVERLET_FAULT_REMOTE_TIERING";
/// The steps of a round, in their order (`server/src/service/tiering.rs`; a name the server
/// does not know makes it refuse to start, so a renamed step fails this test).
const STEPS: [&str; 5] = [
    "segment-file",
    "segments-copied",
    "manifest",
    "recorded",
    "local-removed",
];
/// Rows per write, one batch each: over 2 KiB of log in all (several rolled segments).
const ROWS_PER_WRITE: i64 = 40;

fn options(remote: &Path, every: &str) -> Vec<String> {
    vec![
        format!("remote.data.dir={}", remote.display()),
        "log.segment.file-size=2kb".into(),
        "log.index.interval-size=256".into(),
        "table.log.tiered.local-segments=1".into(),
        format!("remote.log.task-interval-duration={every}"),
    ]
}

/// The one file named `name` under `dir`, if any.
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.file_name().is_some_and(|n| n == name) {
                return Some(p);
            }
        }
    }
    None
}

/// (the end offset `remote-log.json` records as tiered, the base offset of the bucket's
/// newest local segment: what is rolled and not yet tiered ends there).
fn tiered_and_active(bucket_dir: &Path) -> (i64, i64) {
    let tiered = std::fs::read(bucket_dir.join("remote-log.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.get("segments")?
                .as_array()?
                .iter()
                .filter_map(|s| s.get("end")?.as_i64())
                .max()
        })
        .unwrap_or(0);
    let active = std::fs::read_dir(bucket_dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".log")?.parse::<i64>().ok()
        })
        .max()
        .unwrap_or(0);
    (tiered, active)
}

#[test]
fn a_tiering_round_killed_at_each_step_resumes_with_every_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let (data, remote) = (dir.path().join("data"), dir.path().join("remote"));
    let (idle, tiering) = (options(&remote, "1h"), options(&remote, "50ms"));
    let path = TablePath::new("tiering", "events");
    let name = path.to_string();
    let mut written = BTreeSet::new();
    let mut next_id = 0i64;
    let mut write_more = |s: &Serve, written: &mut BTreeSet<i64>| {
        // one produce request per row: segments roll only between batches
        let conn = s.connect();
        for id in next_id..next_id + ROWS_PER_WRITE {
            write(&conn, &path, id..id + 1);
        }
        written.extend(next_id..next_id + ROWS_PER_WRITE);
        next_id += ROWS_PER_WRITE;
    };
    {
        let s = serve_with(&data, &idle, FAULT_ENV, None);
        let conn = s.connect();
        conn.admin().create_database("tiering", true).unwrap();
        let d = TableDescriptor::builder(schema())
            .distributed_by(Some(1), Vec::<String>::new())
            .build()
            .unwrap();
        conn.admin().create_table(&path, &d, false).unwrap();
        write_more(&s, &mut written);
    }
    // the bucket's directory: the one holding its first segment
    let bucket_dir = find(&data, &format!("{:020}.log", 0))
        .expect("no first segment")
        .parent()
        .unwrap()
        .to_path_buf();
    let mut tiered_before = 0;
    for step in STEPS {
        let (tiered, active) = tiered_and_active(&bucket_dir);
        assert!(
            active > tiered,
            "before {step}: nothing rolled to tier (tiered up to {tiered}, active segment at {active})"
        );
        assert_eq!(
            tiered, tiered_before,
            "before {step}: tiering by an idle server"
        );
        serve_with(&data, &tiering, FAULT_ENV, Some(step)).expect_abort(&format!(
            "{FAULT_ENV}: aborting the process at remote log tiering step {step}"
        ));

        // Without the knob: every row once, then every rolled segment tiered, and still.
        {
            let s = serve_with(&data, &tiering, FAULT_ENV, None);
            let at = format!("after the kill at {step}");
            assert_eq!(
                ids_once(&read(&s.connect(), &name), &at),
                written,
                "{at}: the read is not the acknowledged rows"
            );
            let until = Instant::now() + Duration::from_secs(120);
            loop {
                let (tiered, active) = tiered_and_active(&bucket_dir);
                if tiered == active {
                    tiered_before = tiered;
                    break;
                }
                assert!(
                    Instant::now() < until,
                    "{at}: rolled segments up to {active} not tiered within 120 s ({tiered})"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            assert_eq!(
                ids_once(&read(&s.connect(), &name), &at),
                written,
                "{at}: the read once tiered is not the acknowledged rows"
            );
        }

        // More rows, rolled but not tiered, for the next step.
        let s = serve_with(&data, &idle, FAULT_ENV, None);
        write_more(&s, &mut written);
        assert_eq!(
            ids_once(&read(&s.connect(), &name), "after more rows"),
            written
        );
    }
}
