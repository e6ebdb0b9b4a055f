package io.riverlet.spark.read;

import io.riverlet.Table;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Creates the readers of a scan's splits on the executors: columnar readers that hand Spark the
 * core's Arrow batches, or, for a pushed-down {@code COUNT(*)}, a one-row reader of the core's
 * count.
 */
final class ColumnarReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  private final StructType readSchema;
  private final boolean countStar;

  ColumnarReaderFactory(StructType readSchema, boolean countStar) {
    this.readSchema = readSchema;
    this.countStar = countStar;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return !countStar;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    if (!countStar) {
      throw new UnsupportedOperationException("Fluss splits are read as columnar batches");
    }
    return new CountReader((BucketSplit) partition);
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new BatchReader((BucketSplit) partition, readSchema);
  }

  /** The Arrow batches of one bucket, as Spark column vectors over the same memory. */
  static final class BatchReader implements PartitionReader<ColumnarBatch> {
    private final BucketSplit split;
    private final StructType readSchema;
    private final Table table;
    private final ArrowReader reader;
    private VectorSchemaRoot wrappedRoot;
    private ColumnVector[] columns;
    private ColumnarBatch current;

    BatchReader(BucketSplit split, StructType readSchema) {
      this.split = split;
      this.readSchema = readSchema;
      this.table = split.connection.connection().table(split.read.table);
      ArrowReader r;
      try {
        r = table.scan(split.read.options(split.partition, split.bucket),
            io.riverlet.spark.ConnectionSpec.allocator());
      } catch (RuntimeException e) {
        table.close();
        throw e;
      }
      this.reader = r;
    }

    @Override
    public boolean next() throws IOException {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        if (root.getRowCount() == 0) {
          continue;
        }
        if (root != wrappedRoot) {
          wrap(root);
        }
        current = new ColumnarBatch(columns, root.getRowCount());
        return true;
      }
      return false;
    }

    /** Column vectors over the root's vectors, in the order of the read schema. */
    private void wrap(VectorSchemaRoot root) {
      if (split.read.emptyProjection) {
        columns = new ColumnVector[0];
      } else {
        StructField[] fields = readSchema.fields();
        columns = new ColumnVector[fields.length];
        List<FieldVector> vectors = root.getFieldVectors();
        for (int i = 0; i < fields.length; i++) {
          FieldVector v = i < vectors.size() && vectors.get(i).getName().equals(fields[i].name())
              ? vectors.get(i)
              : root.getVector(fields[i].name());
          if (v == null) {
            throw new IllegalStateException(
                "The core's batch of " + split + " has no column '" + fields[i].name() + "'");
          }
          columns[i] = ArrowColumns.wrap(v, fields[i].dataType());
        }
      }
      wrappedRoot = root;
    }

    @Override
    public ColumnarBatch get() {
      return current;
    }

    @Override
    public void close() throws IOException {
      try {
        reader.close();
      } finally {
        table.close();
      }
    }
  }

  /** One row: the core's count of a partition's rows (Spark sums the splits' rows). */
  static final class CountReader implements PartitionReader<InternalRow> {
    private final BucketSplit split;
    private boolean done;
    private long count;

    CountReader(BucketSplit split) {
      this.split = split;
    }

    @Override
    public boolean next() {
      if (done) {
        return false;
      }
      if (split.bucket != BucketSplit.NOTHING) {
        try (Table t = split.connection.connection().table(split.read.table)) {
          count = t.count(split.read.options(split.partition, -1));
        }
      }
      done = true;
      return true;
    }

    @Override
    public InternalRow get() {
      return new GenericInternalRow(new Object[] {count});
    }

    @Override
    public void close() {}
  }
}
