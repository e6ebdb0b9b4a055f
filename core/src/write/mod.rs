//! Writers: [`AppendWriter`] for log tables, [`UpsertWriter`] for primary-key tables.
//!
//! A write is routed to its partition (by the partition columns' values) and bucket (the
//! bucket key's CompactedKeyEncoder bytes hashed with Fluss's bucketing function; sticky or
//! round-robin for keyless log tables), buffered per bucket up to `batch_size` bytes or
//! `linger`, sent to the bucket leader as a magic-0 Arrow log batch (log tables, in the table's
//! Arrow compression) or a KV batch of CompactedRows (primary-key tables), and acknowledged
//! through its [`WriteFuture`]. Writes are idempotent by default: the writer gets a writer id
//! with InitWriter and numbers each bucket's batches from 0, with one batch in flight per
//! bucket so retries keep the order. The bytes buffered per writer are bounded by
//! `buffer_memory` ([`AppendWriter::ready`] waits for room).
//!
//! DELETE and UPDATE by condition ([`crate::client::Table::delete_where`],
//! [`crate::client::Table::update_where`] with [`Assignments`]) read the matching rows and
//! write them through an [`UpsertWriter`] (module `modify`).

mod append;
mod bucket;
mod config;
mod core;
mod future;
mod modify;
mod route;
mod upsert;

pub use append::AppendWriter;
pub use bucket::BucketAssigner;
pub use config::{NoKeyAssigner, WriterConfig};
pub use future::WriteFuture;
pub use modify::Assignments;
pub use upsert::UpsertWriter;
