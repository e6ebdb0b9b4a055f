//! Dropping a lake-enabled table (issue #31 item 6): its Iceberg table stays, as with Apache
//! Fluss 0.9.1 (its coordinator only stops tiering a dropped table; its lake catalog has no
//! drop), with its data files; the same table created again is refused with
//! LAKE_TABLE_ALREADY_EXIST while that Iceberg table holds rows (as Fluss refuses a lake table
//! that is not empty), and takes over an empty one (README, "Lake-enabled tables").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use riverlet::error::codes::LAKE_TABLE_ALREADY_EXIST;
use riverlet::metadata::{TableDescriptor, TablePath};

use super::lake_commit_faults::{
    ids_once, read, schema, serve, snapshot_ids, wait_all_committed, write,
};

/// Every file under `dir`.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p);
            }
        }
    }
    out
}

fn descriptor() -> TableDescriptor {
    TableDescriptor::builder(schema())
        .distributed_by(Some(2), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap()
}

#[test]
fn a_dropped_lake_tables_iceberg_table_stays() {
    let dir = tempfile::tempdir().unwrap();
    let (data, warehouse) = (dir.path().join("data"), dir.path().join("warehouse"));
    let path = TablePath::new("dropped", "events");
    let name = path.to_string();
    {
        let s = serve(&data, &warehouse, None);
        let conn = s.connect();
        conn.admin().create_database("dropped", true).unwrap();
        conn.admin()
            .create_table(&path, &descriptor(), false)
            .unwrap();
        write(&conn, &path, 0..10);
    }
    // the next start commits the rows
    let s = serve(&data, &warehouse, None);
    let conn = s.connect();
    wait_all_committed(&conn, &path, "first commit");
    assert_eq!(snapshot_ids(&conn, &path).len(), 1);
    let parquet = |files: &BTreeSet<PathBuf>| -> BTreeSet<PathBuf> {
        files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .cloned()
            .collect()
    };
    let before = files_under(&warehouse);
    assert!(!parquet(&before).is_empty(), "no data file in {before:?}");

    conn.admin().drop_table(&path, false).unwrap();
    assert!(!conn.admin().table_exists(&path).unwrap());
    let after = files_under(&warehouse);
    assert!(
        before.is_subset(&after),
        "files of the dropped table's Iceberg table removed: {:?}",
        before.difference(&after).collect::<Vec<_>>()
    );
    drop(conn);
    drop(s);

    // After a restart, the same table again is refused as Fluss refuses it: its Iceberg
    // table holds the dropped table's rows, which its lake and union reads would show.
    let s = serve(&data, &warehouse, None);
    let conn = s.connect();
    let e = conn
        .admin()
        .create_table(&path, &descriptor(), false)
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(LAKE_TABLE_ALREADY_EXIST), "{e}");
    assert!(e.message().contains(&name), "{e}");
    assert!(!conn.admin().table_exists(&path).unwrap());
    assert!(before.is_subset(&files_under(&warehouse)));

    // A lake table dropped before any commit leaves an empty Iceberg table: the same table
    // again takes it over (as Fluss's Paimon catalog does) and holds only its own rows.
    let empty = TablePath::new("dropped", "empty");
    conn.admin()
        .create_table(&empty, &descriptor(), false)
        .unwrap();
    conn.admin().drop_table(&empty, false).unwrap();
    conn.admin()
        .create_table(&empty, &descriptor(), false)
        .unwrap();
    write(&conn, &empty, 100..110);
    drop(conn);
    drop(s);
    let s = serve(&data, &warehouse, None);
    let conn = s.connect();
    wait_all_committed(&conn, &empty, "re-created table's commit");
    let want: BTreeSet<i64> = (100..110).collect();
    assert_eq!(
        ids_once(&read(&conn, &empty.to_string()), "union read"),
        want
    );
    assert_eq!(
        ids_once(&read(&conn, &format!("{empty}$lake")), "$lake"),
        want
    );
}
