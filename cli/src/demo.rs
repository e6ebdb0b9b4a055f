//! `riverlet demo`: the main job end to end on one laptop. Starts the embedded server on a
//! temporary directory, creates the seed tables, writes the seed rows, runs the seed reads and
//! time-range reads over windows it marks, prints every result as a table (with a check mark
//! against the scenario's expected rows), and stops the server cleanly.

use std::time::{Duration, Instant};

use riverlet::blocking::{Connection, ReadRequest};
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};
use riverlet_server::{LocalServer, ServerConfig};
use serde_json::json;

use crate::print_batches;
use crate::scenario::{concat_sorted, write_rows, ReadOutcome, Scenario};

/// Runs the demo; an error if any read differs from what the scenario expects.
pub fn run() -> Result<()> {
    let started = Instant::now();
    let dir = tempfile::tempdir().map_err(Error::from)?;
    let server = LocalServer::start(ServerConfig::new(dir.path()).with_port(0))?;
    println!(
        "Embedded Fluss-compatible server on {} (data in {})",
        server.bootstrap_servers(),
        dir.path().display()
    );
    let conn = Connection::connect_to(&server.bootstrap_servers())?;
    let scenario = Scenario::seed()?;
    scenario.create_tables(&conn)?;
    println!(
        "Created database '{}' with tables: {}",
        scenario.database,
        scenario.table_names().join(", ")
    );

    let mut failures = 0;
    // The reads that must see the primary-key table before its upsert run between the writes.
    let marks = {
        let before_rows = now_ms();
        sleep();
        for name in scenario.table_names() {
            let table = conn.table(&scenario.path(name))?;
            let rows = seed_rows(name, "rows")?;
            write_rows(&table, &rows)?;
        }
        sleep();
        section("Seed reads before the upsert");
        failures += report(scenario.run_reads(&conn, true)?);
        let before_upsert = now_ms();
        sleep();
        let pk = conn.table(&scenario.path("pk_table"))?;
        write_rows(&pk, &seed_rows("pk_table", "upsert")?)?;
        println!("\nUpserted into pk_table: (700, 220, 602, 'addr2'), (900, 240, 604, 'addr4'), (1100, 260, 606, 'addr6')");
        sleep();
        (before_rows, before_upsert, now_ms())
    };
    section("Seed reads");
    failures += report(scenario.run_reads(&conn, false)?);

    section("Time-range reads over commit time [start, end)");
    let (before_rows, before_upsert, after_upsert) = marks;
    // One more append to the log table, after its own mark, gives a second window.
    let log = conn.table(&scenario.path("log_table"))?;
    let before_late = now_ms();
    sleep();
    write_rows(
        &log,
        &[
            vec![json!(1100), json!(26), json!(606), json!("addr6")],
            vec![json!(1200), json!(27), json!(607), json!("addr7")],
        ],
    )?;
    sleep();
    // (table, what the window shows, start, end, the order ids it must return)
    type Window<'a> = (&'a str, &'a str, i64, Option<i64>, Vec<i64>);
    let windows: Vec<Window> = vec![
        (
            "log_table",
            "the seed rows' window",
            before_rows,
            Some(before_upsert),
            vec![600, 700, 800, 900, 1000],
        ),
        (
            "log_table",
            "between the seed rows and the late rows (nothing written)",
            before_upsert,
            Some(before_late),
            vec![],
        ),
        (
            "log_table",
            "open-ended from the late rows' mark",
            before_late,
            None,
            vec![1100, 1200],
        ),
        (
            "log_table",
            "everything",
            before_rows,
            None,
            vec![600, 700, 800, 900, 1000, 1100, 1200],
        ),
        (
            "pk_table",
            "the upsert's window: each changed key once, with its last value",
            before_upsert,
            Some(after_upsert),
            vec![700, 900, 1100],
        ),
    ];
    for (table_name, label, start, end, expect_ids) in windows {
        let table = conn.table(&scenario.path(table_name))?;
        let request = ReadRequest {
            start: Some(start.into()),
            end: end.map(Into::into),
            ..ReadRequest::default()
        };
        let batches = table.read(&request)?.read_all()?;
        let batch = concat_sorted(&batches, Some("order_id"), table.arrow_schema(), &[])?;
        let ids: Vec<i64> = match batch.schema().index_of("order_id") {
            Ok(i) => batch
                .column(i)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .map(|a| a.values().to_vec())
                .unwrap_or_default(),
            Err(_) => vec![],
        };
        let ok = ids == expect_ids;
        if !ok {
            failures += 1;
        }
        let end_text = end.map_or("(open: pinned to now at planning)".to_string(), |e| {
            e.to_string()
        });
        println!(
            "\n{} {table_name} between {start} and {end_text}: {label}",
            if ok { "[ok]" } else { "[MISMATCH]" }
        );
        print_batches(&[batch])?;
        if !ok {
            println!("expected order_id {expect_ids:?}, got {ids:?}");
        }
    }

    conn.close()?;
    server.shutdown()?;
    println!(
        "\nServer stopped cleanly. {} in {:.1} s.",
        if failures == 0 {
            "Every result matched the seed scenarios".to_string()
        } else {
            format!("{failures} result(s) did NOT match")
        },
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        return Err(Error::internal(format!(
            "{failures} demo result(s) differ from the seed scenarios"
        )));
    }
    Ok(())
}

fn seed_rows(table: &str, key: &str) -> Result<Vec<Vec<serde_json::Value>>> {
    let v: serde_json::Value = serde_json::from_str(crate::scenario::SEED_JSON)
        .map_err(|e| Error::invalid(format!("seed JSON: {e}")))?;
    Ok(v["tables"][table][key]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r.as_array().cloned()).collect())
        .unwrap_or_default())
}

fn report(outcomes: Vec<ReadOutcome>) -> usize {
    let mut failures = 0;
    for o in outcomes {
        println!(
            "\n{} {}\n  {}",
            if o.matches { "[ok]" } else { "[MISMATCH]" },
            o.name,
            o.query
        );
        if let Err(e) = print_batches(&[o.batch]) {
            println!("(cannot print: {e})");
        }
        if !o.matches {
            failures += 1;
            println!("expected {}\n     got {}", o.expected, o.actual);
        }
    }
    failures
}

fn section(title: &str) {
    println!("\n== {title} ==");
}

fn sleep() {
    std::thread::sleep(Duration::from_millis(15));
}
