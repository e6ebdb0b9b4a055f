package io.riverlet;

import java.nio.charset.StandardCharsets;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One batch of changes from a {@link Subscription}: the rows of one bucket with {@code
 * _change_type}, {@code _log_offset} and {@code _commit_timestamp} columns first, then the
 * subscribed columns. Owns its Arrow data: close it.
 */
public final class ChangeBatch implements AutoCloseable {
  /** Name of the change-type column. */
  public static final String CHANGE_TYPE_COLUMN = "_change_type";
  /** Name of the log-offset column. */
  public static final String LOG_OFFSET_COLUMN = "_log_offset";
  /** Name of the commit-timestamp column. */
  public static final String COMMIT_TIMESTAMP_COLUMN = "_commit_timestamp";

  private final VectorSchemaRoot root;
  private final Long partitionId;
  private final String partitionName;
  private final int bucket;

  ChangeBatch(VectorSchemaRoot root, Long partitionId, String partitionName, int bucket) {
    this.root = root;
    this.partitionId = partitionId;
    this.partitionName = partitionName;
    this.bucket = bucket;
  }

  /**
   * The rows, change columns first.
   *
   * @return the Arrow data (owned by this batch)
   */
  public VectorSchemaRoot root() {
    return root;
  }

  /**
   * The number of rows.
   *
   * @return rows
   */
  public int rowCount() {
    return root.getRowCount();
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
   * The partition name.
   *
   * @return the name, or null for a table without partitions
   */
  public String partitionName() {
    return partitionName;
  }

  /**
   * The bucket the rows come from.
   *
   * @return the bucket id
   */
  public int bucket() {
    return bucket;
  }

  /**
   * The change type of a row.
   *
   * @param row the row index
   * @return the change type
   */
  public ChangeType changeType(int row) {
    VarCharVector v = (VarCharVector) root.getVector(CHANGE_TYPE_COLUMN);
    return ChangeType.of(new String(v.get(row), StandardCharsets.UTF_8));
  }

  /**
   * The log offset of a row (-1 for snapshot rows of a {@link StartupMode#FULL} start).
   *
   * @param row the row index
   * @return the offset
   */
  public long offset(int row) {
    return ((BigIntVector) root.getVector(LOG_OFFSET_COLUMN)).get(row);
  }

  /** Frees the Arrow data. */
  @Override
  public void close() {
    root.close();
  }

  @Override
  public String toString() {
    return "ChangeBatch(bucket=" + bucket + (partitionName == null ? "" : ", " + partitionName)
        + ", rows=" + rowCount() + ")";
  }
}
