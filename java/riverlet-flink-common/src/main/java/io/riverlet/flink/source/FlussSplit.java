package io.riverlet.flink.source;

import java.util.Objects;

import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One bucket of a table (of one partition, for partitioned tables) and where its read
 * resumes. The offset is a log offset once known, or one of the start markers below, which the
 * reader resolves when it first subscribes to the bucket.
 */
public final class FlussSplit implements SourceSplit {

    /** Start from the table's startup mode (latest, earliest or timestamp). */
    public static final long FROM_STARTUP_MODE = -1;
    /** Read the bucket's current state (primary-key tables) first, then its log. */
    public static final long FROM_SNAPSHOT = -2;
    /** Start at the earliest retained offset (partitions created while streaming). */
    public static final long FROM_EARLIEST = -3;

    /** The bucket of a bounded split that reads every bucket (of its partition). */
    public static final int ALL_BUCKETS = -1;

    private final Long partitionId;
    private final String partitionName;
    private final int bucket;
    private final long offset;
    /** For a split of all buckets: the subscription position (text form) to resume at. */
    private final String position;

    public FlussSplit(Long partitionId, String partitionName, int bucket, long offset) {
        this(partitionId, partitionName, bucket, offset, null);
    }

    public FlussSplit(Long partitionId, String partitionName, int bucket, long offset, String position) {
        this.partitionId = partitionId;
        this.partitionName = partitionName;
        this.bucket = bucket;
        this.offset = offset;
        this.position = position;
    }

    public String position() {
        return position;
    }

    /** This split (of all buckets) resuming at {@code newPosition}. */
    public FlussSplit withPosition(String newPosition) {
        return new FlussSplit(partitionId, partitionName, bucket, offset, newPosition);
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
        return new FlussSplit(partitionId, partitionName, bucket, newOffset, position);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FlussSplit)) {
            return false;
        }
        FlussSplit s = (FlussSplit) o;
        return bucket == s.bucket && offset == s.offset && Objects.equals(partitionId, s.partitionId)
                && Objects.equals(partitionName, s.partitionName) && Objects.equals(position, s.position);
    }

    @Override
    public int hashCode() {
        return Objects.hash(partitionId, partitionName, bucket, offset, position);
    }

    @Override
    public String toString() {
        return "FlussSplit{" + (partitionName == null ? "" : "partition=" + partitionName + ", ")
                + "bucket=" + bucket + ", offset=" + offset
                + (position == null ? "" : ", position=" + position) + "}";
    }
}
