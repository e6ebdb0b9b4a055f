//! Fluss record formats: log record batches (with their Arrow payload), KV record batches
//! (the PutKv payload) and value record batches (LimitScan / ScanKv results).
//!
//! Everything here is byte-exact with Apache Fluss. All multi-byte header fields are
//! little-endian. Decoders never panic: truncated or garbage bytes give
//! [`ErrorKind::Corrupt`](crate::ErrorKind::Corrupt).
//!
//! This module takes Arrow [`SchemaRef`](arrow_schema::SchemaRef)s and raw row bytes; it does
//! not know Fluss data types or row encodings (those live in `metadata` and `row`).

mod arrow_parts;
pub mod arrow_payload;
pub mod arrow_projection;
pub mod batch_memory;
pub mod change_type;
pub mod compacted_log;
pub mod kv_batch;
pub mod kv_snapshot;
pub mod log_batch;
pub mod value_batch;

mod ipc_body;
pub(crate) mod le;

pub use arrow_payload::{
    decode_arrow_batch, decode_arrow_batch_projected, encode_arrow_batch, ArrowCompression,
};
pub use change_type::ChangeType;
pub use compacted_log::{
    build_row_log_batch, encode_row_log_records, RowLogRecord, RowLogRecordIter,
};
pub use kv_batch::{KvBatchBuilder, KvRecord, KvRecordBatch, KvRecordIter};
pub use log_batch::{
    build_arrow_log_batch, build_arrow_log_batch_from_parts, set_base_offset, set_commit_timestamp,
    BatchFormat, LogBatchIter, LogRecordBatch,
};
pub use value_batch::{encode_value_batch, ValueRecord, ValueRecordBatch, ValueRecordIter};

#[cfg(test)]
mod tests;
