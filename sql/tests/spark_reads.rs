//! The statements of the Fluss Spark batch-read guide (log, partitioned log, primary-key and
//! partitioned primary-key tables) as DataFusion SQL against the embedded server, with the rows
//! the guide's data gives; plus what is pushed into the core (exact filters, limit) and the
//! `$changelog` table.

use crate::common;

use common::{table, Env};

const LOG_COLUMNS: &str = "order_id BIGINT, item_id BIGINT, amount INT, address STRING";
const PART_COLUMNS: &str = "order_id BIGINT, item_id BIGINT, amount INT, address STRING, dt STRING";

async fn log_table(env: &Env) {
    env.create("log_table", LOG_COLUMNS, &[], &[], 3).await;
    env.query(
        "INSERT INTO log_table VALUES
          (600, 21, 601, 'addr1'),
          (700, 22, 602, 'addr2'),
          (800, 23, 603, 'addr3'),
          (900, 24, 604, 'addr4'),
          (1000, 25, 605, 'addr5')",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_table_reads() {
    let env = Env::new().await;
    log_table(&env).await;

    assert_eq!(
        env.query("SELECT * FROM log_table ORDER BY order_id").await,
        table(
            "+----------+---------+--------+---------+
             | order_id | item_id | amount | address |
             +----------+---------+--------+---------+
             | 600      | 21      | 601    | addr1   |
             | 700      | 22      | 602    | addr2   |
             | 800      | 23      | 603    | addr3   |
             | 900      | 24      | 604    | addr4   |
             | 1000     | 25      | 605    | addr5   |
             +----------+---------+--------+---------+"
        )
    );
    assert_eq!(
        env.query("SELECT address, item_id FROM log_table ORDER BY order_id")
            .await,
        table(
            "+---------+---------+
             | address | item_id |
             +---------+---------+
             | addr1   | 21      |
             | addr2   | 22      |
             | addr3   | 23      |
             | addr4   | 24      |
             | addr5   | 25      |
             +---------+---------+"
        )
    );
    // `amount % 2 = 0` has no core form: DataFusion filters (a FilterExec stays in the plan).
    let sql = "SELECT * FROM log_table WHERE amount % 2 = 0 ORDER BY order_id";
    assert_eq!(
        env.query(sql).await,
        table(
            "+----------+---------+--------+---------+
             | order_id | item_id | amount | address |
             +----------+---------+--------+---------+
             | 700      | 22      | 602    | addr2   |
             | 900      | 24      | 604    | addr4   |
             +----------+---------+--------+---------+"
        )
    );
    assert!(env.plan(sql).await.contains("FilterExec"));
    // `order_id >= 900` is the core's (exact): no FilterExec is left.
    let sql = "SELECT order_id, item_id FROM log_table WHERE order_id >= 900 ORDER BY order_id";
    assert_eq!(
        env.query(sql).await,
        table(
            "+----------+---------+
             | order_id | item_id |
             +----------+---------+
             | 900      | 24      |
             | 1000     | 25      |
             +----------+---------+"
        )
    );
    assert!(!env.plan(sql).await.contains("FilterExec"));
    // A limit is pushed into the read; counts need no column.
    assert_eq!(
        env.query("SELECT count(*) AS n FROM (SELECT * FROM log_table LIMIT 2)")
            .await,
        table(
            "+---+
             | n |
             +---+
             | 2 |
             +---+"
        )
    );
    assert_eq!(
        env.query("SELECT count(*) AS n, sum(amount) AS s FROM log_table")
            .await,
        table(
            "+---+------+
             | n | s    |
             +---+------+
             | 5 | 3015 |
             +---+------+"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_log_table_reads() {
    let env = Env::new().await;
    env.create("part_log_table", PART_COLUMNS, &[], &["dt"], 1)
        .await;
    env.query(
        "INSERT INTO part_log_table VALUES
          (600, 21, 601, 'addr1', '2026-01-01'),
          (700, 22, 602, 'addr2', '2026-01-01'),
          (800, 23, 603, 'addr3', '2026-01-02'),
          (900, 24, 604, 'addr4', '2026-01-02'),
          (1000, 25, 605, 'addr5', '2026-01-03')",
    )
    .await;
    let sql = "SELECT * FROM part_log_table WHERE dt = '2026-01-01' ORDER BY order_id";
    assert_eq!(
        env.query(sql).await,
        table(
            "+----------+---------+--------+---------+------------+
             | order_id | item_id | amount | address | dt         |
             +----------+---------+--------+---------+------------+
             | 600      | 21      | 601    | addr1   | 2026-01-01 |
             | 700      | 22      | 602    | addr2   | 2026-01-01 |
             +----------+---------+--------+---------+------------+"
        )
    );
    assert!(!env.plan(sql).await.contains("FilterExec"));
    assert_eq!(
        env.query(
            "SELECT order_id, address, dt FROM part_log_table
             WHERE dt IN ('2026-01-01', '2026-01-02')
             ORDER BY order_id"
        )
        .await,
        table(
            "+----------+---------+------------+
             | order_id | address | dt         |
             +----------+---------+------------+
             | 600      | addr1   | 2026-01-01 |
             | 700      | addr2   | 2026-01-01 |
             | 800      | addr3   | 2026-01-02 |
             | 900      | addr4   | 2026-01-02 |
             +----------+---------+------------+"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn primary_key_table_reads_the_latest_view() {
    let env = Env::new().await;
    env.create("pk_table", LOG_COLUMNS, &["order_id"], &[], 1)
        .await;
    env.query(
        "INSERT INTO pk_table VALUES
          (600, 21, 601, 'addr1'),
          (700, 22, 602, 'addr2'),
          (800, 23, 603, 'addr3'),
          (900, 24, 604, 'addr4'),
          (1000, 25, 605, 'addr5')",
    )
    .await;
    assert_eq!(
        env.query("SELECT * FROM pk_table ORDER BY order_id").await,
        table(
            "+----------+---------+--------+---------+
             | order_id | item_id | amount | address |
             +----------+---------+--------+---------+
             | 600      | 21      | 601    | addr1   |
             | 700      | 22      | 602    | addr2   |
             | 800      | 23      | 603    | addr3   |
             | 900      | 24      | 604    | addr4   |
             | 1000     | 25      | 605    | addr5   |
             +----------+---------+--------+---------+"
        )
    );
    env.query(
        "INSERT INTO pk_table VALUES
          (700, 220, 602, 'addr2'),
          (900, 240, 604, 'addr4'),
          (1100, 260, 606, 'addr6')",
    )
    .await;
    assert_eq!(
        env.query(
            "SELECT order_id, item_id, address FROM pk_table
             WHERE amount <= 603 ORDER BY order_id"
        )
        .await,
        table(
            "+----------+---------+---------+
             | order_id | item_id | address |
             +----------+---------+---------+
             | 600      | 21      | addr1   |
             | 700      | 220     | addr2   |
             | 800      | 23      | addr3   |
             +----------+---------+---------+"
        )
    );
    // The changelog: five inserts, then an update of 700 and 900 and an insert of 1100.
    assert_eq!(
        env.query(
            r#"SELECT _change_type, order_id, item_id FROM "pk_table$changelog"
               ORDER BY _log_offset"#
        )
        .await,
        table(
            "+---------------+----------+---------+
             | _change_type  | order_id | item_id |
             +---------------+----------+---------+
             | insert        | 600      | 21      |
             | insert        | 700      | 22      |
             | insert        | 800      | 23      |
             | insert        | 900      | 24      |
             | insert        | 1000     | 25      |
             | update_before | 700      | 22      |
             | update_after  | 700      | 220     |
             | update_before | 900      | 24      |
             | update_after  | 900      | 240     |
             | insert        | 1100     | 260     |
             +---------------+----------+---------+"
        )
    );
    // A filter on a table column is the core's; one on a metadata column DataFusion's.
    assert_eq!(
        env.query(
            r#"SELECT _change_type, order_id FROM "pk_table$changelog"
               WHERE order_id = 700 AND _change_type <> 'update_before' ORDER BY _log_offset"#
        )
        .await,
        table(
            "+--------------+----------+
             | _change_type | order_id |
             +--------------+----------+
             | insert       | 700      |
             | update_after | 700      |
             +--------------+----------+"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_primary_key_table_reads() {
    let env = Env::new().await;
    env.create(
        "part_pk_table",
        PART_COLUMNS,
        &["order_id", "dt"],
        &["dt"],
        1,
    )
    .await;
    env.query(
        "INSERT INTO part_pk_table VALUES
          (600, 21, 601, 'addr1', '2026-01-01'),
          (700, 22, 602, 'addr2', '2026-01-01'),
          (800, 23, 603, 'addr3', '2026-01-02'),
          (900, 24, 604, 'addr4', '2026-01-02'),
          (1000, 25, 605, 'addr5', '2026-01-03')",
    )
    .await;
    assert_eq!(
        env.query(
            "SELECT * FROM part_pk_table
             WHERE dt = '2026-01-01'
             ORDER BY order_id"
        )
        .await,
        table(
            "+----------+---------+--------+---------+------------+
             | order_id | item_id | amount | address | dt         |
             +----------+---------+--------+---------+------------+
             | 600      | 21      | 601    | addr1   | 2026-01-01 |
             | 700      | 22      | 602    | addr2   | 2026-01-01 |
             +----------+---------+--------+---------+------------+"
        )
    );
    assert_eq!(
        env.query(
            "SELECT * FROM part_pk_table
             WHERE dt IN ('2026-01-01', '2026-01-02')
             ORDER BY order_id"
        )
        .await,
        table(
            "+----------+---------+--------+---------+------------+
             | order_id | item_id | amount | address | dt         |
             +----------+---------+--------+---------+------------+
             | 600      | 21      | 601    | addr1   | 2026-01-01 |
             | 700      | 22      | 602    | addr2   | 2026-01-01 |
             | 800      | 23      | 603    | addr3   | 2026-01-02 |
             | 900      | 24      | 604    | addr4   | 2026-01-02 |
             +----------+---------+--------+---------+------------+"
        )
    );
}
