//! DELETE and UPDATE by any condition on primary-key tables: [`Table::delete_where`] and
//! [`Table::update_where`], the statements of Fluss's Flink guide (`DELETE FROM t WHERE ...`,
//! `UPDATE t SET c = v WHERE ...`), for every binding and the Flink sink to share.
//!
//! A condition made only of equalities on every primary-key column is served by one lookup of
//! that key (and one write when the row exists). Any other condition scans the latest view of
//! the table, pruned by the partition values the condition allows, and writes every matching
//! row: a delete of its key, or an upsert of the whole row with the assigned columns replaced.
//! Both return the number of rows they deleted or updated.
//!
//! The rules are Fluss's: only primary-key tables with the default merge engine (tables with
//! the `first_row`, `versioned` or `aggregation` merge engine reject both statements);
//! `table.delete.behavior = disable` rejects a DELETE and `ignore` lets it succeed without
//! deleting anything (UPDATE is unaffected by it); primary-key columns, which include the
//! partition columns, cannot be assigned. Tables with an auto-increment column support UPDATE
//! (written around that column) but not DELETE (Fluss only accepts writes that leave the column
//! out, and applies their deletes as partial deletes that keep the row).
//!
//! Neither statement is atomic, as in Fluss. Each reads the table once and then writes the
//! matching rows independently: rows written after the read starts are not affected, a
//! concurrent write to a matching row may be overwritten (an UPDATE writes back the entire
//! row), and a statement that fails part-way leaves the rows it already wrote modified. Do not
//! run them concurrently with other writers of the same keys.

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};

use crate::client::Table;
use crate::metadata::table::DeleteBehavior;
use crate::row::Datum;
use crate::scan::expr::{literal_array, parse_assignments, CompareOp, Expr, Literal};
use crate::write::{UpsertWriter, WriteFuture};
use crate::{Error, Result};

/// The `SET` list of an UPDATE: columns and the values they are set to, in the order given.
///
/// Values are [`Literal`]s converted exactly to their column's type when the update runs, with
/// the rules of filter literals (so `'2024-01-01'` sets a DATE column); a value the column
/// cannot hold is an error naming the column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Assignments {
    items: Vec<(String, Literal)>,
}

impl Assignments {
    /// No assignments yet.
    pub fn new() -> Assignments {
        Assignments::default()
    }

    /// Adds `column = value`.
    pub fn set(mut self, column: impl Into<String>, value: impl Into<Literal>) -> Assignments {
        self.items.push((column.into(), value.into()));
        self
    }

    /// Parses the text form `col = literal [, col = literal ...]` (the filter grammar's
    /// literals, e.g. `total_amount = 0, note = 'checked', day = DATE '2024-01-01'`).
    pub fn parse(text: &str) -> Result<Assignments> {
        Ok(Assignments {
            items: parse_assignments(text)?,
        })
    }

    /// The assignments in the order given.
    pub fn items(&self) -> &[(String, Literal)] {
        &self.items
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<S: Into<String>, L: Into<Literal>> FromIterator<(S, L)> for Assignments {
    fn from_iter<I: IntoIterator<Item = (S, L)>>(iter: I) -> Self {
        Assignments {
            items: iter
                .into_iter()
                .map(|(c, v)| (c.into(), v.into()))
                .collect(),
        }
    }
}

impl std::str::FromStr for Assignments {
    type Err = Error;
    fn from_str(s: &str) -> Result<Assignments> {
        Assignments::parse(s)
    }
}

/// An assignment resolved against the table: the column index and its value as a one-element
/// array of the column's Arrow type (for batches) and as a row value (for single rows).
struct Resolved {
    index: usize,
    array: ArrayRef,
    datum: Datum,
}

impl Table {
    /// Deletes every row matching `filter` (`DELETE FROM t WHERE filter`) and returns how many
    /// were deleted. Equality on every primary-key column deletes by key; any other condition
    /// scans the latest view (pruned by partition) and deletes the matching keys. Unsupported
    /// on log tables, tables with a merge engine or an auto-increment column, and with
    /// `table.delete.behavior = disable`; with `ignore` nothing is deleted and 0 is returned.
    ///
    /// Not atomic, as in Fluss: the table is read once and the matching rows are then written
    /// independently, so rows written after the read starts are not affected and a failure
    /// part-way leaves the rows already deleted deleted.
    pub async fn delete_where(&self, filter: &Expr) -> Result<u64> {
        self.check_modifiable()?;
        let path = self.path();
        if self.info.descriptor.delete_behavior()? == DeleteBehavior::Disable {
            return Err(Error::unsupported(format!(
                "Table {path} has delete behavior set to 'disable' which does not support \
                 DELETE statements."
            )));
        }
        if let Some(column) = self.info.schema().auto_increment_columns.first() {
            // Writes must leave the column out, and Fluss applies a delete from such a writer as
            // a partial delete, which keeps a row whose other columns (the assigned value) are set.
            return Err(Error::unsupported(format!(
                "Table {path} has an auto-increment column [{column}]: its rows cannot be \
                 deleted (a delete that leaves the column out only clears the other columns), \
                 so DELETE is not supported."
            )));
        }
        filter.validate(&self.info.schema().to_arrow())?;
        if self.info.descriptor.delete_behavior()? == DeleteBehavior::Ignore {
            // Fluss: the statement succeeds and the server drops every delete.
            return Ok(0);
        }
        let writer = self.statement_writer()?;
        let deleted = match self.key_of(filter)? {
            Some(key) => match self
                .new_lookuper()?
                .lookup_rows(std::slice::from_ref(&key))
                .await?
                .pop()
            {
                Some(Some(_)) => {
                    submitted(writer.delete_rows(&[key]))?;
                    1
                }
                _ => 0,
            },
            None => {
                let pk = self.primary_key_names();
                let mut stream = self
                    .scan()
                    .filter(filter.clone())
                    .project_names(pk)
                    .execute()
                    .await?;
                let mut n = 0u64;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    writer.ready().await;
                    submitted(writer.delete_batch(&batch))?;
                    n += batch.num_rows() as u64;
                }
                n
            }
        };
        finish(writer).await?;
        Ok(deleted)
    }

    /// Sets the assigned columns of every row matching `filter` (`UPDATE t SET ... WHERE
    /// filter`) and returns how many rows were updated. Each matching row is written back whole
    /// with the assigned columns replaced. Primary-key, partition and auto-increment columns
    /// cannot be assigned; log tables and tables with a merge engine are unsupported.
    ///
    /// Not atomic, as in Fluss: the table is read once and the matching rows are then written
    /// independently, so rows written after the read starts are not affected, a concurrent
    /// write to a matching row may be overwritten (the whole row is written back), and a failure
    /// part-way leaves the rows already written modified.
    pub async fn update_where(&self, filter: &Expr, assignments: &Assignments) -> Result<u64> {
        self.check_modifiable()?;
        let resolved = self.resolve_assignments(assignments)?;
        filter.validate(&self.info.schema().to_arrow())?;
        let writer = self.statement_writer()?;
        let updated = match self.key_of(filter)? {
            Some(key) => match self.new_lookuper()?.lookup_rows(&[key]).await?.pop() {
                Some(Some(mut row)) => {
                    for a in &resolved {
                        row[a.index] = a.datum.clone();
                    }
                    submitted(writer.upsert_rows(&[row]))?;
                    1
                }
                _ => 0,
            },
            None => {
                let mut stream = self.scan().filter(filter.clone()).execute().await?;
                let mut n = 0u64;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    let batch = assign(&batch, &resolved)?;
                    writer.ready().await;
                    submitted(writer.upsert_batch(&batch))?;
                    n += batch.num_rows() as u64;
                }
                n
            }
        };
        finish(writer).await?;
        Ok(updated)
    }

    /// Fluss's checks shared by DELETE and UPDATE: a primary-key table with the default merge
    /// engine.
    fn check_modifiable(&self) -> Result<()> {
        let path = self.path();
        if !self.has_primary_key() {
            return Err(Error::unsupported(format!(
                "Table {path} is a Log Table. Log Table doesn't support DELETE and UPDATE \
                 statements."
            )));
        }
        if let Some(engine) = self.info.descriptor.merge_engine()? {
            return Err(Error::unsupported(format!(
                "Table {path} uses the '{engine}' merge engine which does not support DELETE or \
                 UPDATE statements."
            )));
        }
        Ok(())
    }

    /// The writer of a statement: full rows, or every column but an auto-increment one (the
    /// server assigns that column and rejects writes that name it, deletes included).
    fn statement_writer(&self) -> Result<UpsertWriter> {
        let schema = self.info.schema();
        if schema.auto_increment_columns.is_empty() {
            return self.new_upsert_writer(None);
        }
        let columns: Vec<&str> = schema
            .columns
            .iter()
            .filter(|c| !schema.auto_increment_columns.contains(&c.name))
            .map(|c| c.name.as_str())
            .collect();
        self.new_upsert_writer(Some(&columns))
    }

    fn primary_key_names(&self) -> Vec<String> {
        let schema = self.info.schema();
        schema
            .primary_key_indexes()
            .into_iter()
            .map(|i| schema.columns[i].name.clone())
            .collect()
    }

    /// The primary-key values (in primary-key order) when `filter` is exactly one equality per
    /// primary-key column and nothing else; None when the rows have to be found by a scan
    /// (including an equality whose value the key column cannot hold: the scan finds no row).
    fn key_of(&self, filter: &Expr) -> Result<Option<Vec<Datum>>> {
        let mut equalities: Vec<(&str, &Literal)> = Vec::new();
        if !collect_equalities(filter, &mut equalities) {
            return Ok(None);
        }
        let schema = self.info.schema();
        let arrow = schema.to_arrow();
        let pk = schema.primary_key_indexes();
        if equalities.len() != pk.len() {
            return Ok(None);
        }
        let mut key = Vec::with_capacity(pk.len());
        for i in pk {
            let column = &schema.columns[i];
            let mut values = equalities.iter().filter(|(c, _)| *c == column.name);
            let (Some((_, value)), None) = (values.next(), values.next()) else {
                return Ok(None);
            };
            let Ok(array) = literal_array(&column.name, arrow.field(i).data_type(), value) else {
                return Ok(None);
            };
            let datum = crate::row::datum_from_array(array.as_ref(), 0, &column.data_type)?;
            if datum.is_null() {
                return Ok(None);
            }
            key.push(datum);
        }
        Ok(Some(key))
    }

    /// Checks the assignments against the table and converts their values.
    fn resolve_assignments(&self, assignments: &Assignments) -> Result<Vec<Resolved>> {
        let path = self.path();
        let schema = self.info.schema();
        let arrow = schema.to_arrow();
        if assignments.is_empty() {
            crate::bail_invalid!("an UPDATE of table '{path}' needs at least one column to set");
        }
        let pk = schema.primary_key_indexes();
        let partition_keys = &self.info.descriptor.partition_keys;
        let mut out: Vec<Resolved> = Vec::with_capacity(assignments.items.len());
        for (name, value) in &assignments.items {
            let Some(index) = schema.column_index(name) else {
                crate::bail_invalid!(
                    "unknown column '{name}' in the UPDATE of table '{path}'; its columns are: {}",
                    schema.column_names().join(", ")
                );
            };
            if partition_keys.contains(name) {
                return Err(Error::unsupported(format!(
                    "column '{name}' of table '{path}' cannot be updated: it is a partition \
                     column (partition columns are part of the primary key)"
                )));
            }
            if pk.contains(&index) {
                return Err(Error::unsupported(format!(
                    "column '{name}' of table '{path}' cannot be updated: it is a primary key \
                     column (primary key: {})",
                    self.primary_key_names().join(", ")
                )));
            }
            if schema.auto_increment_columns.contains(name) {
                return Err(Error::unsupported(format!(
                    "column '{name}' of table '{path}' cannot be updated: it is the \
                     auto-increment column, whose values the server assigns"
                )));
            }
            if out.iter().any(|r| r.index == index) {
                crate::bail_invalid!(
                    "column '{name}' is set twice in the UPDATE of table '{path}'"
                );
            }
            let column = &schema.columns[index];
            if value == &Literal::Null && !column.data_type.nullable {
                crate::bail_invalid!(
                    "column '{name}' of table '{path}' is NOT NULL and cannot be set to NULL"
                );
            }
            let array = literal_array(name, arrow.field(index).data_type(), value)
                .map_err(|e| e.context(format!("UPDATE of table '{path}'")))?;
            let datum = crate::row::datum_from_array(array.as_ref(), 0, &column.data_type)?;
            out.push(Resolved {
                index,
                array,
                datum,
            });
        }
        Ok(out)
    }
}

/// Collects `column = literal` terms of a conjunction; false when the filter has anything else.
fn collect_equalities<'a>(filter: &'a Expr, out: &mut Vec<(&'a str, &'a Literal)>) -> bool {
    match filter {
        Expr::Compare {
            column,
            op: CompareOp::Eq,
            value,
        } => {
            out.push((column.as_str(), value));
            true
        }
        Expr::And(parts) => parts.iter().all(|p| collect_equalities(p, out)),
        _ => false,
    }
}

/// The batch with every assigned column replaced by its value repeated.
fn assign(batch: &RecordBatch, resolved: &[Resolved]) -> Result<RecordBatch> {
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    let repeat = UInt32Array::from(vec![0u32; batch.num_rows()]);
    for a in resolved {
        columns[a.index] = arrow_select::take::take(a.array.as_ref(), &repeat, None)?;
    }
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

/// Fails with a write's error when it was rejected before being queued; otherwise the ack is
/// waited for by the final flush.
fn submitted(mut fut: WriteFuture) -> Result<()> {
    match fut.try_result() {
        Some(r) => r,
        None => Ok(()),
    }
}

/// Waits for every write of the statement and stops the writer.
async fn finish(writer: UpsertWriter) -> Result<()> {
    writer.flush().await?;
    writer.close().await
}
