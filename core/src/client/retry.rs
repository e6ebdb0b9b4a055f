//! Retry policy: exponential backoff with jitter, shared by bootstrap, metadata, admin and writers.

use std::time::Duration;

/// Exponential backoff: `base * 2^attempt`, capped at `max`, with up to 20% random jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub base: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Backoff {
    /// A backoff starting at `base` and never waiting longer than `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff {
            base,
            max: max.max(base),
        }
    }

    /// How long to wait before retry number `attempt` (0 = the first retry).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX);
        let raw = self.base.saturating_mul(factor).min(self.max);
        let jitter_range = raw.as_nanos() as u64 / 5;
        let jitter = if jitter_range == 0 {
            0
        } else {
            next_random() % jitter_range
        };
        raw.saturating_sub(Duration::from_nanos(jitter))
    }
}

/// A cheap process-wide pseudo random number (xorshift64*), good enough for jitter and sticky
/// bucket choice; not for anything secret.
pub(crate) fn next_random() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        x = nanos | 1;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    STATE.store(x, Ordering::Relaxed);
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_grows_and_caps() {
        let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        let d0 = b.delay(0);
        assert!(d0 <= Duration::from_millis(100) && d0 >= Duration::from_millis(80));
        let d2 = b.delay(2);
        assert!(d2 <= Duration::from_millis(400) && d2 >= Duration::from_millis(320));
        for attempt in [5, 30, 1000] {
            let d = b.delay(attempt);
            assert!(d <= Duration::from_secs(1) && d >= Duration::from_millis(800));
        }
    }

    #[test]
    fn random_varies() {
        let a = next_random();
        let b = next_random();
        assert_ne!(a, b);
    }
}
