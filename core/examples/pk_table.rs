//! The seed scenario's primary-key table `seed.pk_table`: five orders upserted, three upserted
//! again (two updates and one insert), a partial update of `amount`, and a delete.
//!
//! `cargo run -p riverlet --example pk_table -- localhost:9123`

use riverlet::client::{ClientConfig, Connection, OffsetSpec};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;

fn order(o: i64, i: i64, a: i32, addr: &str) -> Vec<Datum> {
    vec![
        Datum::BigInt(o),
        Datum::BigInt(i),
        Datum::Int(a),
        Datum::String(addr.into()),
    ]
}

#[tokio::main]
async fn main() -> riverlet::Result<()> {
    let bootstrap = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "localhost:9123".to_string());
    let conn = Connection::connect(ClientConfig::new(bootstrap)).await?;
    let admin = conn.admin();
    admin.create_database("seed", true).await?;

    let schema = Schema::builder()
        .column("order_id", DataType::bigint().not_null())
        .column("item_id", DataType::bigint())
        .column("amount", DataType::int())
        .column("address", DataType::string())
        .primary_key(["order_id"])
        .build()?;
    let path = TablePath::new("seed", "pk_table");
    let descriptor = TableDescriptor::builder(schema)
        .distributed_by(Some(1), Vec::<String>::new())
        .build()?;
    admin.create_table(&path, &descriptor, true).await?;
    let table = conn.table(&path).await?;

    let writer = table.new_upsert_writer(None)?;
    writer
        .upsert_rows(&[
            order(600, 21, 601, "addr1"),
            order(700, 22, 602, "addr2"),
            order(800, 23, 603, "addr3"),
            order(900, 24, 604, "addr4"),
            order(1000, 25, 605, "addr5"),
        ])
        .await?;
    writer
        .upsert_rows(&[
            order(700, 220, 602, "addr2"),
            order(900, 240, 604, "addr4"),
            order(1100, 260, 606, "addr6"),
        ])
        .await?;

    // Partial update: only `amount` changes for order 600 (the key must be included).
    let partial = table.new_upsert_writer(Some(&["order_id", "amount"]))?;
    partial
        .upsert_row(&[
            Datum::BigInt(600),
            Datum::Null,
            Datum::Int(650),
            Datum::Null,
        ])
        .await?;

    // Delete by primary key.
    writer.delete_row(&[Datum::BigInt(1000)]).await?;
    writer.close().await?;
    partial.close().await?;

    let offsets = admin
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .await?;
    println!("{path}: changelog end offsets {offsets:?}");

    // The latest view: every key once, with its newest value (order 1000 deleted).
    let latest = table.scan().collect().await?;
    println!("{}", arrow_cast::pretty::pretty_format_batches(&latest)?);
    // The seed read after the upsert: projection + filter on the latest view.
    let filtered = table
        .scan()
        .project(&["order_id", "item_id", "address"])
        .filter_text("amount <= 603")
        .collect()
        .await?;
    println!("{}", arrow_cast::pretty::pretty_format_batches(&filtered)?);
    // The changelog the writes produced (+I, -U/+U, -D), with offsets and commit times.
    let changes = table.scan().changelog(true).collect().await?;
    println!("{}", arrow_cast::pretty::pretty_format_batches(&changes)?);
    conn.close().await;
    Ok(())
}
