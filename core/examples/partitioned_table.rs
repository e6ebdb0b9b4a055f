//! The seed scenario's partitioned log table `seed.part_log_table`, partitioned by `dt`: rows are
//! routed to their partition by value, and missing partitions are created on write. Uses the
//! blocking facade (what the bindings call).
//!
//! `cargo run -p riverlet --example partitioned_table -- localhost:9123`

use riverlet::blocking::{Connection, ReadRequest};
use riverlet::client::{ClientConfig, OffsetSpec};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;

fn main() -> riverlet::Result<()> {
    let bootstrap = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "localhost:9123".to_string());
    // A write to a partition that does not exist yet creates it (Fluss's default,
    // client.writer.dynamic-create-partition.enabled).
    let conn = Connection::connect(ClientConfig::new(bootstrap))?;
    let admin = conn.admin();
    admin.create_database("seed", true)?;

    let schema = Schema::builder()
        .column("order_id", DataType::bigint())
        .column("item_id", DataType::bigint())
        .column("amount", DataType::int())
        .column("address", DataType::string())
        .column("dt", DataType::string())
        .build()?;
    let path = TablePath::new("seed", "part_log_table");
    let descriptor = TableDescriptor::builder(schema)
        .partitioned_by(["dt"])
        .build()?;
    admin.create_table(&path, &descriptor, true)?;

    let table = conn.table(&path)?;
    let writer = table.new_append_writer()?;
    let row = |o: i64, i: i64, a: i32, addr: &str, dt: &str| {
        vec![
            Datum::BigInt(o),
            Datum::BigInt(i),
            Datum::Int(a),
            Datum::String(addr.into()),
            Datum::String(dt.into()),
        ]
    };
    writer.append_rows(&[
        row(600, 21, 601, "addr1", "2026-01-01"),
        row(700, 22, 602, "addr2", "2026-01-01"),
        row(800, 23, 603, "addr3", "2026-01-02"),
        row(900, 24, 604, "addr4", "2026-01-02"),
        row(1000, 25, 605, "addr5", "2026-01-03"),
    ])?;
    writer.flush()?;

    for p in admin.list_partitions(&path)? {
        let offsets = admin.list_offsets(&path, Some(&p.name), &[], OffsetSpec::Latest)?;
        println!("partition {} (id {}): {offsets:?}", p.name, p.partition_id);
    }
    writer.close()?;

    // Partition filters prune partitions before any data is fetched.
    for filter in ["dt = '2026-01-01'", "dt IN ('2026-01-01', '2026-01-02')"] {
        let request = ReadRequest {
            columns: Some(vec!["order_id".into(), "address".into(), "dt".into()]),
            filter: Some(filter.into()),
            ..ReadRequest::default()
        };
        let batches = table.read(&request)?.read_all()?;
        println!(
            "WHERE {filter}\n{}",
            arrow_cast::pretty::pretty_format_batches(&batches)?
        );
    }
    conn.close()?;
    riverlet::blocking::shutdown_runtime(std::time::Duration::from_secs(1));
    Ok(())
}
