//! `riverlet acl add|list|drop` against `riverlet serve --set authorizer.enabled=true` with
//! SASL users, as a user runs them: the grant takes effect, a refusal exits non-zero with the
//! server's message naming principal, operation and resource.

use std::process::Command;

use crate::common;
use common::serve;

fn riverlet(bootstrap: &str, user: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .args(args)
        .args(["--username", user])
        .env("RIVERLET_BOOTSTRAP", bootstrap)
        .env("RIVERLET_PASSWORD", format!("{user}-pw"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn add_list_and_drop() {
    let s = serve(&[
        "--sasl-user",
        "admin:admin-pw",
        "--sasl-user",
        "alice:alice-pw",
        "--set",
        "authorizer.enabled=true",
        "--set",
        "super.users=User:admin",
    ]);
    let b = s.bootstrap.as_str();
    let (ok, out, err) = riverlet(
        b,
        "admin",
        &["create-table", "shop.orders", "--schema", "id INT"],
    );
    assert!(ok, "{out}{err}");
    // alice sees nothing and may not write
    let (ok, out, err) = riverlet(b, "alice", &["write", "shop.orders", "[[1]]"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("name='alice'") && err.contains("DESCRIBE") && err.contains("shop.orders"),
        "{err}"
    );
    // the super user grants WRITE on the database
    let (ok, out, err) = riverlet(
        b,
        "admin",
        &[
            "acl",
            "add",
            "--resource",
            "cluster.shop",
            "--principal",
            "User:alice",
            "--operation",
            "write",
        ],
    );
    assert!(
        ok && out.contains("added User:alice ALLOW WRITE"),
        "{out}{err}"
    );
    let (ok, out, err) = riverlet(b, "alice", &["write", "shop.orders", "[[1], [2]]"]);
    assert!(ok && out.contains("wrote 2 row(s)"), "{out}{err}");
    let (ok, out, err) = riverlet(b, "admin", &["acl", "list", "--principal", "User:alice"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "cluster.shop\tUser:alice\tWRITE\thost=*\tALLOW");
    // alice may not manage ACLs (ALTER on the database)
    let (ok, _, err) = riverlet(b, "alice", &["acl", "drop", "--resource", "cluster.shop"]);
    assert!(
        !ok && err.contains("ALTER") && err.contains("type=DATABASE, name='shop'"),
        "{err}"
    );
    let (ok, out, err) = riverlet(b, "admin", &["acl", "drop", "--resource", "cluster.shop"]);
    assert!(ok && out.contains("dropped 1 ACL(s)"), "{out}{err}");
    let (ok, out, _) = riverlet(b, "admin", &["acl", "list"]);
    assert!(ok && out.trim().is_empty(), "{out}");
    // bad input names the value
    let (ok, _, err) = riverlet(
        b,
        "admin",
        &[
            "acl",
            "add",
            "--resource",
            "shop",
            "--principal",
            "User:alice",
            "--operation",
            "READ",
        ],
    );
    assert!(!ok && err.contains("'shop'"), "{err}");
}
