//! Loads a table of generated rows, or scans a whole table and prints how long each scan took —
//! through `riverlet::blocking`, the facade every binding calls. benches/jvm/run.sh compares
//! these scans with the same scans through the Java API to show the cost of the JNI boundary.
//!
//! ```text
//! cargo run --release -p riverlet --example scan_throughput -- load localhost:9123 bench.t 10000000
//! cargo run --release -p riverlet --example scan_throughput -- scan localhost:9123 bench.t 5
//! ```
//! `scan` prints one JSON line per run: `{"run": i, "rows": n, "bytes": b, "seconds": s}`.
//! With only a bootstrap address (as tests/run-examples.sh runs every example) it loads 20,000
//! rows into a new table, scans it once and checks that every row came back.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{
    BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use riverlet::blocking::Connection;
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::scan::ReadRequest;

const BATCH_ROWS: usize = 8192;
const CATEGORIES: [&str; 8] = [
    "books", "games", "garden", "music", "outdoor", "shoes", "tools", "toys",
];

fn usage() -> riverlet::Error {
    riverlet::Error::invalid(
        "usage: scan_throughput load <bootstrap> <db.table> <rows> | scan <bootstrap> <db.table> <runs>",
    )
}

fn main() -> riverlet::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [bootstrap] = args.as_slice() {
        return self_check(bootstrap);
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
            bytes += batch.get_array_memory_size();
        }
        let seconds = t0.elapsed().as_secs_f64();
        println!(
            "{{\"run\": {run}, \"rows\": {rows}, \"bytes\": {bytes}, \"seconds\": {seconds:.6}}}"
        );
    }
    Ok(())
}
