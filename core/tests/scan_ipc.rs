//! `ScanBuilder::execute_ipc`: a read handed out as Arrow IPC messages. Every message stream is
//! read back with arrow-ipc's own stream reader and compared with the rows written; the counts
//! say which batches went out as Fluss stored them (forwarded) and which were decoded and
//! encoded again.

use crate::common;

use std::io::Cursor;

use arrow_array::RecordBatch;
use common::*;
use riverlet::client::Table;
use riverlet::metadata::TableDescriptor;
use riverlet::metadata::{AddColumn, DataType};
use riverlet::scan::{Expr, IpcBodies, IpcStream, ScanBuilder, TimePoint};

/// Reads a whole IPC stream back: the schema message, every message, the end-of-stream marker,
/// framed as the Arrow IPC streaming format frames them, then read by arrow-ipc.
async fn read_back(mut s: IpcStream) -> (Vec<RecordBatch>, u64, u64) {
    let mut bytes = Vec::new();
    let mut frame = |m: &riverlet::scan::IpcMessage| {
        let pad = (8 - m.header.len() % 8) % 8;
        bytes.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        bytes.extend_from_slice(&((m.header.len() + pad) as i32).to_le_bytes());
        bytes.extend_from_slice(&m.header);
        bytes.extend(std::iter::repeat_n(0u8, pad));
        bytes.extend_from_slice(&m.body);
    };
    frame(&s.schema_message());
    while let Some(m) = s.next().await {
        frame(&m.unwrap());
    }
    bytes.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    bytes.extend_from_slice(&0i32.to_le_bytes());
    let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None).unwrap();
    assert_eq!(reader.schema(), s.schema());
    let batches = reader.map(|b| b.unwrap()).collect();
    (batches, s.forwarded(), s.encoded())
}

async fn ipc(scan: ScanBuilder) -> (Vec<RecordBatch>, u64, u64) {
    read_back(scan.execute_ipc(IpcBodies::AsStored).await.unwrap()).await
}

fn written(range: std::ops::Range<i32>) -> Vec<(i32, String, String)> {
    range
        .map(|i| {
            (
                i,
                format!("n{i}"),
                if i % 2 == 0 { "eu" } else { "us" }.to_string(),
            )
        })
        .collect()
}

async fn append_range(table: &Table, range: std::ops::Range<i32>) {
    let rows = written(range);
    let refs: Vec<(i32, &str, &str)> = rows
        .iter()
        .map(|(a, b, c)| (*a, b.as_str(), c.as_str()))
        .collect();
    append(table, &refs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_log_batches_go_out_as_stored_and_read_back_as_written() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("ipc_log");
    let table = create_table(&conn, &p, descriptor(false, false, 3)).await;
    // three appends: at least three batches per bucket that has rows
    let t0 = boundary().await;
    append_range(&table, 0..40).await;
    let t1 = boundary().await;
    append_range(&table, 40..80).await;
    let t2 = boundary().await;
    append_range(&table, 80..120).await;

    // a plain read: every batch forwarded, none decoded
    let (batches, forwarded, encoded) = ipc(table.scan()).await;
    assert_eq!(triples(&batches), written(0..120));
    assert!(forwarded >= 3, "{forwarded} batches forwarded");
    assert_eq!(encoded, 0);
    assert_eq!(batches[0].schema(), table.info().schema().to_arrow());

    // a projection is the server's: still forwarded, with only the columns asked for
    let (batches, forwarded, encoded) = ipc(table.scan().project(&["id", "region"])).await;
    let names: Vec<String> = batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["id", "region"]);
    let want: Vec<(i32, String)> = written(0..120)
        .into_iter()
        .map(|(i, _, r)| (i, r))
        .collect();
    let mut got: Vec<(i32, String)> = triples_of_projection(&batches);
    got.sort();
    assert_eq!(got, want);
    assert!(
        forwarded >= 3 && encoded == 0,
        "{forwarded} forwarded, {encoded} encoded"
    );

    // a time window keeps or drops whole batches: forwarded, only the middle append's rows
    let (batches, forwarded, encoded) =
        ipc(table.scan().between(t1, Some(TimePoint::EpochMillis(t2)))).await;
    assert_eq!(triples(&batches), written(40..80));
    assert!(
        forwarded >= 1 && encoded == 0,
        "{forwarded} forwarded, {encoded} encoded"
    );
    let (batches, _, _) = ipc(table.scan().between(t0, Some(TimePoint::EpochMillis(t1)))).await;
    assert_eq!(triples(&batches), written(0..40));

    // a filter is row-level work: decoded, filtered and encoded
    let (batches, forwarded, encoded) = ipc(table.scan().filter(Expr::eq("region", "eu"))).await;
    let eu: Vec<_> = written(0..120)
        .into_iter()
        .filter(|t| t.2 == "eu")
        .collect();
    assert_eq!(triples(&batches), eu);
    assert_eq!(forwarded, 0);
    assert!(encoded >= 1);

    // a limit too
    let (batches, forwarded, _) = ipc(table.scan().limit(7)).await;
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
    assert_eq!(forwarded, 0);

    // uncompressed bodies only: the table's ZSTD batches are decompressed and encoded once
    let s = table
        .scan()
        .execute_ipc(IpcBodies::Uncompressed)
        .await
        .unwrap();
    let (batches, forwarded, encoded) = read_back(s).await;
    assert_eq!(triples(&batches), written(0..120));
    assert_eq!(forwarded, 0);
    assert!(encoded >= 3, "{encoded} encoded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncompressed_batches_go_out_as_stored_when_only_uncompressed_bodies_may() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("ipc_uncompressed");
    let d = descriptor(false, false, 2);
    let d = TableDescriptor::builder(d.schema.clone())
        .distributed_by(Some(2), Vec::<String>::new())
        .property("table.log.arrow.compression.type", "NONE")
        .build()
        .unwrap();
    let table = create_table(&conn, &p, d).await;
    append_range(&table, 0..30).await;
    append_range(&table, 30..60).await;
    let s = table
        .scan()
        .execute_ipc(IpcBodies::Uncompressed)
        .await
        .unwrap();
    let (batches, forwarded, encoded) = read_back(s).await;
    assert_eq!(triples(&batches), written(0..60));
    assert!(
        forwarded >= 2 && encoded == 0,
        "{forwarded} forwarded, {encoded} encoded"
    );
}

/// (id, region) of a projected read, columns found by name.
fn triples_of_projection(batches: &[RecordBatch]) -> Vec<(i32, String)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    let mut out = Vec::new();
    for b in batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
        let regions = b.column_by_name("region").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            out.push((ids.value(i), regions.value(i).to_string()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_of_an_older_schema_are_decoded_widened_and_encoded() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("ipc_evolved");
    let table = create_table(&conn, &p, descriptor(false, false, 1)).await;
    append_range(&table, 0..10).await;
    conn.admin()
        .add_columns(&p, &[AddColumn::new("extra", DataType::bigint())])
        .await
        .unwrap();
    let table = conn.table(&p).await.unwrap();
    let w = table.new_append_writer().unwrap();
    w.append_rows(&[vec![
        riverlet::row::Datum::Int(10),
        riverlet::row::Datum::String("n10".into()),
        riverlet::row::Datum::String("eu".into()),
        riverlet::row::Datum::BigInt(100),
    ]])
    .await
    .unwrap();
    w.flush().await.unwrap();

    let (batches, forwarded, encoded) = ipc(table.scan()).await;
    assert_eq!(triples(&batches), written(0..11));
    assert_eq!(
        (forwarded, encoded),
        (1, 1),
        "the new batch as stored, the old one widened"
    );
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let extra: Vec<Option<i64>> = batches
        .iter()
        .flat_map(|b| {
            b.column_by_name("extra")
                .unwrap()
                .as_primitive::<Int64Type>()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(extra.iter().filter(|v| v.is_none()).count(), 10);
    assert_eq!(extra.iter().flatten().copied().collect::<Vec<_>>(), [100]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_key_table_is_read_as_its_latest_view_and_encoded() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("ipc_pk");
    let table = create_table(&conn, &p, descriptor(true, false, 2)).await;
    upsert(&table, &[(1, "a", "eu"), (2, "b", "us"), (3, "c", "eu")]).await;
    upsert(&table, &[(2, "B", "us")]).await;
    delete(&table, &[(3, "c", "eu")]).await;
    let (batches, forwarded, encoded) = ipc(table.scan()).await;
    assert_eq!(
        triples(&batches),
        vec![
            (1, "a".to_string(), "eu".to_string()),
            (2, "B".to_string(), "us".to_string())
        ]
    );
    assert_eq!(forwarded, 0);
    assert!(encoded >= 1);
}

/// Every Fluss type (nested ones too) in a table per log compression: the messages handed out
/// as stored read back (with the IPC schema message the stream announces) to exactly the
/// batches the decode path (`execute`) returns for the same read, whole and projected, and a
/// table without rows is the schema alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_batches_of_every_type_and_compression_read_back_as_the_decode_path() {
    use riverlet::metadata::{DataField, Schema};
    use riverlet::row::{Datum, TimestampLtz, TimestampNtz};
    let env = TestEnv::new();
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("i", DataType::int().not_null())
        .column("b", DataType::boolean())
        .column("bi", DataType::bigint())
        .column("d", DataType::double())
        .column("dec", DataType::decimal(30, 5))
        .column("s", DataType::string())
        .column("bytes", DataType::bytes())
        .column("bin", DataType::binary(4))
        .column("date", DataType::date())
        .column("ts6", DataType::timestamp(6))
        .column("ltz", DataType::timestamp_ltz(3))
        .column("arr", DataType::array(DataType::int()))
        .column(
            "map",
            DataType::map(DataType::string().not_null(), DataType::int()),
        )
        .column(
            "row",
            DataType::row(vec![
                DataField::new("x", DataType::int()),
                DataField::new("y", DataType::string()),
            ]),
        )
        .build()
        .unwrap();
    let n = schema.columns.len();
    let row = |i: i32| -> Vec<Datum> {
        if i % 5 == 4 {
            let mut nulls = vec![Datum::Null; n];
            nulls[0] = Datum::Int(i);
            return nulls;
        }
        vec![
            Datum::Int(i),
            Datum::Boolean(i % 2 == 0),
            Datum::BigInt(i as i64 * -1_000_000_007),
            Datum::Double(i as f64 / 8.0),
            Datum::Decimal {
                unscaled: i as i128 * 123_456_789_012_345,
                precision: 30,
                scale: 5,
            },
            Datum::String(format!("s{i}")),
            Datum::Binary(vec![i as u8; (i % 7) as usize]),
            Datum::Binary(vec![i as u8, 1, 2, 3]),
            Datum::Date(19_000 + i),
            Datum::Timestamp(TimestampNtz {
                millis: 1_700_000_000_000 + i as i64,
                nanos_of_milli: 123_000,
            }),
            Datum::TimestampLtz(TimestampLtz::from_millis(1_700_000_000_000 - i as i64)),
            Datum::Array(vec![Datum::Int(i), Datum::Null]),
            Datum::Map(vec![(Datum::String(format!("k{i}")), Datum::Int(i))]),
            Datum::Row(vec![Datum::Int(-i), Datum::String(format!("r{i}"))]),
        ]
    };
    for compression in ["ZSTD", "LZ4_FRAME", "NONE"] {
        let path = env.path(&format!("ipc_types_{}", compression.to_lowercase()));
        let d = TableDescriptor::builder(schema.clone())
            .distributed_by(Some(3), Vec::<String>::new())
            .property("table.log.arrow.compression.type", compression)
            .build()
            .unwrap();
        let table = create_table(&conn, &path, d).await;

        // A table without rows: the schema message alone, the decode path's schema.
        let (batches, forwarded, encoded) = ipc(table.scan()).await;
        assert!(batches.is_empty(), "{compression}: {batches:?}");
        assert_eq!((forwarded, encoded), (0, 0), "{compression}");

        let w = table.new_append_writer().unwrap();
        for part in 0..3 {
            let rows: Vec<Vec<Datum>> = (part * 40..part * 40 + 40).map(row).collect();
            w.append_rows(&rows).await.unwrap();
            w.flush().await.unwrap();
        }
        // A projection in table order is the server's (forwarded); in another order the
        // columns are rearranged here, so its batches are decoded and encoded.
        for (columns, as_stored) in [
            (None, true),
            (Some(vec!["i", "ltz", "arr", "map"]), true),
            (Some(vec!["map", "i", "s"]), false),
        ] {
            let scan = || match &columns {
                None => table.scan(),
                Some(c) => table.scan().project(c),
            };
            let decoded = scan().collect().await.unwrap();
            let s = scan().execute_ipc(IpcBodies::AsStored).await.unwrap();
            let schema = s.schema();
            let (batches, forwarded, encoded) = read_back(s).await;
            assert_eq!(schema, decoded[0].schema(), "{compression} {columns:?}");
            let counts = if as_stored {
                (forwarded >= 3, encoded)
            } else {
                (forwarded == 0, encoded.min(1))
            };
            assert_eq!(
                counts,
                (true, if as_stored { 0 } else { 1 }),
                "{compression} {columns:?}: {forwarded} forwarded, {encoded} encoded"
            );
            assert_eq!(
                by_id(&batches),
                by_id(&decoded),
                "{compression} {columns:?}: the forwarded rows are the decoded ones"
            );
            assert_eq!(by_id(&decoded).num_rows(), 120);
        }
    }
}

/// All rows of `batches` in one batch, ordered by the INT column `i`.
fn by_id(batches: &[RecordBatch]) -> RecordBatch {
    let all = arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap();
    let ids =
        arrow_ord::sort::sort_to_indices(all.column_by_name("i").unwrap(), None, None).unwrap();
    arrow_select::take::take_record_batch(&all, &ids).unwrap()
}

/// `plan_splits` cuts each bucket at offsets chosen without knowing where batches start, and
/// every piece read apart (`split`) holds whole batches: together the pieces read every row
/// once, the forwarded ones as stored and none decoded to trim it at a cut, through the IPC
/// path and the decode path alike, for the whole log and a time window; reads that cannot be
/// cut say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pieces_of_a_read_hold_whole_batches_and_every_row_once() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("ipc_splits");
    let table = create_table(&conn, &p, descriptor(false, false, 1)).await;
    // ten appends of 30 rows: ten batches, at offsets 0, 30, ..., 270
    let mut marks = vec![boundary().await];
    for k in 0..10 {
        append_range(&table, k * 30..k * 30 + 30).await;
        marks.push(boundary().await);
    }

    // 300 records in pieces of at most 80: four, cut at 75, 150 and 225, inside the batches
    // at 60, 150 (its start) and 210
    let splits = table.scan().plan_splits(80, 16).await.unwrap().unwrap();
    assert_eq!(splits.len(), 4);
    assert!(splits.iter().all(|s| s.bucket() == 0));
    let mut rows_ipc = Vec::new();
    let mut rows_decoded = Vec::new();
    let mut forwarded_total = 0;
    for s in &splits {
        let (batches, forwarded, encoded) = read_back(
            table
                .scan()
                .split(s.clone())
                .execute_ipc(IpcBodies::AsStored)
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(encoded, 0, "{s:?}: a piece holds whole batches");
        forwarded_total += forwarded;
        // every batch of a piece is one of the appends, whole
        for b in &batches {
            assert_eq!(b.num_rows(), 30, "{s:?}");
        }
        rows_ipc.extend(triples(&batches));
        let decoded = table.scan().split(s.clone()).collect().await.unwrap();
        rows_decoded.extend(triples(&decoded));
    }
    assert_eq!(
        forwarded_total, 10,
        "each batch forwarded by exactly one piece"
    );
    rows_ipc.sort();
    rows_decoded.sort();
    assert_eq!(rows_ipc, written(0..300));
    assert_eq!(rows_decoded, written(0..300));

    // a window (appends 3 to 7) cut into pieces of at most 40 records
    let window = || {
        table
            .scan()
            .between(marks[3], Some(TimePoint::EpochMillis(marks[8])))
    };
    let splits = window().plan_splits(40, 16).await.unwrap().unwrap();
    assert!(splits.len() >= 3, "{splits:?}");
    let mut rows = Vec::new();
    for s in &splits {
        let (batches, _, encoded) = read_back(
            window()
                .split(s.clone())
                .execute_ipc(IpcBodies::AsStored)
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(encoded, 0);
        rows.extend(triples(&batches));
    }
    rows.sort();
    assert_eq!(rows, written(90..240));

    // a piece applies to the read it was cut from only
    let limited = table
        .scan()
        .limit(5)
        .split(splits[0].clone())
        .collect()
        .await;
    assert!(limited.is_err(), "{limited:?}");
    // reads that cannot be cut: a limit, a primary-key table's latest view
    assert!(table
        .scan()
        .limit(5)
        .plan_splits(10, 16)
        .await
        .unwrap()
        .is_none());
    let pk = create_table(
        &conn,
        &env.path("ipc_splits_pk"),
        descriptor(true, false, 2),
    )
    .await;
    upsert(&pk, &[(1, "a", "eu")]).await;
    assert!(pk.scan().plan_splits(10, 16).await.unwrap().is_none());
}
