//! Producer offsets (RegisterProducerOffsets / GetProducerOffsets / DeleteProducerOffsets,
//! API keys 1053-1055) against the embedded server through Riverlet's admin API, with Fluss
//! 0.9.1's semantics: a registration is kept until deleted or expired, registering again
//! while it lives keeps the first (ALREADY_EXISTS), an unknown producer has no offsets, an
//! invalid producer id is INVALID_PRODUCER_ID_EXCEPTION naming it, and with
//! `authorizer.enabled` registering and deleting need WRITE on each table (an unknown table
//! id: UNKNOWN_TABLE_OR_BUCKET_EXCEPTION) while getting leaves out the tables the caller may
//! not READ. Registrations survive a restart; the server option
//! `coordinator.producer-offsets.ttl` (Fluss's name) is the TTL of a registration whose request
//! names none.
//!
//! The server is always an embedded one (against an external server the tests report
//! themselves not applicable).

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use riverlet::acl::{AclBinding, OperationType as Op, Principal, Resource};
use riverlet::blocking::Connection;
use riverlet::client::{ClientConfig, ProducerBucket, RegisterResult};
use riverlet::error::codes;
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet_server::{LocalServer, ServerConfig};

fn plain_config(dir: &std::path::Path) -> ServerConfig {
    ServerConfig::new(dir).with_port(0)
}

fn acl_config(dir: &std::path::Path) -> ServerConfig {
    ServerConfig::new(dir)
        .with_port(0)
        .with_sasl_user("admin", "admin-pw")
        .with_sasl_user("alice", "alice-pw")
        .with_options([
            ("authorizer.enabled", "true"),
            ("super.users", "User:admin"),
        ])
        .unwrap()
}

fn embedded() -> bool {
    if common::is_external() {
        common::not_applicable("needs embedded servers it restarts on the same data directory");
        return false;
    }
    true
}

fn connect(srv: &LocalServer, user: Option<(&str, &str)>) -> Connection {
    let mut c = ClientConfig::new(srv.bootstrap_servers());
    if let Some((u, p)) = user {
        c = c.with_sasl_plain(u, p);
    }
    Connection::connect(c).unwrap()
}

/// Creates `db.<name>` (a log table with `buckets` buckets) and returns its table id.
fn create_table(conn: &Connection, name: &str, buckets: i32) -> i64 {
    let a = conn.admin();
    a.create_database("db", true).unwrap();
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(buckets), Vec::<String>::new())
        .build()
        .unwrap();
    let path = TablePath::new("db", name);
    a.create_table(&path, &d, false).unwrap();
    a.table_info(&path).unwrap().table_id
}

fn offsets(entries: &[(i64, i32, i64)]) -> BTreeMap<ProducerBucket, i64> {
    entries
        .iter()
        .map(|&(table_id, bucket, offset)| {
            (
                ProducerBucket {
                    table_id,
                    partition_id: None,
                    bucket,
                },
                offset,
            )
        })
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn register_get_delete_survive_a_restart() {
    if !embedded() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let srv = LocalServer::start(plain_config(dir.path())).unwrap();
    let conn = connect(&srv, None);
    let t1 = create_table(&conn, "t1", 2);
    let t2 = create_table(&conn, "t2", 1);
    let a = conn.admin();

    assert_eq!(a.get_producer_offsets("job-a").unwrap(), None);
    let first = offsets(&[(t1, 0, 10), (t1, 1, 20), (t2, 0, 5)]);
    let before = now_ms();
    let r = a
        .register_producer_offsets("job-a", &first, Some(Duration::from_secs(3600)))
        .unwrap();
    let after = now_ms();
    assert_eq!(r, RegisterResult::Created);
    // Registering again while it lives keeps the first registration.
    let r = a
        .register_producer_offsets("job-a", &offsets(&[(t1, 0, 99)]), None)
        .unwrap();
    assert_eq!(r, RegisterResult::AlreadyExists);
    let got = a.get_producer_offsets("job-a").unwrap().unwrap();
    assert_eq!(got.producer_id, "job-a");
    assert_eq!(got.offsets, first);
    assert!(
        (before + 3_600_000..=after + 3_600_000).contains(&got.expiration_time_ms),
        "expiration {} not within the TTL of the call [{before}, {after}] + 1 h",
        got.expiration_time_ms
    );
    // A partitioned bucket keeps its partition id; the default TTL is Fluss's 24 h.
    let part = BTreeMap::from([(
        ProducerBucket {
            table_id: t1,
            partition_id: Some(7),
            bucket: 1,
        },
        3,
    )]);
    let before = now_ms();
    assert_eq!(
        a.register_producer_offsets("job-b", &part, None).unwrap(),
        RegisterResult::Created
    );
    let got_b = a.get_producer_offsets("job-b").unwrap().unwrap();
    assert_eq!(got_b.offsets, part);
    assert!(got_b.expiration_time_ms >= before + 24 * 3_600_000);
    conn.close().unwrap();
    drop(srv);

    // Both registrations survive a restart; deleting one leaves the other.
    let srv = LocalServer::start(plain_config(dir.path())).unwrap();
    let conn = connect(&srv, None);
    let a = conn.admin();
    assert_eq!(a.get_producer_offsets("job-a").unwrap().unwrap(), got);
    assert_eq!(a.get_producer_offsets("job-b").unwrap().unwrap(), got_b);
    a.delete_producer_offsets("job-a").unwrap();
    assert_eq!(a.get_producer_offsets("job-a").unwrap(), None);
    // Deleting what is not registered does nothing (as Fluss).
    a.delete_producer_offsets("job-a").unwrap();
    a.delete_producer_offsets("never-registered").unwrap();
    // Once deleted, the producer registers anew.
    assert_eq!(
        a.register_producer_offsets("job-a", &offsets(&[(t2, 0, 1)]), None)
            .unwrap(),
        RegisterResult::Created
    );
    a.delete_producer_offsets("job-a").unwrap();
    conn.close().unwrap();
    drop(srv);

    let srv = LocalServer::start(plain_config(dir.path())).unwrap();
    let conn = connect(&srv, None);
    let a = conn.admin();
    assert_eq!(a.get_producer_offsets("job-a").unwrap(), None);
    assert_eq!(a.get_producer_offsets("job-b").unwrap().unwrap(), got_b);
    conn.close().unwrap();
}

#[test]
fn expired_registrations_are_gone_and_replaced() {
    if !embedded() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let srv = LocalServer::start(plain_config(dir.path())).unwrap();
    let conn = connect(&srv, None);
    let t = create_table(&conn, "t", 1);
    let a = conn.admin();
    // A TTL of 0 expires at once: nothing to get, and the next registration replaces it.
    assert_eq!(
        a.register_producer_offsets("job", &offsets(&[(t, 0, 1)]), Some(Duration::ZERO))
            .unwrap(),
        RegisterResult::Created
    );
    assert_eq!(a.get_producer_offsets("job").unwrap(), None);
    assert_eq!(
        a.register_producer_offsets("job", &offsets(&[(t, 0, 2)]), None)
            .unwrap(),
        RegisterResult::Created
    );
    assert_eq!(
        a.get_producer_offsets("job").unwrap().unwrap().offsets,
        offsets(&[(t, 0, 2)])
    );
    conn.close().unwrap();
}

#[test]
fn the_server_ttl_option_expires_registrations_without_a_ttl() {
    if !embedded() {
        return;
    }
    // Fluss's option name; a bad value is refused naming it.
    let e = ServerConfig::new("unused")
        .with_options([("coordinator.producer-offsets.ttl", "soon")])
        .unwrap_err();
    assert!(
        e.message().contains("'soon'") && e.message().contains("coordinator.producer-offsets.ttl"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let srv = LocalServer::start(
        plain_config(dir.path())
            .with_options([("coordinator.producer-offsets.ttl", "2 s")])
            .unwrap(),
    )
    .unwrap();
    let conn = connect(&srv, None);
    let t = create_table(&conn, "t", 1);
    let a = conn.admin();
    let before = now_ms();
    assert_eq!(
        a.register_producer_offsets("job", &offsets(&[(t, 0, 1)]), None)
            .unwrap(),
        RegisterResult::Created
    );
    let got = a.get_producer_offsets("job").unwrap().expect("registered");
    // It expires 2 s after registering (not after the default 24 h).
    assert!(
        got.expiration_time_ms >= before + 2_000 && got.expiration_time_ms <= now_ms() + 2_000,
        "expiration {} registered at {before}",
        got.expiration_time_ms
    );
    // Poll until it is gone rather than sleep a fixed time: gone, and registering again
    // creates a new registration instead of keeping the expired one.
    while now_ms() <= got.expiration_time_ms {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(a.get_producer_offsets("job").unwrap(), None);
    assert_eq!(
        a.register_producer_offsets("job", &offsets(&[(t, 0, 2)]), None)
            .unwrap(),
        RegisterResult::Created
    );
    // A TTL given in the request still wins over the option.
    assert_eq!(
        a.register_producer_offsets(
            "other",
            &offsets(&[(t, 0, 3)]),
            Some(Duration::from_secs(3600))
        )
        .unwrap(),
        RegisterResult::Created
    );
    let other = a.get_producer_offsets("other").unwrap().unwrap();
    assert!(other.expiration_time_ms >= before + 3_600_000, "{other:?}");
    conn.close().unwrap();
}

#[test]
fn invalid_producer_ids_are_refused_by_name() {
    if !embedded() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let srv = LocalServer::start(plain_config(dir.path())).unwrap();
    let conn = connect(&srv, None);
    let t = create_table(&conn, "t", 1);
    let a = conn.admin();
    let long = "x".repeat(201);
    for bad in ["", "job/1", "job 1", ".", "..", long.as_str()] {
        let results = [
            a.register_producer_offsets(bad, &offsets(&[(t, 0, 1)]), None)
                .map(|_| ()),
            a.get_producer_offsets(bad).map(|_| ()),
            a.delete_producer_offsets(bad),
        ];
        for r in results {
            let e = r.expect_err(bad);
            assert_eq!(
                e.fluss_code(),
                Some(codes::INVALID_PRODUCER_ID_EXCEPTION),
                "{bad:?}: {e}"
            );
            assert!(
                e.message()
                    .contains(&format!("Invalid producer ID '{bad}'")),
                "{bad:?}: {e}"
            );
        }
    }
    // Nothing was registered by the refused calls.
    assert!(!dir
        .path()
        .join(riverlet_server::service::PRODUCER_OFFSETS_FILE)
        .exists());
    conn.close().unwrap();
}

#[test]
fn with_acls_register_and_delete_need_write_and_get_leaves_out_unreadable_tables() {
    if !embedded() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let srv = LocalServer::start(acl_config(dir.path())).unwrap();
    let admin = connect(&srv, Some(("admin", "admin-pw")));
    let alice = connect(&srv, Some(("alice", "alice-pw")));
    let mine = create_table(&admin, "mine", 1);
    let other = create_table(&admin, "other", 1);
    let alice_p = Principal::user("alice");
    let grant = |t: &str, op: Op| {
        admin
            .admin()
            .create_acls(&[AclBinding::allow(
                Resource::table("db", t),
                alice_p.clone(),
                op,
            )])
            .unwrap()
    };

    // An unknown table id: UNKNOWN_TABLE_OR_BUCKET, even for the super user (Fluss resolves
    // the table before authorizing).
    let e = admin
        .admin()
        .register_producer_offsets("job", &offsets(&[(987_654, 0, 1)]), None)
        .unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains("987654"), "{e}");

    // Without WRITE on every table named, alice may not register.
    let both = offsets(&[(mine, 0, 1), (other, 0, 2)]);
    let e = alice
        .admin()
        .register_producer_offsets("job", &both, None)
        .unwrap_err();
    assert!(riverlet::acl::is_authorization_error(&e), "{e}");
    assert!(
        e.message().contains("alice") && e.message().contains("WRITE"),
        "{e}"
    );
    grant("mine", Op::Write);
    let e = alice
        .admin()
        .register_producer_offsets("job", &both, None)
        .unwrap_err();
    assert!(riverlet::acl::is_authorization_error(&e), "{e}");
    assert!(e.message().contains("other"), "{e}");
    grant("other", Op::Write);
    assert_eq!(
        alice
            .admin()
            .register_producer_offsets("job", &both, None)
            .unwrap(),
        RegisterResult::Created
    );

    // Getting leaves out the tables alice may not READ.
    let got = alice.admin().get_producer_offsets("job").unwrap().unwrap();
    assert!(got.offsets.is_empty(), "{got:?}");
    grant("mine", Op::Read);
    let got = alice.admin().get_producer_offsets("job").unwrap().unwrap();
    assert_eq!(got.offsets, offsets(&[(mine, 0, 1)]));
    assert_eq!(
        admin
            .admin()
            .get_producer_offsets("job")
            .unwrap()
            .unwrap()
            .offsets,
        both
    );

    // Deleting needs WRITE on each registered table: a registration by the super user on a
    // table alice may not write stays.
    admin
        .admin()
        .drop_acls(&[riverlet::acl::AclFilter::any()
            .with_principal(alice_p.clone())
            .with_operation(Op::Write)])
        .unwrap();
    let e = alice.admin().delete_producer_offsets("job").unwrap_err();
    assert!(riverlet::acl::is_authorization_error(&e), "{e}");
    assert!(admin.admin().get_producer_offsets("job").unwrap().is_some());
    admin.admin().delete_producer_offsets("job").unwrap();
    assert_eq!(admin.admin().get_producer_offsets("job").unwrap(), None);
    alice.close().unwrap();
    admin.close().unwrap();
}
