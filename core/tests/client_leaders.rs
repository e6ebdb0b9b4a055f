//! `Table::bucket_leaders`: every bucket (of every partition) with the server leading it, from
//! the async client and the blocking facade, against the test server (see common/mod.rs).

use crate::common;

use common::*;
use riverlet::client::BucketLeader;
use riverlet::metadata::{DataType, PartitionSpec, Schema, TableDescriptor};
use riverlet::row::Datum;

fn schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int().not_null())
        .column("day", DataType::string().not_null())
        .build()
        .unwrap()
}

fn pk_schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int().not_null())
        .column("day", DataType::string().not_null())
        .primary_key(["id"])
        .build()
        .unwrap()
}

/// Every bucket has a leader that is one of the cluster's tablet servers (the embedded server is
/// the only one: id 0 at the bootstrap address).
fn assert_led(env: &TestEnv, leaders: &[BucketLeader]) {
    for l in leaders {
        let node = l
            .leader
            .as_ref()
            .unwrap_or_else(|| panic!("bucket without a leader: {l:?}"));
        if !env.is_external() {
            assert_eq!(node.id, 0, "{l:?}");
            assert_eq!(node.address, env.bootstrap, "{l:?}");
        } else {
            assert!(node.id >= 0 && node.address.contains(':'), "{l:?}");
        }
    }
}

#[tokio::test]
async fn every_bucket_of_a_log_table_has_its_leader() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("leaders");
    let d = TableDescriptor::builder(schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;

    let leaders = table.bucket_leaders().await.unwrap();
    assert_eq!(
        leaders.iter().map(|l| l.bucket).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(leaders
        .iter()
        .all(|l| l.partition_id.is_none() && l.partition_name.is_none()));
    assert_led(&env, &leaders);

    // The answer replaces the cached leaders; writes route by it as before.
    let w = table.new_append_writer().unwrap();
    w.append_rows(&[vec![Datum::Int(1), Datum::String("d".into())]])
        .await
        .unwrap();
    assert_eq!(table.bucket_leaders().await.unwrap(), leaders);
}

#[tokio::test]
async fn a_partitioned_table_lists_each_partition_by_name_then_buckets() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("leaders_by_day");
    let d = TableDescriptor::builder(schema())
        .partitioned_by(["day"])
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    assert!(table.bucket_leaders().await.unwrap().is_empty());

    let admin = conn.admin();
    for day in ["2024-01-02", "2024-01-01"] {
        admin
            .create_partition(&path, &PartitionSpec::new([("day", day)]), false)
            .await
            .unwrap();
    }
    let parts = admin.list_partitions(&path).await.unwrap();
    let id_of = |name: &str| parts.iter().find(|p| p.name == name).unwrap().partition_id;
    let mut leaders = table.bucket_leaders().await.unwrap();
    if env.is_external() {
        // A real cluster elects a new partition's leaders a moment after creating it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while leaders.iter().any(|l| l.leader.is_none()) && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            leaders = table.bucket_leaders().await.unwrap();
        }
    }
    let got: Vec<(Option<i64>, Option<&str>, i32)> = leaders
        .iter()
        .map(|l| (l.partition_id, l.partition_name.as_deref(), l.bucket))
        .collect();
    let (a, b) = (id_of("2024-01-01"), id_of("2024-01-02"));
    assert_eq!(
        got,
        vec![
            (Some(a), Some("2024-01-01"), 0),
            (Some(a), Some("2024-01-01"), 1),
            (Some(b), Some("2024-01-02"), 0),
            (Some(b), Some("2024-01-02"), 1),
        ]
    );
    assert_led(&env, &leaders);
}

#[test]
fn the_blocking_facade_gives_the_same_answer() {
    let env = TestEnv::new();
    let conn = riverlet::blocking::Connection::connect(env.config()).unwrap();
    let path = env.path("leaders_blocking");
    let d = TableDescriptor::builder(pk_schema())
        .distributed_by(Some(4), Vec::<String>::new())
        .build()
        .unwrap();
    conn.admin().create_table(&path, &d, false).unwrap();
    await_leaders_blocking(&env, &path, &d);
    let table = conn.table(&path).unwrap();
    let leaders = table.bucket_leaders().unwrap();
    assert_eq!(
        leaders.iter().map(|l| l.bucket).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert_led(&env, &leaders);
    conn.close().unwrap();
    let e = table.bucket_leaders().unwrap_err();
    assert_eq!(e.kind(), riverlet::ErrorKind::Closed, "{e}");
}
