//! Authorization (ACLs) against the embedded server with `authorizer.enabled`, SASL/PLAIN
//! users and `super.users = User:admin`, through the blocking client: every refusal is the
//! typed AUTHORIZATION_EXCEPTION whose message names the principal, the operation and the
//! resource; grants on a database or the cluster reach their tables; lists leave out what the
//! caller may not DESCRIBE; `drop_acls` removes exactly what its filters match; the ACLs
//! survive a restart.
//!
//! The server is always an embedded one of our configuration (against an external server the
//! tests report themselves not applicable).

use crate::common;

use std::sync::Arc;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use riverlet::acl::{
    self, AclBinding, AclFilter, OperationType as Op, Principal, Resource, ResourceType,
};
use riverlet::blocking::{Connection, ReadRequest, Table};
use riverlet::client::ClientConfig;
use riverlet::error::codes;
use riverlet::metadata::{AddColumn, DataType, PartitionSpec, Schema, TableDescriptor, TablePath};
use riverlet::{Error, ErrorKind};
use riverlet_server::{LocalServer, ServerConfig};

const USERS: [(&str, &str); 3] = [
    ("admin", "admin-pw"),
    ("alice", "alice-pw"),
    ("bob", "bob-pw"),
];

fn server_config(dir: &std::path::Path) -> ServerConfig {
    let mut c = ServerConfig::new(dir).with_port(0);
    for (u, p) in USERS {
        c = c.with_sasl_user(u, p);
    }
    c.with_options([
        ("authorizer.enabled", "true"),
        ("super.users", "User:admin"),
    ])
    .unwrap()
}

/// A server of `dir` (None, reported, against an external server).
fn start(dir: &std::path::Path) -> Option<LocalServer> {
    if common::is_external() {
        common::not_applicable("needs an embedded server with authorizer.enabled and our users");
        return None;
    }
    Some(LocalServer::start(server_config(dir)).unwrap())
}

fn login(srv: &LocalServer, user: &str) -> Connection {
    let pw = USERS.iter().find(|(u, _)| *u == user).unwrap().1;
    Connection::connect(ClientConfig::new(srv.bootstrap_servers()).with_sasl_plain(user, pw))
        .unwrap()
}

fn user(name: &str) -> Principal {
    Principal::user(name)
}

fn grant(admin: &Connection, resource: Resource, who: &str, op: Op) {
    admin
        .admin()
        .create_acls(&[AclBinding::allow(resource, user(who), op)])
        .unwrap();
}

/// Asserts a refusal: the typed authorization error naming `who`, `op` and `resource`.
#[track_caller]
fn assert_denied<T: std::fmt::Debug>(
    r: riverlet::Result<T>,
    who: &str,
    op: Op,
    resource: &Resource,
) {
    let e: Error = r.expect_err("expected an authorization failure");
    assert!(
        acl::is_authorization_error(&e),
        "not an authorization error: {e:?}"
    );
    assert_eq!(e.fluss_code(), Some(codes::AUTHORIZATION_EXCEPTION), "{e}");
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    let m = e.message();
    assert!(
        m.contains(&format!("name='{who}', type='User'")),
        "principal missing: {m}"
    );
    assert!(
        m.contains(&format!(" {op} ")),
        "operation {op} missing: {m}"
    );
    assert!(
        m.contains(&resource.fluss_string()),
        "resource {} missing: {m}",
        resource.fluss_string()
    );
}

fn log_descriptor() -> TableDescriptor {
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .build()
        .unwrap();
    TableDescriptor::builder(schema).build().unwrap()
}

fn pk_descriptor() -> TableDescriptor {
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .primary_key(["id"])
        .build()
        .unwrap();
    TableDescriptor::builder(schema).build().unwrap()
}

fn batch(ids: &[i32]) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("id", ArrowType::Int32, false),
        Field::new("name", ArrowType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(ids.to_vec())),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("n{i}")),
            )),
        ],
    )
    .unwrap()
}

fn append(conn: &Connection, path: &TablePath, ids: &[i32]) -> riverlet::Result<()> {
    let t = conn.table(path)?;
    let w = t.new_append_writer()?;
    let r = w.append(&batch(ids)).and_then(|h| h.wait());
    let _ = w.close();
    r
}

fn upsert(conn: &Connection, path: &TablePath, ids: &[i32]) -> riverlet::Result<()> {
    let t = conn.table(path)?;
    let w = t.new_upsert_writer(None)?;
    let r = w.upsert(&batch(ids)).and_then(|h| h.wait());
    let _ = w.close();
    r
}

fn read_rows(conn: &Connection, path: &TablePath) -> riverlet::Result<usize> {
    let t: Table = conn.table(path)?;
    let batches = t.read(&ReadRequest::default())?.read_all()?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

fn lookup(conn: &Connection, path: &TablePath, id: i32) -> riverlet::Result<usize> {
    let t = conn.table(path)?;
    let found = t
        .new_lookuper()?
        .lookup_rows(&[vec![riverlet::row::Datum::Int(id)]])?;
    Ok(found.iter().flatten().count())
}

/// A database `db` with a log table `db.logs` (rows 1..3) and a PK table `db.kv` (keys 1, 2),
/// created by the super user.
fn setup(admin: &Connection) -> (TablePath, TablePath) {
    let a = admin.admin();
    a.create_database("db", false).unwrap();
    let logs = TablePath::new("db", "logs");
    let kv = TablePath::new("db", "kv");
    a.create_table(&logs, &log_descriptor(), false).unwrap();
    a.create_table(&kv, &pk_descriptor(), false).unwrap();
    append(admin, &logs, &[1, 2, 3]).unwrap();
    upsert(admin, &kv, &[1, 2]).unwrap();
    (logs, kv)
}

#[test]
fn creating_and_dropping_needs_create_and_drop() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let alice = login(&srv, "alice");
    // 1. without CREATE on the cluster, no database
    assert_denied(
        alice.admin().create_database("a_db", false),
        "alice",
        Op::Create,
        &Resource::cluster(),
    );
    // 2. CREATE on the cluster lets her
    grant(&admin, Resource::cluster(), "alice", Op::Create);
    alice.admin().create_database("a_db", false).unwrap();
    // 3. without CREATE on a database (or the cluster), no table in it
    admin.admin().create_database("other", false).unwrap();
    let t = TablePath::new("other", "t");
    let bob = login(&srv, "bob");
    assert_denied(
        bob.admin().create_table(&t, &log_descriptor(), false),
        "bob",
        Op::Create,
        &Resource::database("other"),
    );
    // 4. CREATE on the cluster covers every database's tables
    alice
        .admin()
        .create_table(
            &TablePath::new("other", "by_alice"),
            &log_descriptor(),
            false,
        )
        .unwrap();
    // 5. CREATE on a database (only) is enough for a table in it
    grant(&admin, Resource::database("other"), "bob", Op::Create);
    bob.admin()
        .create_table(&t, &log_descriptor(), false)
        .unwrap();
    // 6. ... and not for a database
    assert_denied(
        bob.admin().create_database("b_db", false),
        "bob",
        Op::Create,
        &Resource::cluster(),
    );
    // 7. without DROP, no drop of a table
    let t_res = Resource::table("other", "t");
    assert_denied(
        alice.admin().drop_table(&t, false),
        "alice",
        Op::Drop,
        &t_res,
    );
    // 8. nor of a database
    assert_denied(
        bob.admin().drop_database("other", false, true),
        "bob",
        Op::Drop,
        &Resource::database("other"),
    );
    // 9. DROP on the table lets her drop it
    grant(&admin, t_res.clone(), "alice", Op::Drop);
    alice.admin().drop_table(&t, false).unwrap();
    assert!(!admin.admin().table_exists(&t).unwrap());
    // 10. DROP on a database lets bob drop it
    grant(&admin, Resource::database("other"), "bob", Op::Drop);
    bob.admin().drop_database("other", false, true).unwrap();
    assert!(!admin.admin().database_exists("other").unwrap());
}

#[test]
fn writes_need_write_and_reads_need_read() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let (logs, kv) = setup(&admin);
    let alice = login(&srv, "alice");
    let bob = login(&srv, "bob");
    let logs_r = Resource::table("db", "logs");
    let kv_r = Resource::table("db", "kv");
    // alice may read both tables, bob may write both
    for r in [&logs_r, &kv_r] {
        grant(&admin, r.clone(), "alice", Op::Read);
        grant(&admin, r.clone(), "bob", Op::Write);
    }
    // 11. READ is not WRITE: no append
    assert_denied(append(&alice, &logs, &[9]), "alice", Op::Write, &logs_r);
    // 12. nor upsert
    assert_denied(upsert(&alice, &kv, &[9]), "alice", Op::Write, &kv_r);
    // 13. READ reads the log
    assert_eq!(read_rows(&alice, &logs).unwrap(), 3);
    // 14. and looks up keys
    assert_eq!(lookup(&alice, &kv, 1).unwrap(), 1);
    // 15. and reads the PK table's latest view
    assert_eq!(read_rows(&alice, &kv).unwrap(), 2);
    // 16. WRITE is not READ: no scan
    assert_denied(read_rows(&bob, &logs), "bob", Op::Read, &logs_r);
    // 17. no lookup
    assert_denied(lookup(&bob, &kv, 1), "bob", Op::Read, &kv_r);
    // 18. WRITE appends
    append(&bob, &logs, &[4, 5]).unwrap();
    // 19. and upserts
    upsert(&bob, &kv, &[3]).unwrap();
    assert_eq!(read_rows(&alice, &logs).unwrap(), 5);
    assert_eq!(read_rows(&alice, &kv).unwrap(), 3);
    // 20. the super user needs no ACL at all
    assert_eq!(read_rows(&admin, &logs).unwrap(), 5);
    append(&admin, &logs, &[6]).unwrap();
}

#[test]
fn describe_filters_lists_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let (logs, _kv) = setup(&admin);
    let alice = login(&srv, "alice");
    let logs_r = Resource::table("db", "logs");
    // 21. without DESCRIBE nothing is listed
    assert!(alice.admin().list_databases().unwrap().is_empty());
    assert!(alice.admin().list_tables("db").unwrap().is_empty());
    // 22. nor described
    assert_denied(
        alice.admin().table_info(&logs),
        "alice",
        Op::Describe,
        &logs_r,
    );
    // 23. nor opened
    assert_denied(
        alice.table(&logs).map(|_| ()),
        "alice",
        Op::Describe,
        &logs_r,
    );
    // 24. existence is answered to everyone (by design in Fluss)
    assert!(alice.admin().table_exists(&logs).unwrap());
    // 25. DESCRIBE on one table lists that table only, describes it, reads nothing
    grant(&admin, logs_r.clone(), "alice", Op::Describe);
    assert_eq!(
        alice.admin().list_tables("db").unwrap(),
        vec!["logs".to_string()]
    );
    assert_eq!(
        alice.admin().table_info(&logs).unwrap().table_id,
        admin.admin().table_info(&logs).unwrap().table_id
    );
    assert_denied(read_rows(&alice, &logs), "alice", Op::Read, &logs_r);
    // 26. a table grant does not show the database in list_databases (DESCRIBE on it does)
    assert!(alice.admin().list_databases().unwrap().is_empty());
    grant(&admin, Resource::database("db"), "alice", Op::Describe);
    assert_eq!(
        alice.admin().list_databases().unwrap(),
        vec!["db".to_string()]
    );
    // 27. and DESCRIBE on the database lists all its tables
    let mut tables = alice.admin().list_tables("db").unwrap();
    tables.sort();
    assert_eq!(tables, vec!["kv".to_string(), "logs".to_string()]);
    // 28. ALTER needs ALTER (DESCRIBE is not enough)
    assert_denied(
        alice
            .admin()
            .add_columns(&logs, &[AddColumn::new("extra", DataType::string())]),
        "alice",
        Op::Alter,
        &logs_r,
    );
}

#[test]
fn database_and_cluster_grants_reach_tables() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let (logs, kv) = setup(&admin);
    let alice = login(&srv, "alice");
    let bob = login(&srv, "bob");
    // 29. READ on the database reads its tables, also one created afterwards
    grant(&admin, Resource::database("db"), "alice", Op::Read);
    assert_eq!(read_rows(&alice, &logs).unwrap(), 3);
    let later = TablePath::new("db", "later");
    admin
        .admin()
        .create_table(&later, &log_descriptor(), false)
        .unwrap();
    append(&admin, &later, &[1]).unwrap();
    assert_eq!(read_rows(&alice, &later).unwrap(), 1);
    // 30. ... but does not write them
    assert_denied(
        append(&alice, &later, &[2]),
        "alice",
        Op::Write,
        &Resource::table("db", "later"),
    );
    // 31. a database grant does not reach another database (not even to open its tables)
    admin.admin().create_database("db2", false).unwrap();
    let other = TablePath::new("db2", "t");
    admin
        .admin()
        .create_table(&other, &log_descriptor(), false)
        .unwrap();
    assert_denied(
        read_rows(&alice, &other),
        "alice",
        Op::Describe,
        &Resource::table("db2", "t"),
    );
    // 32. ALL on the cluster allows everything everywhere
    grant(&admin, Resource::cluster(), "bob", Op::All);
    append(&bob, &other, &[7]).unwrap();
    assert_eq!(read_rows(&bob, &other).unwrap(), 1);
    upsert(&bob, &kv, &[5]).unwrap();
    bob.admin().create_database("bobs", false).unwrap();
    bob.admin().drop_database("db2", false, true).unwrap();
    // 33. ALL on a table grants READ, WRITE and DROP on it, not on its neighbour
    let carol_table = Resource::table("db", "kv");
    grant(&admin, carol_table, "alice", Op::All);
    upsert(&alice, &kv, &[8]).unwrap();
    assert_eq!(lookup(&alice, &kv, 8).unwrap(), 1);
    assert_denied(
        append(&alice, &logs, &[1]),
        "alice",
        Op::Write,
        &Resource::table("db", "logs"),
    );
    alice.admin().drop_table(&kv, false).unwrap();
}

#[test]
fn wildcards_hosts_and_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let (logs, _kv) = setup(&admin);
    let alice = login(&srv, "alice");
    let bob = login(&srv, "bob");
    let logs_r = Resource::table("db", "logs");
    // 34. an ACL for another host does not apply to this client (the table does not open)
    admin
        .admin()
        .create_acls(&[
            AclBinding::allow(logs_r.clone(), user("alice"), Op::Read).from_host("10.255.0.1")
        ])
        .unwrap();
    assert_denied(read_rows(&alice, &logs), "alice", Op::Describe, &logs_r);
    // 35. one for this client's address does
    admin
        .admin()
        .create_acls(&[
            AclBinding::allow(logs_r.clone(), user("alice"), Op::Read).from_host("127.0.0.1")
        ])
        .unwrap();
    assert_eq!(read_rows(&alice, &logs).unwrap(), 3);
    // 36. the wildcard principal covers everyone
    assert_denied(read_rows(&bob, &logs), "bob", Op::Describe, &logs_r);
    admin
        .admin()
        .create_acls(&[AclBinding::allow(
            logs_r.clone(),
            Principal::wildcard(),
            Op::Read,
        )])
        .unwrap();
    assert_eq!(read_rows(&bob, &logs).unwrap(), 3);
    // 37. the wildcard table resource covers every table
    admin
        .admin()
        .create_acls(&[AclBinding::allow(
            Resource::new(ResourceType::Table, "*"),
            user("bob"),
            Op::Write,
        )])
        .unwrap();
    append(&bob, &logs, &[4]).unwrap();
    // 38. creating a partition needs WRITE on the table
    let parted = TablePath::new("db", "parted");
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("region", DataType::string().not_null())
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .partitioned_by(["region"])
        .build()
        .unwrap();
    admin.admin().create_table(&parted, &d, false).unwrap();
    grant(&admin, Resource::table("db", "parted"), "alice", Op::Read);
    assert_denied(
        alice
            .admin()
            .create_partition(&parted, &PartitionSpec::new([("region", "eu")]), false),
        "alice",
        Op::Write,
        &Resource::table("db", "parted"),
    );
    bob.admin()
        .create_partition(&parted, &PartitionSpec::new([("region", "eu")]), false)
        .unwrap();
    // 39. and the partition is listed to a reader
    assert_eq!(alice.admin().list_partitions(&parted).unwrap().len(), 1);
}

#[test]
fn managing_acls_needs_alter_and_filters_match_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let (logs, _kv) = setup(&admin);
    let alice = login(&srv, "alice");
    let bob = login(&srv, "bob");
    let logs_r = Resource::table("db", "logs");
    let bob_reads = AclBinding::allow(logs_r.clone(), user("bob"), Op::Read);
    // 40. without ALTER no ACL can be added; a table's ACLs need ALTER on its database
    assert_denied(
        alice.admin().create_acls(std::slice::from_ref(&bob_reads)),
        "alice",
        Op::Alter,
        &Resource::database("db"),
    );
    // 41. ALTER on the table itself is not enough (the granularity is the database)
    grant(&admin, logs_r.clone(), "alice", Op::Alter);
    assert_denied(
        alice.admin().create_acls(std::slice::from_ref(&bob_reads)),
        "alice",
        Op::Alter,
        &Resource::database("db"),
    );
    // 42. ALTER on the database is
    grant(&admin, Resource::database("db"), "alice", Op::Alter);
    alice
        .admin()
        .create_acls(std::slice::from_ref(&bob_reads))
        .unwrap();
    assert_eq!(read_rows(&bob, &logs).unwrap(), 3);
    // 43. a cluster ACL needs ALTER on the cluster
    assert_denied(
        alice.admin().create_acls(&[AclBinding::allow(
            Resource::cluster(),
            user("bob"),
            Op::Create,
        )]),
        "alice",
        Op::Alter,
        &Resource::cluster(),
    );
    // 44. listing shows only the ACLs of resources the caller may DESCRIBE
    let bob_sees = bob.admin().list_acls(&AclFilter::any()).unwrap();
    assert!(
        bob_sees.iter().all(|b| b.resource == logs_r),
        "{bob_sees:?}"
    );
    let all = admin.admin().list_acls(&AclFilter::any()).unwrap();
    assert_eq!(all.len(), 3, "{all:?}");
    // 45. filters by principal
    let of_bob = admin
        .admin()
        .list_acls(&AclFilter::any().with_principal(user("bob")))
        .unwrap();
    assert_eq!(of_bob, vec![bob_reads.clone()]);
    // 46. drop_acls removes exactly what matches: alice's ALTER on the table only
    let gone = admin
        .admin()
        .drop_acls(&[AclFilter::any()
            .with_resource(&logs_r)
            .with_operation(Op::Alter)])
        .unwrap();
    assert_eq!(
        gone,
        vec![AclBinding::allow(logs_r.clone(), user("alice"), Op::Alter)]
    );
    let left = admin.admin().list_acls(&AclFilter::any()).unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&bob_reads));
    // 47. a filter matching nothing removes nothing
    let none = admin
        .admin()
        .drop_acls(&[AclFilter::any().with_principal(user("nobody"))])
        .unwrap();
    assert!(none.is_empty());
    assert_eq!(admin.admin().list_acls(&AclFilter::any()).unwrap().len(), 2);
    // 48. dropping needs ALTER too: bob may not drop his own grant
    assert_denied(
        bob.admin().drop_acls(&[AclFilter::exact(&bob_reads)]),
        "bob",
        Op::Alter,
        &Resource::database("db"),
    );
    // 49. once dropped, the grant is gone
    assert_eq!(
        alice
            .admin()
            .drop_acls(&[AclFilter::exact(&bob_reads)])
            .unwrap(),
        vec![bob_reads]
    );
    assert_denied(read_rows(&bob, &logs), "bob", Op::Describe, &logs_r);
}

#[test]
fn acls_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let Some(srv) = start(dir.path()) else { return };
    let admin = login(&srv, "admin");
    let (logs, _kv) = setup(&admin);
    let logs_r = Resource::table("db", "logs");
    grant(&admin, logs_r.clone(), "alice", Op::Read);
    grant(&admin, logs_r.clone(), "bob", Op::Read);
    admin
        .admin()
        .drop_acls(&[AclFilter::any().with_principal(user("bob"))])
        .unwrap();
    let before = admin.admin().list_acls(&AclFilter::any()).unwrap();
    admin.close().unwrap();
    drop(srv);
    let srv = LocalServer::start(server_config(dir.path())).unwrap();
    let admin = login(&srv, "admin");
    // 50. the same ACLs after the restart
    assert_eq!(admin.admin().list_acls(&AclFilter::any()).unwrap(), before);
    // 51. alice's grant still applies, bob's dropped one is still gone
    assert_eq!(read_rows(&login(&srv, "alice"), &logs).unwrap(), 3);
    assert_denied(
        read_rows(&login(&srv, "bob"), &logs),
        "bob",
        Op::Describe,
        &logs_r,
    );
}

#[test]
fn anonymous_and_disabled_authorizer() {
    // 52. on a listener without SASL the principal is User:ANONYMOUS
    let dir = tempfile::tempdir().unwrap();
    if common::is_external() {
        common::not_applicable("needs an embedded server with authorizer.enabled");
        return;
    }
    let cfg = ServerConfig::new(dir.path())
        .with_port(0)
        .with_options([("authorizer.enabled", "true")])
        .unwrap();
    let srv = LocalServer::start(cfg).unwrap();
    let anon = Connection::connect_to(&srv.bootstrap_servers()).unwrap();
    assert_denied(
        anon.admin().create_database("x", false),
        "ANONYMOUS",
        Op::Create,
        &Resource::cluster(),
    );
    // 53. ... and nobody can grant there but a super user: ALTER on the cluster is refused
    assert_denied(
        anon.admin().create_acls(&[AclBinding::allow(
            Resource::cluster(),
            Principal::anonymous(),
            Op::All,
        )]),
        "ANONYMOUS",
        Op::Alter,
        &Resource::cluster(),
    );
    drop(anon);
    drop(srv);
    // 54. with User:ANONYMOUS a super user, it may do everything
    let cfg = ServerConfig::new(dir.path())
        .with_port(0)
        .with_options([
            ("authorizer.enabled", "true"),
            ("super.users", "User:ANONYMOUS"),
        ])
        .unwrap();
    let srv = LocalServer::start(cfg).unwrap();
    let anon = Connection::connect_to(&srv.bootstrap_servers()).unwrap();
    anon.admin().create_database("x", false).unwrap();
    drop(anon);
    drop(srv);
    // 55. without authorizer.enabled the ACL APIs answer SECURITY_DISABLED_EXCEPTION
    let srv = LocalServer::start(ServerConfig::new(dir.path()).with_port(0)).unwrap();
    let conn = Connection::connect_to(&srv.bootstrap_servers()).unwrap();
    let e = conn.admin().list_acls(&AclFilter::any()).unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(codes::SECURITY_DISABLED_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains("No Authorizer is configured"), "{e}");
    // and every request is allowed
    conn.admin().create_database("y", false).unwrap();
}

#[test]
fn bad_acl_input_is_a_clear_error() {
    // 56. an ANY operation cannot be granted; the error names the binding
    let b = AclBinding::allow(Resource::cluster(), user("alice"), Op::Any);
    let e = b.validate().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("ANY"), "{e}");
    // 57. bad texts name themselves
    let e = Principal::parse("alice").unwrap_err();
    assert!(e.message().contains("'alice'"), "{e}");
    let e = ServerConfig::new("/tmp/unused")
        .with_options([("super.users", "admin")])
        .unwrap_err();
    assert!(
        e.message().contains("super.users") && e.message().contains("admin"),
        "{e}"
    );
    let e = ServerConfig::new("/tmp/unused")
        .with_options([("authorizer.enabled", "yes")])
        .unwrap_err();
    assert!(e.message().contains("authorizer.enabled"), "{e}");
}
