//! Paimon on S3 (a module of `lake_iceberg_s3`, sharing its moto fixture): the embedded server
//! with `datalake.format = paimon` and its warehouse in a bucket of moto's S3 server tiers a
//! log table and a primary-key table there; the client, given the warehouse's keys as Fluss's
//! catalog options (`paimon.s3.access-key`, `paimon.s3.secret-key`: the table info carries no
//! secret, as Fluss's coordinator drops them), reads `$lake`, `$lake$snapshots` and the union
//! reads with exactly the rows written. Without credentials the read fails with an
//! authentication error naming the options to set; with only `AWS_ACCESS_KEY_ID` /
//! `AWS_SECRET_ACCESS_KEY` in the environment it works. Those two reads run in a child process
//! of this test binary, whose environment the test controls (no other AWS variable, no
//! instance metadata), so the machine's own AWS setup cannot decide them. The log (TRACE, with
//! the directives Riverlet's binaries add) never shows the secret: the S3 signer under the
//! paimon crate logs it at DEBUG unless capped.
//!
//! Needs `RIVERLET_MOTO_SERVER` (or `moto_server` on the PATH); reports itself skipped without.

use super::kv_rows::{
    delete, expected as kv_expected, pk_table_with, rows_of as kv_rows_of, upsert,
};
use super::*;

/// The secret key of the warehouse, which no message or log line may show.
const PAIMON_SECRET: &str = "pm-7f2c-warehouse-key";
const LAKE_PROPS: [(&str, &str); 2] = [
    ("table.datalake.enabled", "true"),
    ("table.datalake.freshness", "1h"),
];
/// The environment variables the child read takes its instructions from.
const CHILD_BOOTSTRAP: &str = "RIVERLET_PAIMON_S3_CHILD_BOOTSTRAP";
const CHILD_TABLE: &str = "RIVERLET_PAIMON_S3_CHILD_TABLE";
/// The marker of the child's one result line.
const CHILD_RESULT: &str = "PAIMON_S3_CHILD_RESULT ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_lake_on_s3_read_with_the_catalog_options() {
    let Some(moto) = start_moto() else {
        eprintln!(
            "SKIPPED {}: moto_server (pip install 'moto[server]') is not installed; set \
             RIVERLET_MOTO_SERVER or put it on the PATH",
            test_name()
        );
        return;
    };
    let logs = capture_logs();
    let (status, body) = s3_call(reqwest::Method::PUT, format!("{}/{BUCKET}", moto.endpoint)).await;
    assert_eq!(status, 200, "create bucket: {body}");
    let endpoint = moto.endpoint.clone();
    let Some(env) = TestEnv::embedded_only("needs an embedded server tiering to S3", move |c| {
        for (k, v) in [
            ("datalake.format", "paimon"),
            ("datalake.paimon.metastore", "filesystem"),
            (
                "datalake.paimon.warehouse",
                &format!("s3://{BUCKET}/paimon"),
            ),
            ("datalake.paimon.s3.endpoint", &endpoint),
            ("datalake.paimon.s3.region", "us-east-1"),
            ("datalake.paimon.s3.path-style-access", "true"),
            ("datalake.paimon.s3.access-key", "testing"),
            ("datalake.paimon.s3.secret-key", PAIMON_SECRET),
        ] {
            c.set(k, v).unwrap();
        }
    }) else {
        return;
    };
    // The reader's keys, as a Fluss user gives them to Fluss's Flink catalog.
    let config = env
        .config()
        .with_lake_option("paimon.s3.access-key", "testing")
        .unwrap()
        .with_lake_option("paimon.s3.secret-key", PAIMON_SECRET)
        .unwrap();
    assert!(!format!("{config:?}").contains(PAIMON_SECRET));
    let conn = Connection::connect(config).await.unwrap();
    let server = env.server.as_ref().unwrap();

    // A log table: two commits, then a tail only in the log.
    let path = env.path("orders");
    let d = TableDescriptor::builder(schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .property(LAKE_PROPS[0].0, LAKE_PROPS[0].1)
        .property(LAKE_PROPS[1].0, LAKE_PROPS[1].1)
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let props = &table.info().descriptor.properties;
    assert_eq!(
        props
            .get("table.datalake.paimon.warehouse")
            .map(String::as_str),
        Some("s3://lake/paimon")
    );
    assert_eq!(
        props.get("table.datalake.paimon.s3.endpoint"),
        Some(&moto.endpoint)
    );
    for dropped in ["s3.access-key", "s3.secret-key"] {
        assert!(
            !props.contains_key(&format!("table.datalake.paimon.{dropped}")),
            "the table info carries {dropped}"
        );
    }
    let first = rows(0..50);
    write(&table, &first).await;
    server.commit_lake().unwrap();
    let second = rows(50..80);
    write(&table, &second).await;
    server.commit_lake().unwrap();
    let third = rows(80..95);
    write(&table, &third).await;
    let in_lake = sorted(first.iter().chain(&second).cloned().collect());
    let everything = sorted(in_lake.iter().chain(&third).cloned().collect());

    // Paimon's files are objects in the bucket: data files in the buckets, two snapshots.
    let table_prefix = format!("paimon/{}.db/orders/", env.db);
    let keys = object_keys(&moto.endpoint, &table_prefix).await;
    assert!(
        keys.iter()
            .any(|k| k.starts_with(&format!("{table_prefix}bucket-"))),
        "{keys:?}"
    );
    for id in [1, 2] {
        let snapshot = format!("{table_prefix}snapshot/snapshot-{id}");
        assert!(keys.contains(&snapshot), "no {snapshot} in {keys:?}");
    }

    let name = path.to_string();
    let lake = format!("{name}$lake");
    assert_eq!(rows_of(&read(&conn, &lake).await.unwrap()), in_lake);
    assert_eq!(rows_of(&read(&conn, &name).await.unwrap()), everything);
    let snaps = read(&conn, &format!("{name}$lake$snapshots"))
        .await
        .unwrap();
    assert_eq!(total_rows(&snaps), 2);
    let ids = snaps[0]
        .column_by_name("snapshot_id")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!((ids.value(0), ids.value(1)), (1, 2));

    // A primary-key table: the lake's merged state, and the log after it winning by key.
    let kv = pk_table_with(&conn, "kv_lake", 2, &LAKE_PROPS).await;
    let kv_name = TablePath::new("d", "kv_lake").to_string();
    upsert(&kv, &[(1, "a1"), (2, "a2"), (3, "a3"), (4, "a4")]).await;
    upsert(&kv, &[(2, "b2")]).await;
    delete(&kv, &[3]).await;
    server.commit_lake().unwrap();
    let at_commit = kv_expected(&[(1, "a1"), (2, "b2"), (4, "a4")]);
    let kv_lake = format!("{kv_name}$lake");
    assert_eq!(kv_rows_of(&read(&conn, &kv_lake).await.unwrap()), at_commit);
    upsert(&kv, &[(1, "c1"), (5, "c5"), (3, "c3")]).await;
    delete(&kv, &[4]).await;
    let latest = kv_expected(&[(1, "c1"), (2, "b2"), (3, "c3"), (5, "c5")]);
    assert_eq!(kv_rows_of(&read(&conn, &kv_name).await.unwrap()), latest);
    assert!(
        object_keys(&moto.endpoint, "paimon/d.db/kv_lake/snapshot/snapshot-1")
            .await
            .len()
            == 1,
        "the primary-key table's snapshot is in the bucket"
    );

    // No credentials at all: an authentication error naming the options to set.
    let bootstrap = server.bootstrap_servers();
    // (the child runs while this runtime's other worker serves nothing the child needs: the
    // embedded server has its own runtime)
    let (kind, message) = tokio::task::block_in_place(|| child_read(&bootstrap, &lake, &[]));
    assert_eq!(kind, "authentication", "{message}");
    for named in [
        "paimon.s3.access-key",
        "paimon.s3.secret-key",
        "AWS_ACCESS_KEY_ID",
    ] {
        assert!(message.contains(named), "{message}");
    }
    assert!(!message.contains("Backtrace"), "{message}");
    assert!(!message.contains(PAIMON_SECRET), "{message}");
    // Only the standard AWS variables: the storage takes them.
    let (kind, message) = tokio::task::block_in_place(|| {
        child_read(
            &bootstrap,
            &lake,
            &[
                ("AWS_ACCESS_KEY_ID", "testing"),
                ("AWS_SECRET_ACCESS_KEY", PAIMON_SECRET),
            ],
        )
    });
    assert_eq!(kind, "rows", "{message}");
    // the primary-key table's commit tiered the log table's tail too
    assert_eq!(message, everything.len().to_string());

    let logged = String::from_utf8_lossy(&logs.0.lock().unwrap()).to_string();
    assert!(logged.contains("orders"), "the log capture works");
    assert!(
        !logged.contains(PAIMON_SECRET),
        "the warehouse's secret key was logged"
    );
}

/// Runs [`paimon_s3_child_read`] in a child process of this test binary with only `extra` in
/// its environment (plus instance metadata turned off and no AWS config files): its result,
/// `("rows", count)` or `(error kind, message)`.
fn child_read(bootstrap: &str, table: &str, extra: &[(&str, &str)]) -> (String, String) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "lake_paimon_s3::paimon_s3_child_read",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .env(CHILD_BOOTSTRAP, bootstrap)
        .env(CHILD_TABLE, table)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/nonexistent/riverlet-test-aws-config")
        .env(
            "AWS_SHARED_CREDENTIALS_FILE",
            "/nonexistent/riverlet-test-aws-credentials",
        )
        .envs(extra.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child read failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        // the harness may print the test's name on the same line first
        .find_map(|l| l.split_once(CHILD_RESULT).map(|(_, result)| result))
        .unwrap_or_else(|| panic!("no result line from the child: {stdout}"));
    let (kind, message) = line.split_once(' ').unwrap_or((line, ""));
    (kind.to_string(), message.to_string())
}

/// The child half of [`child_read`]: reads the table its environment names with a
/// connection given no lake catalog option and prints the outcome. Does nothing when not
/// started by [`child_read`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by paimon_lake_on_s3_read_with_the_catalog_options in a child process"]
async fn paimon_s3_child_read() {
    let (Ok(bootstrap), Ok(table)) = (std::env::var(CHILD_BOOTSTRAP), std::env::var(CHILD_TABLE))
    else {
        return;
    };
    let conn = Connection::connect(riverlet::client::ClientConfig::new(bootstrap))
        .await
        .unwrap();
    match read(&conn, &table).await {
        Ok(batches) => println!("{CHILD_RESULT}rows {}", total_rows(&batches)),
        Err(e) => println!(
            "{CHILD_RESULT}{} {}",
            e.kind().as_str(),
            e.to_string().replace('\n', "\\n")
        ),
    }
}
