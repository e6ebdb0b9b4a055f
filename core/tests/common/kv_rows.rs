//! The `k INT` → `v STRING` primary-key tables of the KV snapshot tests: created, upserted,
//! deleted from, and read back as a key → value map. Used by `read_optimized.rs`, the Paimon
//! lake tests (`lake_paimon.rs`) and by
//! riverlet-server's `kv_snapshots_rocksdb.rs` with `#[path = ".../common/kv_rows.rs"] mod kv_rows;`.
#![allow(dead_code)]

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::RecordBatch;
use riverlet::client::{Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;

/// Creates `d.{name}` (and the database `d`) with `buckets` buckets and returns it.
pub async fn pk_table(conn: &Connection, name: &str, buckets: i32) -> Table {
    pk_table_with(conn, name, buckets, &[]).await
}

/// [`pk_table`] with table `properties`.
pub async fn pk_table_with(
    conn: &Connection,
    name: &str,
    buckets: i32,
    properties: &[(&str, &str)],
) -> Table {
    let path = TablePath::new("d", name);
    let _ = conn.admin().create_database("d", true).await;
    let schema = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string())
        .primary_key(["k"])
        .build()
        .unwrap();
    let mut d =
        TableDescriptor::builder(schema).distributed_by(Some(buckets), Vec::<String>::new());
    for (k, v) in properties {
        d = d.property(*k, *v);
    }
    let d = d.build().unwrap();
    conn.admin().create_table(&path, &d, false).await.unwrap();
    conn.table(&path).await.unwrap()
}

/// Upserts `rows` and waits until they are acknowledged.
pub async fn upsert(table: &Table, rows: &[(i32, &str)]) {
    let w = table.new_upsert_writer(None).unwrap();
    let rows: Vec<Vec<Datum>> = rows
        .iter()
        .map(|(k, v)| vec![Datum::Int(*k), Datum::String(v.to_string())])
        .collect();
    w.upsert_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

/// Deletes `keys` and waits until the deletes are acknowledged.
pub async fn delete(table: &Table, keys: &[i32]) {
    let w = table.new_upsert_writer(None).unwrap();
    let rows: Vec<Vec<Datum>> = keys
        .iter()
        .map(|k| vec![Datum::Int(*k), Datum::Null])
        .collect();
    w.delete_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

/// The rows of `batches` as key → value; a key seen twice fails the test.
pub fn rows_of(batches: &[RecordBatch]) -> BTreeMap<i32, String> {
    let mut out = BTreeMap::new();
    for b in batches {
        let k = b.column_by_name("k").unwrap().as_primitive::<Int32Type>();
        let v = b.column_by_name("v").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            assert!(
                out.insert(k.value(i), v.value(i).to_string()).is_none(),
                "key {} twice",
                k.value(i)
            );
        }
    }
    out
}

/// The map `rows_of` should return for `pairs`.
pub fn expected(pairs: &[(i32, &str)]) -> BTreeMap<i32, String> {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}
