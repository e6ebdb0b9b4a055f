//! Writers: [`AppendWriter`] for log tables, [`UpsertWriter`] for primary-key tables.
//!
//! A write is routed to its partition (by the partition columns' values) and bucket (the
//! bucket key's CompactedKeyEncoder bytes hashed with Fluss's bucketing function; sticky or
//! round-robin for keyless log tables), buffered per bucket up to `batch_size` bytes or
//! `linger`, sent to the bucket leader as a magic-0 Arrow log batch (log tables, in the table's
//! Arrow compression) or a KV batch of CompactedRows (primary-key tables), and acknowledged
//! through its [`WriteFuture`]. Writes are idempotent by default: the writer gets a writer id
//! with InitWriter and numbers each bucket's batches from 0 when they are sent; up to
//! `max_in_flight_per_bucket` (5) batches of a bucket are in flight, and after a failure the
//! bucket's unacknowledged batches are sent again in sequence order, so retries neither reorder
//! nor duplicate rows. Batches are encoded and compressed off the writer's event loop, on
//! tokio's blocking pool. The bytes buffered per writer are bounded by
//! `buffer_memory` ([`AppendWriter::ready`] waits for room).

mod append;
mod bucket;
mod config;
mod core;
mod future;
mod route;
mod upsert;

pub use append::AppendWriter;
pub use bucket::BucketAssigner;
pub use config::{NoKeyAssigner, WriterConfig};
pub use future::WriteFuture;
pub use upsert::UpsertWriter;
