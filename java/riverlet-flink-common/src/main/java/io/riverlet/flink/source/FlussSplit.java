package io.riverlet.flink.source;

import java.util.Objects;

import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One bucket of a table (of one partition, for partitioned tables) and where its read
 * resumes. The offset is the bucket's next log offset once known, or one of the start markers
 * below, which the reader resolves when it first subscribes to the bucket (and checkpoints as
 * an offset from then on).
 */
public final class FlussSplit implements SourceSplit {

    /** Start from the table's startup mode (latest, earliest or timestamp). */
    public static final long FROM_STARTUP_MODE = -1;
    /** Read the bucket's current state (primary-key tables) first, then its log. */
    public static final long FROM_SNAPSHOT = -2;
    /** Start at the earliest retained offset (partitions created while streaming). */
    public static final long FROM_EARLIEST = -3;

    private final Long partitionId;
    private final String partitionName;
    private final int bucket;
    private final long offset;

    public FlussSplit(Long partitionId, String partitionName, int bucket, long offset) {
        this.partitionId = partitionId;
        this.partitionName = partitionName;
        this.bucket = bucket;
        this.offset = offset;
    }

    /** The id of the split of a bucket: stable across checkpoints. */
    public static String idOf(Long partitionId, int bucket) {
        return (partitionId == null ? "t" : "p" + partitionId) + "-b" + bucket;
    }

    @Override
    public String splitId() {
        return idOf(partitionId, bucket);
    }

    public Long partitionId() {
        return partitionId;
    }

    public String partitionName() {
        return partitionName;
    }

    public int bucket() {
        return bucket;
    }

    public long offset() {
        return offset;
    }

    /** This split resuming at {@code newOffset}. */
    public FlussSplit withOffset(long newOffset) {
        return new FlussSplit(partitionId, partitionName, bucket, newOffset);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FlussSplit)) {
            return false;
        }
        FlussSplit s = (FlussSplit) o;
        return bucket == s.bucket && offset == s.offset && Objects.equals(partitionId, s.partitionId)
                && Objects.equals(partitionName, s.partitionName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(partitionId, partitionName, bucket, offset);
    }

    @Override
    public String toString() {
        return "FlussSplit{" + (partitionName == null ? "" : "partition=" + partitionName + ", ")
                + "bucket=" + bucket + ", offset=" + offset + "}";
    }
}
