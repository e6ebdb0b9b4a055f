//! Lake reads through SQL (the DataFusion provider, `riverlet sql` and the Flight SQL service,
//! whose plain reads the core answers per bucket) against an embedded
//! server tiering to Iceberg and to Paimon: `"t$lake"` (the lake only), `"t$lake$snapshots"`
//! (one row per commit, in the lake format's own columns) and the union read of `t`; over
//! Paimon also a primary-key table, whose union read is the lake's merged state with the later
//! changes of the log winning by key (deletes included). Expected rows come from what the test
//! wrote.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use crate::common;

use arrow_flight::sql::client::FlightSqlServiceClient;
use common::Env;
use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::record_batch::RecordBatch;
use futures::TryStreamExt;
use riverlet::client::Table;
use riverlet::metadata::{parse_columns, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet_sql::flight::{Connector, FlussFlightSql};
use riverlet_sql::SqlOptions;

const SQL: &str = env!("CARGO_BIN_EXE_riverlet-sql");

/// Trade ids of the rounds: 1..=20 (committed), 21..=33 (committed), 34..=40 (log only).
const ROUND_ENDS: [i64; 3] = [20, 33, 40];
const LAKE_END: i64 = ROUND_ENDS[1];
const ALL_END: i64 = ROUND_ENDS[2];

fn side(id: i64) -> &'static str {
    if id % 3 == 0 {
        "SELL"
    } else {
        "BUY"
    }
}

fn amount(id: i64) -> i32 {
    (id * 37 % 101) as i32
}

/// `side,count,sum` lines of the trades `1..=last`, by side.
fn totals_by_side(last: i64) -> Vec<String> {
    ["BUY", "SELL"]
        .iter()
        .map(|s| {
            let ids: Vec<i64> = (1..=last).filter(|id| side(*id) == *s).collect();
            let sum: i64 = ids.iter().map(|id| i64::from(amount(*id))).sum();
            format!("{s},{},{sum}", ids.len())
        })
        .collect()
}

fn ids(range: std::ops::RangeInclusive<i64>) -> Vec<String> {
    range.map(|id| id.to_string()).collect()
}

/// The rows of a statement as CSV lines without a header.
async fn rows(env: &Env, sql: &str) -> Vec<String> {
    let batches = match env.ctx.sql(sql).await {
        Ok(df) => df.collect().await,
        Err(e) => Err(e),
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
    csv_lines(&batches)
}

/// The rows of a statement run through the Flight SQL service (a client of its own, every
/// endpoint fetched), as sorted CSV lines: a plain read of a table is one endpoint per bucket.
async fn flight_rows(env: &Env, sql: &str) -> Vec<String> {
    let conn = env.conn.clone();
    let connector: Connector = Arc::new(move |_| {
        let conn = conn.clone();
        Box::pin(async move { Ok(conn) })
    });
    let service = FlussFlightSql::new(connector, SqlOptions::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service.into_server())
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = FlightSqlServiceClient::new(channel);
    let info = client
        .execute(sql.to_string(), None)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut batches: Vec<RecordBatch> = Vec::new();
    for endpoint in info.endpoint {
        let stream = client.do_get(endpoint.ticket.unwrap()).await.unwrap();
        batches.extend(stream.try_collect::<Vec<_>>().await.unwrap());
    }
    server.abort();
    let mut lines = csv_lines(&batches);
    lines.sort();
    lines
}

/// `batches` as CSV lines without a header.
fn csv_lines(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    {
        let mut w = WriterBuilder::new().with_header(false).build(&mut out);
        for b in batches {
            w.write(b).unwrap();
        }
    }
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

async fn create(env: &Env, name: &str, columns: &str, key: Option<&str>, buckets: i32) -> Table {
    let mut columns = parse_columns(columns).unwrap();
    let mut schema = Schema::builder();
    if let Some(key) = key {
        for c in columns.iter_mut().filter(|c| c.name == key) {
            c.data_type = c.data_type.clone().not_null();
        }
        schema = schema.from_columns(columns).primary_key([key]);
    } else {
        schema = schema.from_columns(columns);
    }
    let descriptor = TableDescriptor::builder(schema.build().unwrap())
        .distributed_by(Some(buckets), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap();
    let path = TablePath::new("fluss", name);
    env.conn
        .admin()
        .create_table(&path, &descriptor, false)
        .await
        .unwrap();
    env.conn.table(&path).await.unwrap()
}

async fn lake_views_and_union_read_of_a_log_table(format: &str) {
    let env = Env::with_lake(format).await;
    let trades = create(
        &env,
        "trades",
        "trade_id BIGINT, side STRING, amount INT",
        None,
        3,
    )
    .await;
    let mut first = 1;
    for (round, end) in ROUND_ENDS.iter().enumerate() {
        let w = trades.new_append_writer().unwrap();
        let rows: Vec<Vec<Datum>> = (first..=*end)
            .map(|id| {
                vec![
                    Datum::BigInt(id),
                    Datum::String(side(id).to_string()),
                    Datum::Int(amount(id)),
                ]
            })
            .collect();
        w.append_rows(&rows).await.unwrap();
        w.flush().await.unwrap();
        if round < 2 {
            env.commit_lake();
        }
        first = end + 1;
    }

    // $lake: the two commits' rows, each once, with the bucket and offset they had in Fluss.
    let lake = "\"trades$lake\"";
    assert_eq!(
        rows(
            &env,
            &format!("SELECT side, count(*), sum(amount) FROM {lake} GROUP BY side ORDER BY side")
        )
        .await,
        totals_by_side(LAKE_END)
    );
    assert_eq!(
        rows(
            &env,
            &format!("SELECT trade_id FROM {lake} ORDER BY trade_id")
        )
        .await,
        ids(1..=LAKE_END)
    );
    assert_eq!(
        rows(
            &env,
            &format!(
                "SELECT count(*) FROM (SELECT DISTINCT __bucket, __offset FROM {lake} \
                 WHERE __bucket BETWEEN 0 AND 2 AND __timestamp IS NOT NULL)"
            )
        )
        .await,
        [LAKE_END.to_string()]
    );

    // The union read: every trade once, the log-only round included.
    assert_eq!(
        rows(&env, "SELECT trade_id FROM trades ORDER BY trade_id").await,
        ids(1..=ALL_END)
    );
    assert_eq!(
        rows(
            &env,
            "SELECT side, count(*), sum(amount) FROM trades GROUP BY side ORDER BY side"
        )
        .await,
        totals_by_side(ALL_END)
    );

    // $lake$snapshots: one row per commit, in the lake format's own columns.
    let snaps = "\"trades$lake$snapshots\"";
    let expected_snapshots = match format {
        // Iceberg: two appends, the second's parent the first.
        "iceberg" => {
            assert_eq!(
                rows(
                    &env,
                    &format!(
                        "SELECT count(*) FROM {snaps} a JOIN {snaps} b \
                         ON b.parent_id = a.snapshot_id WHERE a.parent_id IS NULL"
                    )
                )
                .await,
                ["1"]
            );
            format!("SELECT operation FROM {snaps}")
        }
        // Paimon numbers a table's snapshots from 1; each round appends the rows written
        // since the previous one.
        _ => {
            assert_eq!(
                rows(
                    &env,
                    &format!(
                        "SELECT snapshot_id, delta_record_count, total_record_count FROM {snaps} \
                         ORDER BY snapshot_id"
                    )
                )
                .await,
                [
                    format!("1,{0},{0}", ROUND_ENDS[0]),
                    format!("2,{},{LAKE_END}", LAKE_END - ROUND_ENDS[0])
                ]
            );
            format!("SELECT commit_kind FROM {snaps}")
        }
    };
    let append = if format == "iceberg" {
        "append"
    } else {
        "APPEND"
    };
    assert_eq!(rows(&env, &expected_snapshots).await, [append, append]);

    // Flight SQL answers both reads as plain reads of the core (the table one endpoint per
    // bucket, each bucket's lake rows and log after them).
    let mut all: Vec<String> = (1..=ALL_END)
        .map(|id| format!("{id},{},{}", side(id), amount(id)))
        .collect();
    all.sort();
    assert_eq!(flight_rows(&env, "SELECT * FROM trades").await, all);
    let mut committed: Vec<String> = (1..=LAKE_END)
        .map(|id| format!("{id},{},{}", side(id), amount(id)))
        .collect();
    committed.sort();
    assert_eq!(
        flight_rows(&env, "SELECT trade_id, side, amount FROM \"trades$lake\"").await,
        committed
    );

    // `riverlet sql` reads the same views.
    let out = Command::new(SQL)
        .args([
            "--bootstrap",
            &env.bootstrap(),
            "--format",
            "csv",
            "SELECT (SELECT count(*) FROM \"trades$lake\") AS lake, \
             (SELECT count(*) FROM trades) AS all_rows, \
             (SELECT count(*) FROM \"trades$lake$snapshots\") AS commits",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("lake,all_rows,commits\n{LAKE_END},{ALL_END},2\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_lake_views_and_union_read_of_a_log_table() {
    lake_views_and_union_read_of_a_log_table("iceberg").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_lake_views_and_union_read_of_a_log_table() {
    lake_views_and_union_read_of_a_log_table("paimon").await;
}

async fn upsert(table: &Table, rows: &[(i64, &str, i32)]) {
    let w = table.new_upsert_writer(None).unwrap();
    let rows: Vec<Vec<Datum>> = rows
        .iter()
        .map(|(id, name, balance)| {
            vec![
                Datum::BigInt(*id),
                Datum::String(name.to_string()),
                Datum::Int(*balance),
            ]
        })
        .collect();
    w.upsert_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

async fn delete(table: &Table, ids: &[i64]) {
    let w = table.new_upsert_writer(None).unwrap();
    let rows: Vec<Vec<Datum>> = ids
        .iter()
        .map(|id| vec![Datum::BigInt(*id), Datum::Null, Datum::Null])
        .collect();
    w.delete_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

/// Removes the data files (not the metadata) of Paimon table `fluss.<table>` under
/// `warehouse`: Paimon keeps them in the table's `bucket-N` directories.
fn remove_paimon_data_files(warehouse: &Path, table: &str) -> usize {
    let dir = warehouse.join("fluss.db").join(table);
    let mut removed = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let bucket = e.unwrap().path();
        if bucket.is_dir()
            && bucket
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("bucket-"))
        {
            for f in std::fs::read_dir(&bucket).unwrap() {
                std::fs::remove_file(f.unwrap().path()).unwrap();
                removed += 1;
            }
        }
    }
    removed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_primary_key_union_read_lets_the_log_win_by_key() {
    let env = Env::with_lake("paimon").await;
    let accounts = create(
        &env,
        "accounts",
        "id BIGINT, name STRING, balance INT",
        Some("id"),
        2,
    )
    .await;
    upsert(
        &accounts,
        &[(1, "a1", 10), (2, "a2", 20), (3, "a3", 30), (4, "a4", 40)],
    )
    .await;
    upsert(&accounts, &[(2, "b2", 21)]).await;
    delete(&accounts, &[3]).await;
    env.commit_lake();
    // The lake's merged state at the commit: one row per key, the update and delete applied.
    let lake = "SELECT id, name, balance FROM \"accounts$lake\" ORDER BY id";
    let at_commit = ["1,a1,10", "2,b2,21", "4,a4,40"];
    assert_eq!(rows(&env, lake).await, at_commit);

    // Changes after the commit are only in the log; they win by key, a delete removes its key.
    upsert(&accounts, &[(1, "c1", 11), (5, "c5", 50), (3, "c3", 31)]).await;
    delete(&accounts, &[4]).await;
    let union = "SELECT id, name, balance FROM accounts ORDER BY id";
    assert_eq!(
        rows(&env, union).await,
        ["1,c1,11", "2,b2,21", "3,c3,31", "5,c5,50"]
    );
    assert_eq!(rows(&env, "SELECT count(*) FROM accounts").await, ["4"]);
    assert_eq!(
        flight_rows(&env, "SELECT * FROM accounts").await,
        ["1,c1,11", "2,b2,21", "3,c3,31", "5,c5,50"]
    );
    assert_eq!(rows(&env, lake).await, at_commit);
    assert_eq!(
        rows(&env, "SELECT count(*) FROM \"accounts$lake$snapshots\"").await,
        ["1"]
    );

    // The union read takes the keys the log did not change from the lake: without the lake's
    // data files it fails (the log alone would still give every row).
    assert!(remove_paimon_data_files(&env.lake_warehouse(), "accounts") > 0);
    let err = env
        .try_query(union)
        .await
        .expect_err("the union read reads the lake's (removed) data files");
    assert!(err.to_string().contains("accounts"), "{err}");
}
