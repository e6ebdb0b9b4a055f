package io.riverlet;

/** Where a {@link Subscription} starts reading. */
public enum StartupMode {
  /**
   * Log tables: from the earliest offset. Primary-key tables: a snapshot of the current state
   * (as inserts), then the log from the snapshot's offset.
   */
  FULL,
  /** From the earliest retained offset. */
  EARLIEST,
  /** From the high watermark: only changes committed after subscribing. */
  LATEST,
  /** From the first batch committed at or after a timestamp. */
  TIMESTAMP,
  /** From a {@link SubscriptionPosition} read earlier (a checkpoint). */
  POSITION
}
