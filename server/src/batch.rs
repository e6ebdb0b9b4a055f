//! The few facts the storage layer needs about a Fluss log record batch, read through
//! `riverlet::record::log_batch` (the one codec). Nothing here parses bytes by itself.

use riverlet::record::log_batch::{self, LogBatchIter, LogRecordBatch};
use riverlet::Result;

/// Header facts of one stored batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchInfo {
    /// Offset of the first record.
    pub base_offset: i64,
    /// Offset after the last record (`base + last_offset_delta + 1`; an empty batch takes one).
    pub next_offset: i64,
    /// Commit timestamp.
    pub commit_timestamp: i64,
    /// Writer id (-1 = none).
    pub writer_id: i64,
    /// Batch sequence (-1 = none).
    pub batch_sequence: i32,
    /// Total size in bytes, header included.
    pub size: usize,
    /// Number of records.
    pub record_count: i32,
}

impl BatchInfo {
    /// Offset of the last record.
    pub fn last_offset(&self) -> i64 {
        self.next_offset - 1
    }
}

/// Header facts of a batch whose structure was already checked: by `validate::log_records` for
/// a produced batch (complete, CRC-valid, nothing trailing: that check lives only there), by the
/// codec for a batch the server built itself.
pub fn info(b: &LogRecordBatch<'_>) -> BatchInfo {
    BatchInfo {
        base_offset: b.base_offset(),
        next_offset: b.next_offset(),
        commit_timestamp: b.commit_timestamp(),
        writer_id: b.writer_id(),
        batch_sequence: b.batch_sequence(),
        size: b.size_in_bytes(),
        record_count: b.record_count(),
    }
}

/// The total size of the batch starting at `prefix[0]`, when the prefix holds enough header
/// bytes to tell.
pub fn batch_size(prefix: &[u8]) -> Option<usize> {
    log_batch::batch_size_from_prefix(prefix)
}

/// Walks the complete batches at the start of `buf`, validating each CRC when `verify` is set.
/// Returns the batches and the number of bytes they cover; stops (without error) at a
/// truncated tail, a bad CRC or bytes that are not a batch.
pub fn scan(buf: &[u8], verify: bool) -> (Vec<BatchInfo>, usize) {
    let mut out = Vec::new();
    let mut pos = 0usize;
    for item in LogBatchIter::new(buf) {
        let Ok(b) = item else { break };
        if verify && !b.is_valid() {
            break;
        }
        let i = info(&b);
        pos += i.size;
        out.push(i);
    }
    (out, pos)
}

/// Writes the server-assigned base offset and commit timestamp into a batch in place.
pub fn assign(batch: &mut [u8], base_offset: i64, commit_timestamp: i64) -> Result<()> {
    log_batch::set_base_offset(batch, base_offset)?;
    log_batch::set_commit_timestamp(batch, commit_timestamp)
}
