package io.riverlet;

import java.io.Serializable;
import java.util.Objects;

/** The next offset to read in one bucket (of one partition). Immutable. */
public final class BucketOffset implements Serializable {
  private static final long serialVersionUID = 1L;

  private final Long partitionId;
  private final int bucket;
  private final long offset;

  /**
   * A bucket's offset.
   *
   * @param partitionId the partition id, or null for a table without partitions
   * @param bucket the bucket id
   * @param offset the next offset to read
   */
  public BucketOffset(Long partitionId, int bucket, long offset) {
    this.partitionId = partitionId;
    this.bucket = bucket;
    this.offset = offset;
  }

  /**
   * The partition id.
   *
   * @return the id, or null for a table without partitions
   */
  public Long partitionId() {
    return partitionId;
  }

  /**
   * The bucket id.
   *
   * @return the bucket
   */
  public int bucket() {
    return bucket;
  }

  /**
   * The next offset to read.
   *
   * @return the offset
   */
  public long offset() {
    return offset;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof BucketOffset)) {
      return false;
    }
    BucketOffset b = (BucketOffset) o;
    return bucket == b.bucket && offset == b.offset && Objects.equals(partitionId, b.partitionId);
  }

  @Override
  public int hashCode() {
    return Objects.hash(partitionId, bucket, offset);
  }

  @Override
  public String toString() {
    return (partitionId == null ? "" : "p" + partitionId + "/") + bucket + "@" + offset;
  }
}
