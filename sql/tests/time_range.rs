//! `fluss_incremental_between_timestamp(table, start[, end])` against the embedded server: every
//! argument form of the guide (epoch-millisecond and datetime strings, integers, DATE,
//! TIMESTAMP, constant expressions, an omitted end, qualified table names), the primary-key
//! window semantics, and each invalid window failing while the statement is analyzed with the
//! core's typed error.

use crate::common;

use std::time::Duration;

use common::{table, Env};
use riverlet::scan::time::now_millis;
use riverlet::ErrorKind;

/// A commit-time boundary strictly between the writes before and after it.
async fn boundary() -> i64 {
    tokio::time::sleep(Duration::from_millis(5)).await;
    let t = now_millis();
    tokio::time::sleep(Duration::from_millis(5)).await;
    t
}

/// `millis` as a `yyyy-MM-dd HH:mm:ss.SSS` UTC wall clock (the session zone of [`Env`]).
fn utc_text(millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(millis)
        .unwrap()
        .format("%Y-%m-%d %H:%M:%S%.3f")
        .to_string()
}

/// The sorted `order_id`s of a statement.
async fn ids(env: &Env, sql: &str) -> Vec<i64> {
    let batches = match env.ctx.sql(sql).await {
        Ok(df) => df.collect().await.unwrap(),
        Err(e) => panic!("{sql}: {e}"),
    };
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let a = b
                .column_by_name("order_id")
                .unwrap()
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap()
                .clone();
            a.values().to_vec()
        })
        .collect();
    ids.sort();
    ids
}

/// Three groups of rows with boundaries: [1, 2] < t1 < [3, 4] < t2 < [5].
async fn log_groups(env: &Env) -> (i64, i64) {
    env.create("log_table", "order_id BIGINT, item STRING", &[], &[], 2)
        .await;
    env.query("INSERT INTO log_table VALUES (1, 'a'), (2, 'b')")
        .await;
    let t1 = boundary().await;
    env.query("INSERT INTO log_table VALUES (3, 'c'), (4, 'd')")
        .await;
    let t2 = boundary().await;
    env.query("INSERT INTO log_table VALUES (5, 'e')").await;
    (t1, t2)
}

const F: &str = "fluss_incremental_between_timestamp";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_argument_form() {
    let env = Env::new().await;
    let (t1, t2) = log_groups(&env).await;
    let q = |args: String| format!("SELECT * FROM {F}({args}) ORDER BY order_id");

    // Epoch-millisecond strings, as in the guide's first example.
    assert_eq!(
        ids(&env, &q(format!("'log_table', '{t1}', '{t2}'"))).await,
        [3, 4]
    );
    // Integers of epoch milliseconds.
    assert_eq!(
        ids(&env, &q(format!("'log_table', {t1}, {t2}"))).await,
        [3, 4]
    );
    // Datetime strings in the session time zone (UTC here), with milliseconds.
    let (s1, s2) = (utc_text(t1), utc_text(t2));
    assert_eq!(
        ids(&env, &q(format!("'log_table', '{s1}', '{s2}'"))).await,
        [3, 4]
    );
    // TIMESTAMP values: a wall clock (read in the session zone) and an instant.
    assert_eq!(
        ids(
            &env,
            &q(format!(
                "'log_table', TIMESTAMP '{s1}', to_timestamp_millis({t2})"
            ))
        )
        .await,
        [3, 4]
    );
    // Constant expressions (as the guide's rolling windows).
    assert_eq!(
        ids(
            &env,
            &q(format!(
                "'log_table', CAST({t1} - 0 AS VARCHAR), CAST({t2} + 0 AS VARCHAR)"
            ))
        )
        .await,
        [3, 4]
    );
    assert_eq!(
        ids(&env, &q("'log_table', now() - INTERVAL '1 hour'".into())).await,
        [1, 2, 3, 4, 5]
    );
    // No end: up to the moment the statement is analyzed.
    assert_eq!(
        ids(&env, &q(format!("'log_table', '{t1}'"))).await,
        [3, 4, 5]
    );
    // A DATE is the start of that day.
    assert_eq!(
        ids(&env, &q("'log_table', DATE '2000-01-01'".into())).await,
        [1, 2, 3, 4, 5]
    );
    // database.table and catalog.database.table.
    assert_eq!(
        ids(&env, &q(format!("'fluss.log_table', '{t2}'"))).await,
        [5]
    );
    assert_eq!(
        ids(&env, &q(format!("'fluss.fluss.log_table', '{t2}'"))).await,
        [5]
    );
    // The result is an ordinary relation: projection and filters work on it.
    assert_eq!(
        env.query(&format!(
            "SELECT item FROM {F}('log_table', '{t1}') WHERE order_id <> 4 ORDER BY item"
        ))
        .await,
        table(
            "+------+
             | item |
             +------+
             | c    |
             | e    |
             +------+"
        )
    );
    // A window with no data is empty, not an error.
    assert_eq!(
        ids(
            &env,
            &q(format!("'log_table', {}, {}", t1 - 100_000, t1 - 99_000))
        )
        .await,
        Vec::<i64>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn primary_key_window_keeps_the_latest_value_of_changed_keys() {
    let env = Env::new().await;
    let t = env
        .create(
            "pk_table",
            "order_id BIGINT, amount INT",
            &["order_id"],
            &[],
            1,
        )
        .await;
    env.query("INSERT INTO pk_table VALUES (1, 10), (2, 20), (3, 30)")
        .await;
    let t1 = boundary().await;
    env.query("INSERT INTO pk_table VALUES (2, 21), (4, 40), (2, 22)")
        .await;
    // Key 3 is only deleted inside the window: it is left out.
    let w = t.new_upsert_writer(None).unwrap();
    w.delete_rows(&[vec![riverlet::row::Datum::BigInt(3)]])
        .await
        .unwrap();
    w.flush().await.unwrap();
    let t2 = boundary().await;
    env.query("INSERT INTO pk_table VALUES (1, 11)").await;
    assert_eq!(
        env.query(&format!(
            "SELECT * FROM {F}('pk_table', '{}', '{}') ORDER BY order_id",
            utc_text(t1),
            utc_text(t2)
        ))
        .await,
        table(
            "+----------+--------+
             | order_id | amount |
             +----------+--------+
             | 2        | 22     |
             | 4        | 40     |
             +----------+--------+"
        )
    );
}

/// The core error a failed statement carries (it fails while being analyzed: `ctx.sql`).
async fn analysis_error(env: &Env, sql: &str) -> (ErrorKind, String) {
    let e = match env.ctx.sql(sql).await {
        Ok(_) => panic!("{sql} was accepted"),
        Err(e) => e,
    };
    match riverlet_sql::core_error(&e) {
        Some(core) => (core.kind(), core.to_string()),
        None => panic!("{sql}: not a core error: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_windows_fail_fast() {
    let env = Env::new().await;
    let (t1, t2) = log_groups(&env).await;
    let q = |args: &str| format!("SELECT * FROM {F}({args})");

    let (kind, msg) = analysis_error(&env, &q("'log_table', ''")).await;
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(msg.contains("must not be blank"), "{msg}");

    let (kind, msg) = analysis_error(&env, &q("'log_table', '   ', '1'")).await;
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(msg.contains("must not be blank"), "{msg}");

    let (kind, msg) = analysis_error(&env, &q("'log_table', 'yesterday'")).await;
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(msg.contains("'yesterday'"), "{msg}");

    let (kind, msg) = analysis_error(&env, &q(&format!("'log_table', '{t1}', 'soon'"))).await;
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(msg.contains("'soon'"), "{msg}");

    // start == end and start > end: the window must be [start, end) with start < end.
    for (s, e) in [(t1, t1), (t2, t1)] {
        let (kind, msg) = analysis_error(&env, &q(&format!("'log_table', {s}, {e}"))).await;
        assert_eq!(kind, ErrorKind::InvalidArgument);
        assert!(msg.contains("strictly before"), "{msg}");
    }

    // A start after now: only committed data can be read.
    let future = now_millis() + 3_600_000;
    let (kind, msg) = analysis_error(&env, &q(&format!("'log_table', {future}"))).await;
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(msg.contains("in the future"), "{msg}");

    // A table that does not exist.
    let (kind, msg) = analysis_error(&env, &q("'no_such_table', '1'")).await;
    assert_eq!(kind, ErrorKind::NotFound);
    assert!(msg.contains("no_such_table"), "{msg}");

    // Arguments the function itself rejects (plan errors naming them): an end alone cannot be
    // given (start is required), NULL bounds, column references, bad table names.
    for (args, needle) in [
        ("'log_table'", "takes 2 or 3 arguments"),
        ("'log_table', NULL", "must not be NULL"),
        ("'log_table', order_id", "constant expression"),
        ("'log_table', true", "must be a string"),
        ("'other.db.log_table', '1'", "unknown catalog 'other'"),
        ("42, '1'", "table argument must be a string"),
    ] {
        let e = match env.ctx.sql(&q(args)).await {
            Ok(_) => panic!("{args} was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(needle), "{args}: {e}");
    }
}
