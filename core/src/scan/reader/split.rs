//! [`ReadSplit`]: a planned log read cut into pieces that are read apart (e.g. one Arrow Flight
//! endpoint each), and the rule of which batches a piece holds.
//!
//! A piece of a bucket holds the log batches whose base offset lies in its cut `[from, to)`,
//! each whole (a batch that starts before `to` is read to its end, and one that starts before
//! `from` belongs to the piece before), so every batch is read by exactly one piece and none
//! has to be decoded to trim it at a cut. Only the bucket's own planned bounds `[start, end)`
//! trim rows, as in an uncut read. Cuts are offsets chosen at planning, without knowing where
//! batches start, so a piece may hold no batch at all.

use super::plan::{BucketRead, Mode, Plan};
use crate::{Error, Result};

/// One piece of a planned log read of a bucket, read on its own with
/// [`crate::scan::ScanBuilder::split`]; made by [`crate::scan::ScanBuilder::plan_splits`].
/// It carries the bucket's bounds taken when the read was planned, so the pieces of one bucket
/// read exactly the records that were there then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSplit {
    pub(crate) partition_id: Option<i64>,
    pub(crate) bucket: i32,
    /// The bucket's planned bounds: rows outside are left out.
    pub(crate) start: i64,
    pub(crate) end: i64,
    /// The cut: the batches whose base offset is at or after `from` (None: the bucket's first
    /// batch on) and before `to` (None: up to `end`).
    pub(crate) from: Option<i64>,
    pub(crate) to: Option<i64>,
}

impl ReadSplit {
    /// The bucket this piece reads.
    pub fn bucket(&self) -> i32 {
        self.bucket
    }

    /// The partition (id) of the bucket, for a partitioned table.
    pub fn partition_id(&self) -> Option<i64> {
        self.partition_id
    }
}

/// Whether `plan` can be read in pieces: records of log buckets with nothing that needs the
/// whole read at once (a limit counts rows across buckets; a union read's lake rows are no
/// bucket's; a primary-key view folds whole buckets).
pub(crate) fn splittable(plan: &Plan) -> bool {
    matches!(plan.mode, Mode::Log | Mode::Changelog)
        && plan.lake_snapshot.is_none()
        && plan.lake_buckets.is_none()
        && plan.limit.is_none()
}

/// The pieces of a splittable plan, buckets in plan order (see [`cut_bucket`]).
pub(crate) fn cut(plan: &Plan, max_records: u64, max_per_bucket: usize) -> Vec<ReadSplit> {
    plan.buckets
        .iter()
        .flat_map(|b| cut_bucket(b, max_records, max_per_bucket))
        .collect()
}

/// One bucket's pieces: `ceil(records / max_records)` of them (at least 1, at most
/// `max_per_bucket`), cut at equal offset distances between its bounds.
fn cut_bucket(b: &BucketRead, max_records: u64, max_per_bucket: usize) -> Vec<ReadSplit> {
    let records = (b.end - b.start).max(0) as u64;
    let pieces = records
        .div_ceil(max_records.max(1))
        .clamp(1, max_per_bucket.max(1) as u64);
    let cut_at = |k: u64| b.start + (records * k / pieces) as i64;
    (0..pieces)
        .map(|k| ReadSplit {
            partition_id: b.partition_id,
            bucket: b.bucket,
            start: b.start,
            end: b.end,
            from: (k > 0).then(|| cut_at(k)),
            to: (k + 1 < pieces).then(|| cut_at(k + 1)),
        })
        .collect()
}

/// Restricts a freshly planned read to `split`: its bucket alone, with the bounds and cut the
/// split carries (not the ones just taken).
pub(super) fn restrict(plan: &mut Plan, split: &ReadSplit) -> Result<()> {
    if !splittable(plan) {
        return Err(Error::invalid(format!(
            "table '{}': a read split applies to a read of log records without a limit or lake \
             rows, as ScanBuilder::plan_splits makes them",
            super::table_name(&plan.table)
        )));
    }
    let partition_name = plan
        .buckets
        .iter()
        .find(|b| b.partition_id == split.partition_id)
        .and_then(|b| b.partition_name.clone());
    plan.buckets = vec![BucketRead {
        partition_id: split.partition_id,
        partition_name,
        bucket: split.bucket,
        start: split.start,
        end: split.end,
        from: split.from,
        to: split.to,
    }];
    // The bounds alone no longer tell how many rows this piece holds.
    plan.expected_rows = None;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(start: i64, end: i64) -> BucketRead {
        BucketRead {
            partition_id: None,
            partition_name: None,
            bucket: 0,
            start,
            end,
            from: None,
            to: None,
        }
    }

    #[test]
    fn cuts_are_equal_ranges_between_the_bucket_bounds() {
        let pieces = |start, end, max, per| -> Vec<(Option<i64>, Option<i64>)> {
            cut_bucket(&read(start, end), max, per)
                .into_iter()
                .map(|s| {
                    assert_eq!((s.start, s.end), (start, end), "the bucket's own bounds");
                    (s.from, s.to)
                })
                .collect()
        };
        // a bucket smaller than one piece: whole
        assert_eq!(pieces(10, 20, 100, 16), vec![(None, None)]);
        // 25 records in pieces of at most 10: three, cut at 5 + 25/3 and 5 + 50/3
        assert_eq!(
            pieces(5, 30, 10, 16),
            vec![(None, Some(13)), (Some(13), Some(21)), (Some(21), None)]
        );
        // at most 2 pieces per bucket
        assert_eq!(
            pieces(0, 100, 10, 2),
            vec![(None, Some(50)), (Some(50), None)]
        );
    }

    #[test]
    fn fetch_bounds_follow_the_cut() {
        let mut b = read(5, 30);
        assert_eq!((b.fetch_start(), b.fetch_end()), (5, 30));
        b.from = Some(13);
        b.to = Some(21);
        assert_eq!((b.fetch_start(), b.fetch_end()), (13, 21));
        // a batch starting before the cut belongs to the piece before
        assert!(b.before_cut(12) && !b.before_cut(13));
    }
}
