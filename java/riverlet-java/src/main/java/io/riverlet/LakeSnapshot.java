package io.riverlet;

import java.util.List;
import java.util.Objects;

/**
 * A lake snapshot of a lake-enabled table, as Fluss records it when its tiering commits: the
 * lake's snapshot id and, per bucket, the log offset the lake holds the bucket's records before.
 * A union read takes the lake's rows and each bucket's log from that offset. Immutable.
 */
public final class LakeSnapshot {
  private final long tableId;
  private final long snapshotId;
  private final List<BucketOffset> bucketOffsets;

  LakeSnapshot(long tableId, long snapshotId, List<BucketOffset> bucketOffsets) {
    this.tableId = tableId;
    this.snapshotId = snapshotId;
    this.bucketOffsets = List.copyOf(bucketOffsets);
  }

  /**
   * The table the snapshot was committed for.
   *
   * @return the table id
   */
  public long tableId() {
    return tableId;
  }

  /**
   * The lake's snapshot id (an Iceberg snapshot id, or a Paimon snapshot number).
   *
   * @return the id
   */
  public long snapshotId() {
    return snapshotId;
  }

  /**
   * Per bucket (of each partition), the log offset the lake holds the records before; a bucket
   * nothing was tiered from is not listed.
   *
   * @return the offsets, sorted by partition id and bucket
   */
  public List<BucketOffset> bucketOffsets() {
    return bucketOffsets;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof LakeSnapshot)) {
      return false;
    }
    LakeSnapshot s = (LakeSnapshot) o;
    return tableId == s.tableId && snapshotId == s.snapshotId
        && bucketOffsets.equals(s.bucketOffsets);
  }

  @Override
  public int hashCode() {
    return Objects.hash(tableId, snapshotId, bucketOffsets);
  }

  @Override
  public String toString() {
    return "LakeSnapshot(table " + tableId + ", snapshot " + snapshotId + ", " + bucketOffsets
        + ")";
  }
}
