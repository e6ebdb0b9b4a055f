//! Idempotent-writer state of one bucket: the last batches of every writer id, used to drop
//! retried duplicates and to reject sequence gaps the way Fluss's `WriterStateManager` does.

use std::collections::{HashMap, VecDeque};

use riverlet::error::codes;
use riverlet::{Error, Result};

/// Fluss keeps the metadata of this many recent batches per writer.
const BATCHES_TO_RETAIN: usize = 5;

/// "No writer id" on a batch: idempotence is off for it.
pub const NO_WRITER_ID: i64 = -1;

/// What is remembered about one appended batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMeta {
    /// The batch sequence the writer gave it.
    pub batch_sequence: i32,
    /// Offset of its first record (its base offset).
    pub first_offset: i64,
    /// Offset of its last record (`base + last_offset_delta`).
    pub last_offset: i64,
    /// Its commit timestamp.
    pub timestamp: i64,
}

/// The verdict for an incoming batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceCheck {
    /// New and in order: append it.
    Append,
    /// Already appended: ack with the original offsets, append nothing.
    Duplicate(BatchMeta),
}

/// Writer states of one bucket.
#[derive(Debug, Default)]
pub struct WriterStates {
    writers: HashMap<i64, VecDeque<BatchMeta>>,
}

impl WriterStates {
    /// Checks a batch of `writer_id` carrying `sequence` (bucket text is for the error message).
    pub fn check(&self, writer_id: i64, sequence: i32, bucket: &str) -> Result<SequenceCheck> {
        if writer_id == NO_WRITER_ID {
            return Ok(SequenceCheck::Append);
        }
        let entry = self.writers.get(&writer_id);
        if let Some(batches) = entry {
            if let Some(dup) = batches.iter().find(|b| b.batch_sequence == sequence) {
                return Ok(SequenceCheck::Duplicate(*dup));
            }
        }
        let last = entry
            .and_then(|b| b.back())
            .map_or(-1, |b| b.batch_sequence);
        let in_sequence = sequence as i64 == last as i64 + 1 || (sequence == 0 && last == i32::MAX);
        if !in_sequence {
            return Err(Error::from_fluss(
                codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION,
                format!(
                    "Out of order batch sequence for writer {writer_id} in table-bucket {bucket} : \
                     {sequence} (incoming batch seq.), {last} (current batch seq.)"
                ),
            ));
        }
        Ok(SequenceCheck::Append)
    }

    /// Records an appended batch.
    pub fn record(&mut self, writer_id: i64, meta: BatchMeta) {
        if writer_id == NO_WRITER_ID {
            return;
        }
        let batches = self.writers.entry(writer_id).or_default();
        batches.push_back(meta);
        while batches.len() > BATCHES_TO_RETAIN {
            batches.pop_front();
        }
    }

    /// Forgets everything (before a rebuild).
    pub fn clear(&mut self) {
        self.writers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(seq: i32, off: i64) -> BatchMeta {
        BatchMeta {
            batch_sequence: seq,
            first_offset: off,
            last_offset: off,
            timestamp: 0,
        }
    }

    #[test]
    fn sequences() {
        let mut w = WriterStates::default();
        assert_eq!(w.check(7, 0, "b").unwrap(), SequenceCheck::Append);
        let e = w.check(7, 1, "b").unwrap_err();
        assert_eq!(e.fluss_code(), Some(codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION));
        w.record(7, meta(0, 10));
        assert_eq!(
            w.check(7, 0, "b").unwrap(),
            SequenceCheck::Duplicate(meta(0, 10))
        );
        assert_eq!(w.check(7, 1, "b").unwrap(), SequenceCheck::Append);
        assert!(w.check(7, 3, "b").is_err());
        assert_eq!(w.check(-1, 99, "b").unwrap(), SequenceCheck::Append);
        for s in 1..10 {
            w.record(7, meta(s, 10 + s as i64));
        }
        // only the last five are remembered; older ones are neither dup nor in sequence
        assert!(w.check(7, 2, "b").is_err());
        assert!(matches!(
            w.check(7, 8, "b").unwrap(),
            SequenceCheck::Duplicate(_)
        ));
    }
}
