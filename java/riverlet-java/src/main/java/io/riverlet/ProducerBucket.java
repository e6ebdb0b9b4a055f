package io.riverlet;

/**
 * A bucket in a producer's offsets ({@link Admin#registerProducerOffsets}): a table id, the
 * partition id for a partitioned table ({@code null} otherwise) and the bucket number.
 *
 * @param tableId the table id ({@link TableInfo#tableId()})
 * @param partitionId the partition id, or {@code null} for a table without partitions
 * @param bucket the bucket number
 */
public record ProducerBucket(long tableId, Long partitionId, int bucket) {
  /**
   * A bucket of a table without partitions.
   *
   * @param tableId the table id
   * @param bucket the bucket number
   * @return the bucket
   */
  public static ProducerBucket of(long tableId, int bucket) {
    return new ProducerBucket(tableId, null, bucket);
  }
}
