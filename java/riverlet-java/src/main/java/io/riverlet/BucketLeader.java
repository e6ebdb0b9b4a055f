package io.riverlet;

import java.util.Objects;

/**
 * The tablet server leading one bucket (of one partition, for a partitioned table), as {@link
 * Table#bucketLeaders()} returns it. Immutable.
 */
public final class BucketLeader {
  private final Long partitionId;
  private final String partitionName;
  private final int bucket;
  private final Integer leaderId;
  private final String leaderAddress;

  /**
   * Built by the native library.
   *
   * @param partitionId the partition id (ignored when {@code partitionName} is null)
   * @param partitionName the partition name, or null for a table without partitions
   * @param bucket the bucket id
   * @param leaderId the leader's tablet server id (ignored when {@code leaderAddress} is null)
   * @param leaderAddress the leader's {@code host:port}, or null when no live leader is known
   */
  BucketLeader(
      long partitionId, String partitionName, int bucket, int leaderId, String leaderAddress) {
    this.partitionId = partitionName == null ? null : partitionId;
    this.partitionName = partitionName;
    this.bucket = bucket;
    this.leaderId = leaderAddress == null ? null : leaderId;
    this.leaderAddress = leaderAddress;
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
   * The partition name (values joined by {@code $}, e.g. {@code 2024-01-01}).
   *
   * @return the name, or null for a table without partitions
   */
  public String partitionName() {
    return partitionName;
  }

  /**
   * The bucket id, {@code 0..buckets-1}.
   *
   * @return the bucket
   */
  public int bucket() {
    return bucket;
  }

  /**
   * The id of the tablet server leading the bucket.
   *
   * @return the id, or null when the cluster names no live leader for the bucket right now (one
   *     is being elected, or the leader just died)
   */
  public Integer leaderId() {
    return leaderId;
  }

  /**
   * The {@code host:port} of the tablet server leading the bucket (the address the client
   * connects to).
   *
   * @return the address, or null when no live leader is known (see {@link #leaderId()})
   */
  public String leaderAddress() {
    return leaderAddress;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof BucketLeader)) {
      return false;
    }
    BucketLeader b = (BucketLeader) o;
    return bucket == b.bucket
        && Objects.equals(partitionId, b.partitionId)
        && Objects.equals(partitionName, b.partitionName)
        && Objects.equals(leaderId, b.leaderId)
        && Objects.equals(leaderAddress, b.leaderAddress);
  }

  @Override
  public int hashCode() {
    return Objects.hash(partitionId, partitionName, bucket, leaderId, leaderAddress);
  }

  @Override
  public String toString() {
    return (partitionName == null ? "" : partitionName + "/")
        + bucket
        + " -> "
        + (leaderAddress == null ? "no leader" : leaderId + "@" + leaderAddress);
  }
}
