package io.riverlet.spark.read;

import io.riverlet.spark.ConnectionSpec;
import org.apache.spark.sql.connector.read.InputPartition;

/** One Spark input partition: one bucket of one Fluss partition (or of the whole table). */
final class BucketSplit implements InputPartition {
  private static final long serialVersionUID = 1L;

  /** The bucket of a split that reads nothing (a count of zero selected partitions). */
  static final int NOTHING = -2;

  final ConnectionSpec connection;
  final ReadSpec read;
  /** The Fluss partition name, or null for a table without partitions. */
  final String partition;
  /** The bucket id, -1 for every bucket, or {@link #NOTHING}. */
  final int bucket;

  BucketSplit(ConnectionSpec connection, ReadSpec read, String partition, int bucket) {
    this.connection = connection;
    this.read = read;
    this.partition = partition;
    this.bucket = bucket;
  }

  @Override
  public String toString() {
    return read.table + (partition == null ? "" : "/" + partition) + "/bucket-" + bucket;
  }
}
