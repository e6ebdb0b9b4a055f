//! [`TableWriters`]: the writers behind a binding's table-level write calls (`append`,
//! `upsert`, `upsert` of some columns, `delete`, `flush`, `close`, `abort`), opened on first
//! use, and the rule that keeps those calls in order.
//!
//! A partial update goes through an upsert writer of its own (Fluss's PutKv carries the target
//! columns per request), and two writers are two pipelines: without a rule, an upsert queued
//! through one and a partial update of the same key queued right after through the other can
//! reach the server in either order, and the later call is lost when the earlier one lands
//! last. Fluss's Java client keeps them in order because all writers of a connection share one
//! accumulator with a queue per bucket. Here, a call that switches to another set of columns
//! first waits until the previous set's writer has its writes acknowledged, so the server
//! applies a table's upserts, partial updates and deletes in call order. Calls that keep to one
//! set of columns never wait.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{AppendWriter, Table, UpsertWriter};
use crate::{Error, ErrorKind, Result};

/// The columns of an upsert writer: `None` for whole rows (and deletes), or the partial-update
/// columns.
type Columns = Option<Vec<String>>;

#[derive(Debug, Default)]
struct Upserts {
    writers: HashMap<Columns, Arc<UpsertWriter>>,
    /// The columns of the writer the last upsert or delete went to.
    last: Option<Columns>,
}

/// A table's writers for table-level write calls (the Python and Java bindings' `Table`).
#[derive(Debug)]
pub struct TableWriters {
    table: Table,
    append: Mutex<Option<Arc<AppendWriter>>>,
    upserts: Mutex<Upserts>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A call that panicked while holding the lock is reported to its caller; the writers stay
    // usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TableWriters {
    /// No writer yet: each opens with the first call that needs it.
    pub fn new(table: Table) -> Self {
        TableWriters {
            table,
            append: Mutex::new(None),
            upserts: Mutex::new(Upserts::default()),
        }
    }

    /// The table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The append writer (log tables).
    pub fn append_writer(&self) -> Result<Arc<AppendWriter>> {
        let mut g = lock(&self.append);
        if let Some(w) = g.as_ref() {
            return Ok(w.clone());
        }
        let w = Arc::new(self.table.new_append_writer()?);
        *g = Some(w.clone());
        Ok(w)
    }

    /// The upsert writer of `columns` (`None`: whole rows, and deletes) for the next upsert or
    /// delete call. When the previous call went to another writer, that writer is flushed first
    /// (see the module docs); an error of its writes is returned here, as the error of the
    /// earlier call that `flush` would have returned.
    pub fn upsert_writer(&self, columns: Option<Vec<String>>) -> Result<Arc<UpsertWriter>> {
        let mut g = lock(&self.upserts);
        if let Some(last) = g.last.as_ref().filter(|l| **l != columns) {
            if let Some(previous) = g.writers.get(last).cloned() {
                // Holding the lock: a concurrent call of another thread waits for the same
                // ordering point rather than overtaking it.
                previous.flush()?;
            }
        }
        let w = match g.writers.get(&columns) {
            Some(w) => w.clone(),
            None => {
                let refs: Option<Vec<&str>> = columns
                    .as_ref()
                    .map(|c| c.iter().map(String::as_str).collect());
                let w = Arc::new(self.table.new_upsert_writer(refs.as_deref())?);
                g.writers.insert(columns.clone(), w.clone());
                w
            }
        };
        g.last = Some(columns);
        Ok(w)
    }

    /// Waits until every write queued so far is acknowledged; the first write error since the
    /// previous flush.
    pub fn flush(&self) -> Result<()> {
        let append = lock(&self.append).clone();
        let upserts: Vec<_> = lock(&self.upserts).writers.values().cloned().collect();
        if let Some(w) = append {
            w.flush()?;
        }
        for w in upserts {
            w.flush()?;
        }
        Ok(())
    }

    /// Takes every writer out (a later write opens new ones) and stops each with `append` or
    /// `upsert`; the first error after all were stopped.
    fn stop_all(
        &self,
        append: impl Fn(&AppendWriter) -> Result<()>,
        upsert: impl Fn(&UpsertWriter) -> Result<()>,
    ) -> Option<Error> {
        let appender = lock(&self.append).take();
        let upserts: Vec<_> = {
            let mut g = lock(&self.upserts);
            g.last = None;
            g.writers.drain().map(|(_, w)| w).collect()
        };
        let mut first: Option<Error> = None;
        for result in appender
            .iter()
            .map(|w| append(w))
            .chain(upserts.iter().map(|w| upsert(w)))
        {
            if let Err(e) = result {
                first.get_or_insert(e);
            }
        }
        first
    }

    /// Flushes and closes every writer (a later write opens new ones); the first error after
    /// all were closed. A writer whose connection was closed first has nothing left to flush:
    /// that is not an error.
    pub fn close(&self) -> Result<()> {
        match self.stop_all(AppendWriter::close, UpsertWriter::close) {
            Some(e) if e.kind() != ErrorKind::Closed => Err(e),
            _ => Ok(()),
        }
    }

    /// Stops every writer at once without waiting for the server (a later write opens new
    /// ones, with a new writer id): for a caller that will write the rows again, e.g. a stream
    /// processor's task that is cancelled or failed and restores from its last checkpoint,
    /// where [`TableWriters::close`] would wait for acknowledgements nobody needs (up to the
    /// delivery timeout while a server is unreachable). Writes not acknowledged yet fail with
    /// [`ErrorKind::Closed`] (discarded by an abort; a batch already sent may still have been
    /// appended); acknowledged writes stay written. Returns once every writer has stopped.
    pub fn abort(&self) -> Result<()> {
        self.stop_all(AppendWriter::abort, UpsertWriter::abort)
            .map_or(Ok(()), Err)
    }
}
