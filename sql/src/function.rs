//! `fluss_incremental_between_timestamp(table, start[, end])`: a commit-time window `[start,
//! end)` of a table, as a relation. The arguments are constant expressions (evaluated while the
//! statement is analyzed); the window is validated and pinned by the core's [`TimeRange`], so
//! an invalid window fails the statement with the core's error.

use std::sync::Arc;

use arrow::datatypes::Schema;
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::DFSchema;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{ColumnarValue, Expr};
use datafusion::scalar::ScalarValue;
use riverlet::client::Connection;
use riverlet::scan::time::{now_millis, TimeRange};
use riverlet::scan::{TimePoint, TimeZoneSpec};

use crate::catalog::wait;
use crate::provider::{FlussTable, View};
use crate::{core_err, filter};
use riverlet::metadata::TablePath;

/// The function's name, as in Fluss's Spark extension.
pub const NAME: &str = "fluss_incremental_between_timestamp";

/// The table function; `catalog` is the name the Fluss catalog is registered under (accepted as
/// the first part of `catalog.database.table`).
#[derive(Debug)]
pub struct IncrementalBetween {
    conn: Connection,
    catalog: String,
    default_database: String,
    default_zone: Option<String>,
}

impl IncrementalBetween {
    /// The function over `conn`. Unqualified table names are in `default_database`; datetime
    /// texts are read in the session's `datafusion.execution.time_zone`, else `default_zone`,
    /// else the process's zone.
    pub fn new(
        conn: Connection,
        catalog: &str,
        default_database: &str,
        default_zone: Option<String>,
    ) -> IncrementalBetween {
        IncrementalBetween {
            conn,
            catalog: catalog.to_string(),
            default_database: default_database.to_string(),
            default_zone,
        }
    }

    fn table_name(&self, value: ScalarValue) -> DfResult<(String, String)> {
        let text = match value {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => s,
            other => {
                return Err(plan(format!(
                    "{NAME}: the table argument must be a string ('table', 'database.table' or \
                 'catalog.database.table'), got {other:?}"
                )))
            }
        };
        let parts: Vec<&str> = text.split('.').collect();
        match parts.as_slice() {
            [t] if !t.is_empty() => Ok((self.default_database.clone(), t.to_string())),
            [d, t] if !d.is_empty() && !t.is_empty() => Ok((d.to_string(), t.to_string())),
            [c, d, t] if *c == self.catalog && !d.is_empty() && !t.is_empty() => {
                Ok((d.to_string(), t.to_string()))
            }
            [c, _, _] => Err(plan(format!(
                "{NAME}: unknown catalog '{c}' in '{text}' (the Fluss catalog is '{}')",
                self.catalog
            ))),
            _ => Err(plan(format!(
                "{NAME}: bad table name '{text}'; expected 'table', 'database.table' or \
                 'catalog.database.table'"
            ))),
        }
    }
}

fn plan(message: String) -> DataFusionError {
    DataFusionError::Plan(message)
}

/// Evaluates a constant argument (column references are not allowed).
fn constant(session: &dyn Session, e: &Expr, what: &str) -> DfResult<ScalarValue> {
    let empty = DFSchema::empty();
    let physical = session
        .create_physical_expr(e.clone(), &empty)
        .map_err(|err| {
            plan(format!(
                "{NAME}: the {what} argument must be a constant expression ({e}): {err}"
            ))
        })?;
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )?;
    match physical.evaluate(&one_row)? {
        ColumnarValue::Scalar(v) => Ok(v),
        ColumnarValue::Array(a) => ScalarValue::try_from_array(&a, 0),
    }
}

/// A window bound: a string (epoch milliseconds or `yyyy-MM-dd HH:mm:ss`), an integer (epoch
/// milliseconds), a DATE (the start of the day) or a TIMESTAMP (with a zone: that instant;
/// without: a wall clock in the session's zone).
fn time_point(value: ScalarValue, what: &str) -> DfResult<TimePoint> {
    if value.is_null() {
        return Err(plan(format!(
            "{NAME}: the {what} timestamp must not be NULL"
        )));
    }
    let int = |v: i64| Ok(TimePoint::EpochMillis(v));
    let ts = |v: i64, nanos_per_unit: i64, tz: Option<Arc<str>>| -> DfResult<TimePoint> {
        let nanos = v as i128 * nanos_per_unit as i128;
        let secs = nanos.div_euclid(1_000_000_000) as i64;
        let sub = nanos.rem_euclid(1_000_000_000) as u32;
        let utc = chrono::DateTime::from_timestamp(secs, sub)
            .ok_or_else(|| plan(format!("{NAME}: the {what} timestamp is out of range")))?;
        Ok(match tz {
            Some(_) => TimePoint::Instant(utc.fixed_offset()),
            None => TimePoint::Naive(utc.naive_utc()),
        })
    };
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Ok(TimePoint::Text(s)),
        ScalarValue::Int8(Some(v)) => int(v as i64),
        ScalarValue::Int16(Some(v)) => int(v as i64),
        ScalarValue::Int32(Some(v)) => int(v as i64),
        ScalarValue::Int64(Some(v)) => int(v),
        ScalarValue::UInt8(Some(v)) => int(v as i64),
        ScalarValue::UInt16(Some(v)) => int(v as i64),
        ScalarValue::UInt32(Some(v)) => int(v as i64),
        ScalarValue::UInt64(Some(v)) => int(i64::try_from(v)
            .map_err(|_| plan(format!("{NAME}: the {what} timestamp {v} is out of range")))?),
        ScalarValue::Date32(Some(d)) => filter::date32(d)
            .map(TimePoint::Date)
            .ok_or_else(|| plan(format!("{NAME}: the {what} date is out of range"))),
        ScalarValue::TimestampSecond(Some(v), tz) => ts(v, 1_000_000_000, tz),
        ScalarValue::TimestampMillisecond(Some(v), tz) => ts(v, 1_000_000, tz),
        ScalarValue::TimestampMicrosecond(Some(v), tz) => ts(v, 1_000, tz),
        ScalarValue::TimestampNanosecond(Some(v), tz) => ts(v, 1, tz),
        other => Err(plan(format!(
            "{NAME}: the {what} timestamp must be a string (epoch milliseconds or \
             'yyyy-MM-dd HH:mm:ss'), an integer of epoch milliseconds, a DATE or a TIMESTAMP; \
             got {} {other}",
            other.data_type()
        ))),
    }
}

impl TableFunctionImpl for IncrementalBetween {
    fn call_with_args(&self, args: TableFunctionArgs) -> DfResult<Arc<dyn TableProvider>> {
        let session = args.session();
        let exprs = args.exprs();
        if !(2..=3).contains(&exprs.len()) {
            return Err(plan(format!(
                "{NAME}(table, start[, end]) takes 2 or 3 arguments, got {}",
                exprs.len()
            )));
        }
        let (database, table) = self.table_name(constant(session, &exprs[0], "table")?)?;
        let start = time_point(constant(session, &exprs[1], "start")?, "start")?;
        let end = match exprs.get(2) {
            Some(e) => Some(time_point(constant(session, e, "end")?, "end")?),
            None => None,
        };
        let zone = session
            .config_options()
            .execution
            .time_zone
            .clone()
            .or_else(|| self.default_zone.clone())
            .unwrap_or_else(|| "local".to_string());
        let zone = TimeZoneSpec::parse(&zone).map_err(core_err)?;
        // The core validates the window (blank or unparseable bounds, start not before end, a
        // start in the future) and an omitted end becomes "now", as the statement is analyzed.
        let pinned = TimeRange::new(start, end, &zone)
            .and_then(|r| r.pin(now_millis()))
            .map_err(core_err)?;
        let view = View::Window {
            start_ms: pinned.start_ms,
            end_ms: pinned.end_ms,
        };
        Ok(Arc::new(wait_open(&self.conn, &database, &table, view)?))
    }
}

/// Opens the windowed table from the synchronous `call_with_args`.
fn wait_open(conn: &Connection, database: &str, table: &str, view: View) -> DfResult<FlussTable> {
    let path = TablePath::new(database, table);
    let table = wait(conn.table(&path))?;
    FlussTable::new(table, view)
}
