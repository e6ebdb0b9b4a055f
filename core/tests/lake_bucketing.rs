//! Keys of lake-formatted tables on the server of the test run (the embedded one by default):
//! a primary-key table whose `table.datalake.format` is paimon or iceberg gets each row in the
//! bucket that lake's bucketing gives its key, and Riverlet's point and prefix lookups find the
//! rows there. The expected buckets are golden, not Riverlet's: Paimon's come from
//! `tests/fluss-cluster/peer-lake/LakeKeyGolden.java` (Paimon's own BinaryRowWriter and
//! DefaultBucketFunction, which Fluss's PaimonKeyEncoder and PaimonBucketingFunction match), and
//! Iceberg's from the Iceberg spec's hash values (Appendix B: INT 34 hashes to 2017239379, the
//! string "iceberg" to 1210000089), taken modulo the 16 buckets. lake_bucketing_cluster.rs checks
//! the same against Apache Fluss and its Java client.

use crate::common;

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::RecordBatch;

use common::*;
use riverlet::client::Table;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::row::Datum;

const BUCKETS: i32 = 16;

fn descriptor(key: DataType, sub: bool, format: &str) -> TableDescriptor {
    let mut s = Schema::builder().column("id", key.not_null());
    if sub {
        s = s.column("sub", DataType::int().not_null());
    }
    let s = s.column("name", DataType::string());
    let (s, bucket_key) = if sub {
        (s.primary_key(["id", "sub"]), vec!["id".to_string()])
    } else {
        (s.primary_key(["id"]), vec![])
    };
    TableDescriptor::builder(s.build().unwrap())
        .distributed_by(Some(BUCKETS), bucket_key)
        .property("table.datalake.format", format)
        .build()
        .unwrap()
}

/// The bucket each changelog row of the table sits in, by the `id` column's text.
async fn buckets_of(conn: &riverlet::client::Connection, table: &Table) -> BTreeMap<String, i32> {
    let mut out = BTreeMap::new();
    for b in 0..BUCKETS {
        for batch in fetch_bucket(conn, table, None, b).await {
            for id in ids_text(&batch) {
                if let Some(other) = out.insert(id.clone(), b) {
                    assert_eq!(other, b, "id {id} in buckets {other} and {b}");
                }
            }
        }
    }
    out
}

fn ids_text(batch: &RecordBatch) -> Vec<String> {
    let c = batch.column_by_name("id").unwrap();
    match c.data_type() {
        arrow_schema::DataType::Int32 => {
            let a = c.as_primitive::<Int32Type>();
            (0..batch.num_rows())
                .map(|i| a.value(i).to_string())
                .collect()
        }
        _ => {
            let a = c.as_string::<i32>();
            (0..batch.num_rows())
                .map(|i| a.value(i).to_string())
                .collect()
        }
    }
}

async fn upsert_and_check(
    env: &TestEnv,
    name: &str,
    d: TableDescriptor,
    keys: &[(Datum, Option<i32>)],
    golden: &[(&str, i32)],
) {
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path(name), d).await;
    let writer = table.new_upsert_writer(None).unwrap();
    let rows: Vec<Vec<Datum>> = keys
        .iter()
        .map(|(k, sub)| {
            let mut r = vec![k.clone()];
            r.extend(sub.map(Datum::Int));
            r.push(Datum::from(format!("{k:?}/{sub:?}")));
            r
        })
        .collect();
    writer.upsert_rows(&rows).await.unwrap();
    writer.flush().await.unwrap();

    let found = buckets_of(&conn, &table).await;
    let expected: BTreeMap<String, i32> = golden.iter().map(|(k, b)| (k.to_string(), *b)).collect();
    assert_eq!(found, expected, "{name}: the bucket of each key");

    let lookuper = table.new_lookuper().unwrap();
    for row in &rows {
        let key: Vec<Datum> = row[..row.len() - 1].to_vec();
        let got = lookuper
            .lookup_rows(std::slice::from_ref(&key))
            .await
            .unwrap()
            .remove(0);
        assert_eq!(got.as_ref(), Some(row), "{name}: lookup of {key:?}");
    }
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn paimon_keys_sit_in_paimons_buckets() {
    let env = TestEnv::new();
    // LakeKeyGolden.java, cases int_<id>, 16 buckets.
    let golden = [("0", 11), ("1", 14), ("42", 5), ("-7", 11), ("1000", 5)];
    let keys: Vec<(Datum, Option<i32>)> = [0, 1, 42, -7, 1000]
        .into_iter()
        .map(|i| (Datum::Int(i), None))
        .collect();
    upsert_and_check(
        &env,
        "paimon_pk",
        descriptor(DataType::int(), false, "paimon"),
        &keys,
        &golden,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn paimon_prefix_lookups_find_rows_in_paimons_buckets() {
    let env = TestEnv::new();
    // The bucket key `id` alone: LakeKeyGolden.java's int_1 (14) and int_42 (5) of 16 buckets.
    let keys = [
        (Datum::Int(42), Some(0)),
        (Datum::Int(42), Some(1)),
        (Datum::Int(1), Some(0)),
    ];
    let d = descriptor(DataType::int(), true, "paimon");
    upsert_and_check(&env, "paimon_prefix", d, &keys, &[("42", 5), ("1", 14)]).await;

    let conn = env.connect().await;
    let table = conn.table(&env.path("paimon_prefix")).await.unwrap();
    let lookuper = table.new_lookuper().unwrap();
    let found = lookuper
        .prefix_lookup_rows(&[
            vec![Datum::Int(42)],
            vec![Datum::Int(1)],
            vec![Datum::Int(7)],
        ])
        .await
        .unwrap();
    let subs: Vec<Vec<Datum>> = found
        .iter()
        .map(|rows| {
            let mut s: Vec<Datum> = rows.iter().map(|r| r[1].clone()).collect();
            s.sort_by_key(|d| format!("{d:?}"));
            s
        })
        .collect();
    assert_eq!(
        subs,
        vec![
            vec![Datum::Int(0), Datum::Int(1)],
            vec![Datum::Int(0)],
            vec![]
        ]
    );
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn iceberg_keys_sit_in_icebergs_buckets() {
    let env = TestEnv::new();
    // Iceberg spec: hash(34) = 2017239379 -> bucket 3 of 16; hash("iceberg") = 1210000089 -> 9.
    upsert_and_check(
        &env,
        "iceberg_int",
        descriptor(DataType::int(), false, "iceberg"),
        &[(Datum::Int(34), None)],
        &[("34", 3)],
    )
    .await;
    upsert_and_check(
        &env,
        "iceberg_string",
        descriptor(DataType::string(), false, "iceberg"),
        &[(Datum::from("iceberg"), None)],
        &[("iceberg", 9)],
    )
    .await;
}
