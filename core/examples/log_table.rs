//! The seed scenario's log table: create `seed.log_table`, append five orders as an Arrow batch
//! and as rows, show the offsets per bucket, then read it back with projection and filters.
//!
//! Run against a server (the embedded one or Apache Fluss):
//! `cargo run -p riverlet --example log_table -- localhost:9123`

use std::sync::Arc;

use arrow_array::{Int32Array, Int64Array, RecordBatch, StringArray};
use riverlet::client::{ClientConfig, Connection, OffsetSpec};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;

#[tokio::main]
async fn main() -> riverlet::Result<()> {
    let bootstrap = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "localhost:9123".to_string());
    let conn = Connection::connect(ClientConfig::new(bootstrap)).await?;
    let admin = conn.admin();
    admin.create_database("seed", true).await?;

    let schema = Schema::builder()
        .column("order_id", DataType::bigint())
        .column("item_id", DataType::bigint())
        .column("amount", DataType::int())
        .column("address", DataType::string())
        .build()?;
    let path = TablePath::new("seed", "log_table");
    admin
        .create_table(&path, &TableDescriptor::builder(schema).build()?, true)
        .await?;

    let table = conn.table(&path).await?;
    let writer = table.new_append_writer()?;
    // Three rows as one Arrow batch with the table's schema...
    let batch = RecordBatch::try_new(
        writer.schema().clone(),
        vec![
            Arc::new(Int64Array::from(vec![600, 700, 800])),
            Arc::new(Int64Array::from(vec![21, 22, 23])),
            Arc::new(Int32Array::from(vec![601, 602, 603])),
            Arc::new(StringArray::from(vec!["addr1", "addr2", "addr3"])),
        ],
    )?;
    let first = writer.append_batch(&batch);
    // ...and two as rows.
    let second = writer.append_rows(&[
        vec![
            Datum::BigInt(900),
            Datum::BigInt(24),
            Datum::Int(604),
            Datum::String("addr4".into()),
        ],
        vec![
            Datum::BigInt(1000),
            Datum::BigInt(25),
            Datum::Int(605),
            Datum::String("addr5".into()),
        ],
    ]);
    first.await?;
    second.await?;
    writer.close().await?;

    let offsets = admin
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .await?;
    println!("{path}: latest offsets per bucket {offsets:?}");

    // The seed reads: everything, a projection, a filter, and both together.
    let reads: [(&[&str], Option<&str>); 4] = [
        (&[], None),
        (&["address", "item_id"], None),
        (&[], Some("amount IN (602, 604)")),
        (&["order_id", "item_id"], Some("order_id >= 900")),
    ];
    for (columns, filter) in reads {
        let mut scan = table.scan();
        if !columns.is_empty() {
            scan = scan.project(columns);
        }
        if let Some(f) = filter {
            scan = scan.filter_text(f);
        }
        let batches = scan.collect().await?;
        println!(
            "columns {columns:?}, filter {filter:?}\n{}",
            arrow_cast::pretty::pretty_format_batches(&batches)?
        );
    }
    conn.close().await;
    Ok(())
}
