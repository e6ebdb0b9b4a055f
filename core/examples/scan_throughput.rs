//! Loads a table of generated rows, or scans a whole table and prints how long each scan took —
//! through `riverlet::blocking`, the facade every binding calls. benches/jvm/run.sh compares
//! these scans with the same scans through the Java API to show the cost of the JNI boundary.
//!
//! ```text
//! cargo run --release -p riverlet --example scan_throughput -- load localhost:9123 bench.t 10000000
//! cargo run --release -p riverlet --example scan_throughput -- scan localhost:9123 bench.t 5
//! ```
//! `scan` prints one JSON line per run: `{"run": i, "rows": n, "bytes": b, "seconds": s}`.
//!
//! `decode <bootstrap> <db.table> <runs> <tablet-dir>` is the decode ceiling of benches/run.py:
//! it reads the table's log segments (`<tablet-dir>/*/log/*.log` of a `riverlet serve` data
//! dir: the record bytes a full scan fetches) into memory once, then checks and decodes every
//! batch (CRC-32C, ZSTD, Arrow IPC) on all cores with no network, `runs` times, once keeping
//! every decoded batch until the end of the run and once dropping each, with the decoded
//! batches placed as the core places those of a read into a table and of a streaming read
//! (`BatchMemory`). One JSON line per run and mode.
//! With only a bootstrap address (as tests/run-examples.sh runs every example) it loads 20,000
//! rows into a new table, scans it once and checks that every row came back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{
    BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::SchemaRef;
use riverlet::blocking::Connection;
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::record::batch_memory::{row_bytes, BatchMemory, BlockCarver, BlockPool};
use riverlet::record::{LogBatchIter, LogRecordBatch};
use riverlet::scan::ReadRequest;

const BATCH_ROWS: usize = 8192;
const CATEGORIES: [&str; 8] = [
    "books", "games", "garden", "music", "outdoor", "shoes", "tools", "toys",
];

fn usage() -> riverlet::Error {
    riverlet::Error::invalid(
        "usage: scan_throughput load <bootstrap> <db.table> <rows> | scan <bootstrap> <db.table> <runs> \
         | decode <bootstrap> <db.table> <runs> <tablet-dir>",
    )
}

fn main() -> riverlet::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [bootstrap] = args.as_slice() {
        return self_check(bootstrap);
    }
    if let [cmd, bootstrap, table, n, dir] = args.as_slice() {
        if cmd == "decode" {
            let runs = n
                .parse()
                .map_err(|_| riverlet::Error::invalid(format!("not a count: '{n}'")))?;
            let conn = Connection::connect_to(bootstrap)?;
            let table = conn.table(&TablePath::parse(table)?)?;
            return decode(&table.arrow_schema(), std::path::Path::new(dir), runs);
        }
    }
    let [cmd, bootstrap, table, n] = args.as_slice() else {
        return Err(usage());
    };
    let n: usize = n
        .parse()
        .map_err(|_| riverlet::Error::invalid(format!("not a count: '{n}'")))?;
    let conn = Connection::connect_to(bootstrap)?;
    let path = TablePath::parse(table)?;
    match cmd.as_str() {
        "load" => load(&conn, &path, n),
        "scan" => scan(&conn, &path, n),
        _ => Err(usage()),
    }
}

/// Loads a small table and scans it once: every row must come back.
fn self_check(bootstrap: &str) -> riverlet::Result<()> {
    const ROWS: usize = 20_000;
    let conn = Connection::connect_to(bootstrap)?;
    let path = TablePath::new(
        "examples",
        format!("scan_throughput_{}", std::process::id()),
    );
    load(&conn, &path, ROWS)?;
    let table = conn.table(&path)?;
    let mut rows = 0;
    for batch in table.read(&ReadRequest::default())? {
        rows += batch?.num_rows();
    }
    if rows != ROWS {
        return Err(riverlet::Error::invalid(format!(
            "scanned {rows} rows of {path:?}, wrote {ROWS}"
        )));
    }
    scan(&conn, &path, 1)
}

/// Creates the table (4 buckets, Fluss's default ZSTD log compression) and appends `rows`
/// deterministic rows in 8192-row batches.
fn load(conn: &Connection, path: &TablePath, rows: usize) -> riverlet::Result<()> {
    let schema = Schema::builder()
        .column("id", DataType::bigint())
        .column("event_time", DataType::timestamp(6))
        .column("user_id", DataType::int())
        .column("amount", DataType::double())
        .column("category", DataType::string())
        .column("flag", DataType::boolean())
        .build()?;
    let admin = conn.admin();
    admin.create_database(&path.database, true)?;
    let descriptor = TableDescriptor::builder(schema)
        .distributed_by(Some(4), Vec::<String>::new())
        .build()?;
    admin.create_table(path, &descriptor, false)?;
    let table = conn.table(path)?;
    let writer = table.new_append_writer()?;
    let arrow_schema = table.arrow_schema();
    let mut start = 0usize;
    while start < rows {
        let len = BATCH_ROWS.min(rows - start);
        let ids = (start..start + len).map(|i| i as i64);
        let batch = RecordBatch::try_new(
            arrow_schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(TimestampMicrosecondArray::from_iter_values(
                    ids.clone().map(|i| 1_767_225_600_000_000 + i * 1_000),
                )),
                Arc::new(Int32Array::from_iter_values(
                    ids.clone().map(|i| (i.wrapping_mul(7919) % 100_000) as i32),
                )),
                Arc::new(Float64Array::from_iter_values(
                    ids.clone().map(|i| (i % 10_000) as f64 * 0.25),
                )),
                Arc::new(StringArray::from_iter_values(
                    ids.clone().map(|i| CATEGORIES[(i % 8) as usize]),
                )),
                Arc::new(BooleanArray::from_iter(ids.map(|i| Some(i % 3 == 0)))),
            ],
        )?;
        // Waiting happens once, at the flush: the writer batches and pipelines by itself.
        drop(writer.append(&batch)?);
        start += len;
    }
    writer.flush()?;
    println!("{{\"loaded\": {rows}}}");
    Ok(())
}

/// Reads the whole table `runs` times, each read to its last batch.
fn scan(conn: &Connection, path: &TablePath, runs: usize) -> riverlet::Result<()> {
    let table = conn.table(path)?;
    for run in 0..runs {
        let t0 = Instant::now();
        let mut rows = 0usize;
        let mut bytes = 0usize;
        for batch in table.read(&ReadRequest::default())? {
            let batch = batch?;
            rows += batch.num_rows();
            bytes += row_bytes(&batch);
        }
        let seconds = t0.elapsed().as_secs_f64();
        println!(
            "{{\"run\": {run}, \"rows\": {rows}, \"bytes\": {bytes}, \"seconds\": {seconds:.6}}}"
        );
    }
    Ok(())
}

/// The record bytes of every `*.log` segment under `dir/*/log/`, split into log batches.
fn segment_batches(dir: &std::path::Path) -> riverlet::Result<Vec<Vec<u8>>> {
    let io = |e: std::io::Error| riverlet::Error::invalid(format!("{}: {e}", dir.display()));
    let mut files = Vec::new();
    for bucket in std::fs::read_dir(dir).map_err(io)? {
        let log = bucket.map_err(io)?.path().join("log");
        let Ok(entries) = std::fs::read_dir(&log) else {
            continue;
        };
        for f in entries {
            let f = f.map_err(io)?.path();
            if f.extension().is_some_and(|e| e == "log") {
                files.push(f);
            }
        }
    }
    let mut batches = Vec::new();
    for f in files {
        let data = std::fs::read(&f).map_err(io)?;
        let mut it = LogBatchIter::new(&data);
        for batch in it.by_ref() {
            batches.push(batch?.as_bytes().to_vec());
        }
    }
    if batches.is_empty() {
        return Err(riverlet::Error::invalid(format!(
            "no log batches under {}/*/log/*.log",
            dir.display()
        )));
    }
    Ok(batches)
}

/// Decodes every batch on all cores, `runs` times per mode; see the module doc.
fn decode(schema: &SchemaRef, dir: &std::path::Path, runs: usize) -> riverlet::Result<()> {
    let batches = segment_batches(dir)?;
    let wire: usize = batches.iter().map(Vec::len).sum();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    for run in 0..runs {
        for keep in [true, false] {
            let next = AtomicUsize::new(0);
            // As the core's reads that keep every batch do (see BatchMemory).
            let (carver, pool) = (BlockCarver::default(), BlockPool::default());
            let memory = if keep {
                BatchMemory::Blocks(&carver)
            } else {
                BatchMemory::Pooled(&pool)
            };
            let t0 = Instant::now();
            let per_thread: Vec<riverlet::Result<(usize, usize, Vec<RecordBatch>)>> =
                std::thread::scope(|s| {
                    let workers: Vec<_> = (0..threads)
                        .map(|_| {
                            s.spawn(|| {
                                let (mut rows, mut bytes, mut kept) = (0, 0, Vec::new());
                                loop {
                                    let i = next.fetch_add(1, Ordering::Relaxed);
                                    let Some(raw) = batches.get(i) else {
                                        return Ok((rows, bytes, kept));
                                    };
                                    let batch = LogRecordBatch::new(raw)?;
                                    batch.ensure_valid()?;
                                    let (_, decoded) = batch.arrow_records_in(schema, memory)?;
                                    rows += decoded.num_rows();
                                    bytes += row_bytes(&decoded);
                                    if keep {
                                        kept.push(decoded);
                                    }
                                }
                            })
                        })
                        .collect();
                    workers
                        .into_iter()
                        .map(|w| {
                            w.join().unwrap_or_else(|_| {
                                Err(riverlet::Error::internal("a decoding thread panicked"))
                            })
                        })
                        .collect()
                });
            let seconds = t0.elapsed().as_secs_f64();
            let (mut rows, mut bytes) = (0, 0);
            for r in per_thread {
                let (r, b, _kept) = r?;
                rows += r;
                bytes += b;
            }
            let mode = if keep { "keep" } else { "drop" };
            println!(
                "{{\"run\": {run}, \"mode\": \"{mode}\", \"threads\": {threads}, \"batches\": {}, \
                 \"wire_bytes\": {wire}, \"rows\": {rows}, \"bytes\": {bytes}, \"seconds\": {seconds:.6}}}",
                batches.len()
            );
        }
    }
    Ok(())
}
