//! Tiered log reads on segments the SERVER uploaded: a log table written past several rolled
//! segments, read once the server serves its head from `remote.data.dir`. Against Apache Fluss
//! (`tests/fluss-cluster/run-interop.sh` starts it with `log.segment.file-size: 1m`,
//! `remote.log.task-interval-duration` of a few seconds and a local `remote.data.dir`) the
//! segments, their manifest and the offsets in FetchLog's `remote_log_fetch_info` are Fluss's
//! own, so this is what checks that Riverlet reads what Fluss uploads. On the embedded server the
//! same test runs with the same segment size (tiered_log.rs covers its 2 KiB-segment details).
//!
//! Against an external server the test needs `RIVERLET_TEST_TIERED_SEGMENT_BYTES`: that server's
//! `log.segment.file-size` in bytes, set only when it also tiers (`remote.log.task-interval-duration`
//! above 0) to a `remote.data.dir` this machine can read (a local path, or S3). Without it the
//! test reports itself as not applicable: a server keeping Fluss's 1 GiB segments never tiers
//! what a test writes.

use crate::common;

use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::Array;

use common::*;
use riverlet::client::{Connection, OffsetSpec, Table};
use riverlet::metadata::TablePath;
use riverlet::scan::{StartupMode, TimePoint};

/// The external server's `log.segment.file-size`, in bytes, when it tiers.
const SEGMENT_VAR: &str = "RIVERLET_TEST_TIERED_SEGMENT_BYTES";
/// The segment size of the embedded server (the one run-interop.sh gives Apache Fluss).
const EMBEDDED_SEGMENT_BYTES: usize = 1 << 20;
/// Groups of rows written, one produce request each, with a time boundary between them.
const GROUPS: usize = 16;
/// Bytes of `name` per row: random text from a 64-letter alphabet (compresses by about 1/4).
const PAYLOAD: usize = 1000;
/// How long the test waits for the server to tier (its task interval is seconds).
const TIERING_WAIT: Duration = Duration::from_secs(180);

/// The server and its segment size; None (reported) against an external server that does not
/// say it tiers.
fn tiering_env(remote: &std::path::Path) -> Option<(TestEnv, usize)> {
    if is_external() {
        let Some(bytes) = std::env::var(SEGMENT_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|b| *b > 0)
        else {
            not_applicable(&format!(
                "{SEGMENT_VAR} is not set: the server is not known to tier small segments to a \
                 remote.data.dir this machine can read (run-interop.sh starts Apache Fluss so)"
            ));
            return None;
        };
        return Some((TestEnv::new(), bytes));
    }
    let remote = remote.to_str().expect("a UTF-8 temp dir").to_string();
    let env = TestEnv::embedded_only("", |c| {
        for (k, v) in [
            ("remote.data.dir", remote.as_str()),
            ("log.segment.file-size", "1mb"),
            ("table.log.tiered.local-segments", "1"),
            ("remote.log.task-interval-duration", "50ms"),
        ] {
            c.set(k, v).unwrap();
        }
    })?;
    Some((env, EMBEDDED_SEGMENT_BYTES))
}

/// Row `i` of group `g`: its id and its name (random letters seeded by the id, so the server's
/// ZSTD cannot shrink a segment's worth of rows to nothing, prefixed with the id).
fn row_of(g: usize, i: usize) -> (i32, String) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let id = (g * 100_000 + i) as i32;
    let mut x = (id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut name = format!("{id}:");
    while name.len() < PAYLOAD {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        name.push(ALPHABET[(x & 63) as usize] as char);
    }
    (id, name)
}

/// Waits (bounded, polling; no assertion on how long it takes) until the server answers a fetch
/// at offset 0 with at least two remote segments; returns how many it listed.
async fn wait_until_tiered(conn: &Connection, table: &Table, path: &TablePath) -> usize {
    let start = Instant::now();
    let mut last = None;
    while start.elapsed() < TIERING_WAIT {
        last = remote_segments_at(conn, table, 0).await;
        if last.is_some_and(|n| n >= 2) {
            return last.unwrap_or_default();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!(
        "waited {TIERING_WAIT:?} for the server at {} to serve offset 0 of {path} from at least \
         two remote log segments (FetchLog's remote_log_fetch_info), last answer: {}; does it \
         have remote.data.dir, remote.log.task-interval-duration > 0 and log.segment.file-size \
         <= {SEGMENT_VAR}?",
        conn.config().bootstrap_servers,
        match last {
            Some(n) => format!("{n} remote segment(s)"),
            None => "served from the local log".into(),
        }
    );
}

/// The first offset the server answers from its local log: offsets below it are remote.
async fn first_local_offset(conn: &Connection, table: &Table, total: i64) -> i64 {
    let (mut lo, mut hi) = (0i64, total);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if remote_segments_at(conn, table, mid).await.is_some() {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_segments_the_server_tiered_are_exact() {
    let remote = tempfile::tempdir().unwrap();
    let Some((env, segment_bytes)) = tiering_env(remote.path()) else {
        return;
    };
    let started = Instant::now();
    let conn = env.connect().await;
    let path = env.path("tiered");
    let mut d = descriptor(false, false, 1);
    // one rolled segment kept locally: tiering deletes the rest once uploaded
    d.properties
        .insert("table.log.tiered.local-segments".into(), "1".into());
    let table = create_table(&conn, &path, d).await;

    // About a third of a segment per group (before compression): 16 groups roll ~4 segments.
    let per_group = (segment_bytes / 3 / PAYLOAD).max(1);
    let mut expected = Vec::new();
    let mut bounds = vec![boundary().await];
    for g in 0..GROUPS {
        let rows: Vec<(i32, String)> = (0..per_group).map(|i| row_of(g, i)).collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(id, n)| (*id, n.as_str(), "eu")).collect();
        append(&table, &refs).await;
        bounds.push(boundary().await);
        expected.extend(rows.into_iter().map(|(id, n)| (id, n, "eu".to_string())));
    }
    // one bucket, one writer at a time: row k of the writes is at offset k
    let in_offset_order: Vec<i32> = expected.iter().map(|r| r.0).collect();
    expected.sort();
    let total = (GROUPS * per_group) as i64;
    let written = started.elapsed();

    let remote_segments = wait_until_tiered(&conn, &table, &path).await;
    let tiered = started.elapsed();
    let first_local = first_local_offset(&conn, &table, total).await;
    eprintln!(
        "{path}: {total} rows in {GROUPS} groups written in {written:?}; offset 0 remote \
         ({remote_segments} segments listed) after {tiered:?}; offsets from {first_local} local"
    );
    // the newest rows are still in the local log: reads cross from remote to local segments
    assert!(
        first_local > 0 && first_local < total,
        "first local offset {first_local} of {total}"
    );
    let group_ids =
        |g: usize| -> Vec<i32> { (0..per_group).map(|i| row_of(g, i).0).collect::<Vec<_>>() };
    let all_ids: Vec<i32> = expected.iter().map(|r| r.0).collect();

    // full scan: every row, whole
    let scanned = table.scan().collect().await.unwrap();
    let got = triples(&scanned);
    assert_eq!(got.len(), expected.len(), "full scan row count");
    assert!(
        got == expected,
        "the full scan's rows differ from those written"
    );
    assert_eq!(table.scan().count().await.unwrap(), total as u64);
    // projected scan: remote segments hold whole rows, the client projects them
    let names = table.scan().project(&["name"]).collect().await.unwrap();
    assert!(names.iter().all(|b| b.num_columns() == 1));
    let mut got_names: Vec<String> = names
        .iter()
        .flat_map(|b| {
            let s = b.column(0).as_string::<i32>();
            (0..s.len())
                .map(|i| s.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    got_names.sort();
    let mut want_names: Vec<String> = expected.iter().map(|r| r.1.clone()).collect();
    want_names.sort();
    assert!(got_names == want_names, "the projected scan's names differ");

    // subscription from earliest: every row once, at the offset it was written to
    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    let mut seen: Vec<(i64, i32)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < all_ids.len() && Instant::now() < deadline {
        for b in sub.poll(Duration::from_millis(200)).await.unwrap() {
            let batch_ids = b
                .batch
                .column_by_name("id")
                .unwrap()
                .as_primitive::<arrow_array::types::Int32Type>()
                .values()
                .to_vec();
            seen.extend(b.offsets().into_iter().zip(batch_ids));
        }
    }
    let want_seen: Vec<(i64, i32)> = (0i64..).zip(in_offset_order.iter().copied()).collect();
    assert_eq!(
        seen.len(),
        want_seen.len(),
        "rows the subscription returned"
    );
    assert!(
        seen == want_seen,
        "the subscription's (offset, id) pairs differ from those written"
    );

    // every group's time window (remote ones, local ones, the one where they meet), and one
    // from the second group to the second to last
    for g in 0..GROUPS {
        let got = ids(&table
            .scan()
            .between(bounds[g], Some(TimePoint::EpochMillis(bounds[g + 1])))
            .collect()
            .await
            .unwrap());
        assert!(
            got == group_ids(g),
            "time window of group {g}: {} rows",
            got.len()
        );
    }
    let wide = ids(&table
        .scan()
        .between(bounds[1], Some(TimePoint::EpochMillis(bounds[GROUPS - 1])))
        .collect()
        .await
        .unwrap());
    let want: Vec<i32> = (1..GROUPS - 1).flat_map(group_ids).collect();
    assert!(wide == want, "wide time window: {} rows", wide.len());

    // ListOffsets: earliest is the remote log's start, latest the end
    let admin = conn.admin();
    let earliest = admin
        .list_offsets(&path, None, &[0], OffsetSpec::Earliest)
        .await
        .unwrap();
    assert_eq!(earliest[&0], 0);
    let latest = admin
        .list_offsets(&path, None, &[0], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(latest[&0], total);
    eprintln!("{path}: all reads checked, {:?} in all", started.elapsed());
    conn.close().await;
}
