//! Bucket assignment for rows without a bucket key: sticky or round-robin.
//!
//! Keyed tables hash the encoded bucket key with [`crate::row::bucketing`]; this module only
//! covers keyless log tables, where the server does not care which bucket a row lands in.

use crate::client::retry::next_random;
use crate::client::NoKeyAssigner;

/// Chooses the bucket of a keyless write.
#[derive(Debug, Clone)]
pub enum BucketAssigner {
    /// Keeps returning one bucket until [`BucketAssigner::on_new_batch`] moves it.
    Sticky {
        /// The number of buckets.
        buckets: i32,
        /// The current sticky bucket (-1 before the first write).
        current: i32,
    },
    /// Returns each bucket in turn.
    RoundRobin {
        /// The number of buckets.
        buckets: i32,
        /// The next bucket to return.
        next: i32,
    },
}

impl BucketAssigner {
    /// An assigner of `kind` over `buckets` buckets (at least 1).
    pub fn new(kind: NoKeyAssigner, buckets: i32) -> Self {
        let buckets = buckets.max(1);
        match kind {
            NoKeyAssigner::Sticky => BucketAssigner::Sticky {
                buckets,
                current: -1,
            },
            NoKeyAssigner::RoundRobin => BucketAssigner::RoundRobin {
                buckets,
                next: (next_random() % buckets as u64) as i32,
            },
        }
    }

    /// The bucket for the next write.
    pub fn assign(&mut self) -> i32 {
        match self {
            BucketAssigner::Sticky { buckets, current } => {
                if *current < 0 {
                    *current = (next_random() % *buckets as u64) as i32;
                }
                *current
            }
            BucketAssigner::RoundRobin { buckets, next } => {
                let b = *next;
                *next = (*next + 1) % *buckets;
                b
            }
        }
    }

    /// Tells a sticky assigner that the batch of `prev_bucket` filled up: it moves to another
    /// bucket (only if it still pointed at `prev_bucket`). Round-robin ignores it.
    pub fn on_new_batch(&mut self, prev_bucket: i32) {
        if let BucketAssigner::Sticky { buckets, current } = self {
            if *current != prev_bucket && *current >= 0 {
                return;
            }
            if *buckets == 1 {
                *current = 0;
                return;
            }
            // Move to a different bucket, chosen at random among the others.
            let offset = 1 + (next_random() % (*buckets as u64 - 1)) as i32;
            *current = (prev_bucket.max(0) + offset) % *buckets;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_stays_until_new_batch() {
        let mut a = BucketAssigner::new(NoKeyAssigner::Sticky, 4);
        let first = a.assign();
        assert!((0..4).contains(&first));
        assert_eq!(a.assign(), first);
        assert_eq!(a.assign(), first);
        a.on_new_batch(first);
        let second = a.assign();
        assert_ne!(second, first);
        assert!((0..4).contains(&second));
        // A stale notification for another bucket does not move it.
        a.on_new_batch(first);
        assert_eq!(a.assign(), second);
    }

    #[test]
    fn sticky_single_bucket() {
        let mut a = BucketAssigner::new(NoKeyAssigner::Sticky, 1);
        assert_eq!(a.assign(), 0);
        a.on_new_batch(0);
        assert_eq!(a.assign(), 0);
    }

    #[test]
    fn round_robin_cycles() {
        let mut a = BucketAssigner::new(NoKeyAssigner::RoundRobin, 3);
        let seq: Vec<i32> = (0..6).map(|_| a.assign()).collect();
        for w in seq.windows(2) {
            assert_eq!(w[1], (w[0] + 1) % 3);
        }
        let mut seen = seq.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen, vec![0, 1, 2]);
    }
}
