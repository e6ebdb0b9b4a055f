//! Writers: [`AppendWriter`] for log tables, [`UpsertWriter`] for primary-key tables.
//!
//! A write is routed to its partition (by the partition columns' values) and bucket (the
//! bucket key's CompactedKeyEncoder bytes hashed with Fluss's bucketing function; sticky or
//! round-robin for keyless log tables), buffered per bucket up to `batch_size` bytes or
//! `linger` (or a quarter of `batch_size` while the bucket has nothing in flight), sent to the bucket leader as a magic-0 Arrow log batch (log tables, in the table's
//! Arrow compression) or a KV batch of CompactedRows (primary-key tables), and acknowledged
//! through its [`WriteFuture`]. Writes are idempotent by default: the writer gets a writer id
//! with InitWriter and numbers each bucket's batches from 0 when they are sent; up to
//! `max_in_flight_per_bucket` (5) batches of a bucket are in flight, and after a failure the
//! bucket's unacknowledged batches are sent again in sequence order, so retries neither reorder
//! nor duplicate rows. Batches are encoded and compressed off the writer's event loop, on
//! tokio's blocking pool, from the written Arrow pieces as they are (flat columns are not
//! concatenated first; see [`crate::record::build_arrow_log_batch_from_parts`]). The bytes buffered per writer are bounded by
//! `buffer_memory` ([`AppendWriter::ready`] waits for room).
//!
//! A request frame larger than the server's `netty.server.max-request-size` is refused by the
//! server, which closes the connection. As Fluss's Java client, the writer does not refuse a
//! large row by itself (`client.writer.request-max-size` only bounds how many batches go in one
//! request, and a single batch larger than it is sent alone), so the limit is learned from the
//! refusal: a batch that is over it even alone fails at once with
//! [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) (Fluss code
//! RECORD_TOO_LARGE_EXCEPTION) naming its size, the limit and the option, and is not retried;
//! the other batches of the refused request, and those of other requests the closed connection
//! carried, are sent again (in requests below the limit) and land once, in order. Such a batch
//! holds only the too-large row unless rows of the same write call share it (a call's rows are
//! cut into batch-sized pieces by their average size); the rows of a call in other batches are
//! written, and the call's future fails with that error, as for any failed batch.
//! A request whose answer the closed connection lost may be in the log already: its batches
//! are sent again under the same writer id, where the server answers a duplicate with its
//! offsets, before the failed batch makes the writer take a new id for the batches after it.
//!
//! DELETE and UPDATE by condition ([`crate::client::Table::delete_where`],
//! [`crate::client::Table::update_where`] with [`Assignments`]) read the matching rows and
//! write them through an [`UpsertWriter`] (module `modify`).

mod append;
mod bucket;
mod core;
mod future;
mod modify;
mod route;
mod upsert;

pub use crate::client::{NoKeyAssigner, WriterConfig};
pub use append::AppendWriter;
pub use bucket::BucketAssigner;
pub use future::WriteFuture;
pub use modify::Assignments;
pub use upsert::UpsertWriter;

use crate::client::Table;
use crate::Result;

/// The writer constructors live with the writers, so that `client` does not depend on `write`.
impl Table {
    /// A writer appending rows or Arrow batches to this log table. Fails (naming the table)
    /// when the table has a primary key: use [`Table::new_upsert_writer`] there.
    pub fn new_append_writer(&self) -> Result<AppendWriter> {
        self.refuse_view_writes()?;
        AppendWriter::new(self.clone())
    }

    /// A writer upserting and deleting rows of this primary-key table. With `partial_columns`,
    /// upserts update only those columns (they must include the whole primary key). Fails
    /// (naming the table) on a log table.
    pub fn new_upsert_writer(&self, partial_columns: Option<&[&str]>) -> Result<UpsertWriter> {
        self.refuse_view_writes()?;
        UpsertWriter::new(self.clone(), partial_columns)
    }

    /// The lake views (`db.t$lake`, `db.t$lake$snapshots`) are read-only.
    fn refuse_view_writes(&self) -> Result<()> {
        if self.view == crate::client::TableView::Table {
            return Ok(());
        }
        Err(crate::Error::unsupported(format!(
            "{} is read-only (the lake is written by tiering); write to table '{}'",
            self.view_name(),
            self.info.table_path
        )))
    }
}
