//! Writer settings, with the same defaults as Fluss's `client.writer.*` options. They are part
//! of the client's configuration ([`super::ClientConfig::writer`]); the writers in
//! [`crate::write`] read them.

use std::time::Duration;

/// How rows of a log table without a bucket key are spread over buckets
/// (`client.writer.bucket.no-key-assigner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoKeyAssigner {
    /// Stick to one bucket until its batch is full, then move to another (Fluss's default).
    #[default]
    Sticky,
    /// Each write goes to the next bucket in turn.
    RoundRobin,
}

impl NoKeyAssigner {
    /// Parses Fluss's option values `STICKY` / `ROUND_ROBIN` (case-insensitive).
    pub fn parse(s: &str) -> crate::Result<Self> {
        match s.trim().to_ascii_uppercase().replace('-', "_").as_str() {
            "STICKY" => Ok(NoKeyAssigner::Sticky),
            "ROUND_ROBIN" => Ok(NoKeyAssigner::RoundRobin),
            other => Err(crate::Error::invalid(format!(
                "unknown bucket assigner '{other}'; expected STICKY or ROUND_ROBIN"
            ))),
        }
    }
}

/// The most batches per bucket an idempotent writer keeps in flight: Fluss's server keeps the
/// metadata of a writer's last 5 batches per bucket, so a retry of any of them is recognised
/// as a duplicate.
pub const MAX_IDEMPOTENT_IN_FLIGHT: usize = 5;

/// Batching, memory, acknowledgement and retry settings of a writer.
#[derive(Debug, Clone, PartialEq)]
pub struct WriterConfig {
    /// Upper bound of bytes buffered by one writer and not yet acknowledged
    /// (`client.writer.buffer.memory-size`, 64 MiB).
    pub buffer_memory: usize,
    /// A bucket's batch is sent once it holds this many bytes (`client.writer.batch-size`, 2 MiB),
    /// or a quarter of that while nothing of the bucket is in flight or being encoded.
    pub batch_size: usize,
    /// How long a batch that is not full waits for more rows (`client.writer.batch-timeout`, 100 ms).
    pub linger: Duration,
    /// Acks asked from the server: -1 = all replicas (`client.writer.acks` "all"), 0 or 1.
    pub acks: i32,
    /// How many times a batch is retried on a retriable error (`client.writer.retries`).
    pub retries: u32,
    /// A batch that is still not acknowledged this long after it was first sent fails.
    pub delivery_timeout: Duration,
    /// Idempotent writes: a writer id from InitWriter plus per-bucket sequences
    /// (`client.writer.enable-idempotence`, on).
    pub idempotence: bool,
    /// Bucket choice for log tables without a bucket key.
    pub no_key_assigner: NoKeyAssigner,
    /// Upper bound of one produce / put request in bytes (`client.writer.request-max-size`, 10 MiB).
    pub request_max_size: usize,
    /// Create a partition that does not exist yet when a write targets it
    /// (`client.writer.dynamic-create-partition.enabled`, on as in Fluss; off: a write to a
    /// missing partition fails naming the partition).
    pub create_missing_partitions: bool,
    /// Batches of one bucket sent and not yet answered
    /// (`client.writer.max-inflight-requests-per-bucket`, 5). With idempotence at most 5: the
    /// server remembers the last 5 batches of a writer per bucket to recognise a retried one.
    pub max_in_flight_per_bucket: usize,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            buffer_memory: 64 * 1024 * 1024,
            batch_size: 2 * 1024 * 1024,
            linger: Duration::from_millis(100),
            acks: -1,
            retries: i32::MAX as u32,
            delivery_timeout: Duration::from_secs(120),
            idempotence: true,
            no_key_assigner: NoKeyAssigner::Sticky,
            request_max_size: 10 * 1024 * 1024,
            create_missing_partitions: true,
            max_in_flight_per_bucket: MAX_IDEMPOTENT_IN_FLIGHT,
        }
    }
}

impl WriterConfig {
    /// Checks that the settings can work together.
    pub fn validate(&self) -> crate::Result<()> {
        if self.batch_size == 0 {
            crate::bail_invalid!("writer batch_size must be positive");
        }
        if self.buffer_memory < self.batch_size {
            crate::bail_invalid!(
                "writer buffer_memory ({}) must be at least batch_size ({})",
                self.buffer_memory,
                self.batch_size
            );
        }
        if !matches!(self.acks, -1..=1) {
            crate::bail_invalid!("writer acks must be -1 (all), 0 or 1, got {}", self.acks);
        }
        if self.idempotence && self.acks != -1 {
            crate::bail_invalid!(
                "idempotent writes need acks = -1 (all); disable idempotence to use acks {}",
                self.acks
            );
        }
        if self.max_in_flight_per_bucket == 0 {
            crate::bail_invalid!("writer max_in_flight_per_bucket must be at least 1");
        }
        if self.idempotence && self.max_in_flight_per_bucket > MAX_IDEMPOTENT_IN_FLIGHT {
            crate::bail_invalid!(
                "idempotent writes allow at most {MAX_IDEMPOTENT_IN_FLIGHT} batches in flight per bucket, got max_in_flight_per_bucket = {}",
                self.max_in_flight_per_bucket
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_fluss() {
        let c = WriterConfig::default();
        assert_eq!(c.batch_size, 2 << 20);
        assert_eq!(c.buffer_memory, 64 << 20);
        assert_eq!(c.linger, Duration::from_millis(100));
        assert!(c.idempotence);
        assert_eq!(c.acks, -1);
        c.validate().unwrap();
    }

    #[test]
    fn validation_names_the_setting() {
        let c = WriterConfig {
            acks: 1,
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().message().contains("idempotent"));
        let c = WriterConfig {
            buffer_memory: 10,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .message()
            .contains("buffer_memory"));
        assert_eq!(
            NoKeyAssigner::parse("round_robin").unwrap(),
            NoKeyAssigner::RoundRobin
        );
        assert!(NoKeyAssigner::parse("x").is_err());
        let c = WriterConfig {
            max_in_flight_per_bucket: 6,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .message()
            .contains("max_in_flight_per_bucket = 6"));
    }
}
