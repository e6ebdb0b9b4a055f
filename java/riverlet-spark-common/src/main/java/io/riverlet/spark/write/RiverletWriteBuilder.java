package io.riverlet.spark.write;

import io.riverlet.Table;
import io.riverlet.spark.ConnectionSpec;
import io.riverlet.spark.RiverletTable;
import io.riverlet.spark.TypeMapping;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;

/**
 * Batch writes: {@code INSERT INTO} / {@code writeTo(...).append()} append to a log table and
 * upsert into a primary-key table. Rows are gathered into Arrow batches with Spark's own Arrow
 * writer and handed to the core, which validates them against the table and writes them;
 * a task commits once the core has acknowledged all its rows. {@code INSERT OVERWRITE} is
 * rejected: Fluss tables take appends and upserts only.
 */
public final class RiverletWriteBuilder
    implements WriteBuilder, SupportsTruncate, SupportsOverwriteV2, SupportsDynamicOverwrite {
  private final RiverletTable table;
  private final StructType schema;

  public RiverletWriteBuilder(RiverletTable table, LogicalWriteInfo info) {
    this.table = table;
    this.schema = info.schema();
    if (schema.fields().length != table.info().schema().getFields().size()) {
      throw new IllegalArgumentException(
          "Writing " + schema.fields().length + " columns to Fluss table " + table.name()
              + ", which has " + table.info().schema().getFields().size()
              + ": every column must be written");
    }
  }

  private UnsupportedOperationException overwriteRejected() {
    return new UnsupportedOperationException(
        "INSERT OVERWRITE is not supported on Fluss table " + table.name()
            + ": Fluss tables take appends (log tables) and upserts (primary-key tables); "
            + "use INSERT INTO instead");
  }

  @Override
  public WriteBuilder truncate() {
    throw overwriteRejected();
  }

  @Override
  public WriteBuilder overwrite(Predicate[] predicates) {
    throw overwriteRejected();
  }

  @Override
  public WriteBuilder overwriteDynamicPartitions() {
    throw overwriteRejected();
  }

  @Override
  public Write build() {
    boolean upsert = table.info().hasPrimaryKey();
    String name = table.name();
    ConnectionSpec spec = table.spec();
    // The batches take the table's column names, nullability and Arrow types (Spark's rows are
    // written into them by position), except for the types Spark's Arrow writer cannot fill
    // (TypeMapping.sparkWritable), which the core converts back, checking every value.
    String arrowSchemaJson = TypeMapping.sparkWritable(table.info().schema()).toJson();
    return new Write() {
      @Override
      public String description() {
        return (upsert ? "upsert into " : "append to ") + name;
      }

      @Override
      public BatchWrite toBatch() {
        return new BatchWrite() {
          @Override
          public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            return new WriterFactory(spec, name, arrowSchemaJson, upsert);
          }

          @Override
          public void commit(WriterCommitMessage[] messages) {}

          @Override
          public void abort(WriterCommitMessage[] messages) {}
        };
      }
    };
  }

  /** A task's rows are acknowledged by the core; nothing is left for the driver to do. */
  static final class Committed implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    static final Committed INSTANCE = new Committed();
  }

  /** Creates one writer per task, on the executors. */
  static final class WriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final ConnectionSpec spec;
    private final String table;
    private final String arrowSchemaJson;
    private final boolean upsert;

    WriterFactory(ConnectionSpec spec, String table, String arrowSchemaJson, boolean upsert) {
      this.spec = spec;
      this.table = table;
      this.arrowSchemaJson = arrowSchemaJson;
      this.upsert = upsert;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      try {
        return new RowBatchWriter(
            spec, table, org.apache.arrow.vector.types.pojo.Schema.fromJSON(arrowSchemaJson),
            upsert);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /** Buffers rows into an Arrow batch and hands each full batch to the core. */
  static final class RowBatchWriter implements DataWriter<InternalRow> {
    private static final int BATCH_ROWS = 4096;
    private final Table table;
    private final boolean upsert;
    private final BufferAllocator allocator;
    private final org.apache.arrow.vector.types.pojo.Schema arrowSchema;
    private VectorSchemaRoot root;
    private ArrowWriter writer;
    private int rows;

    RowBatchWriter(ConnectionSpec spec, String name,
        org.apache.arrow.vector.types.pojo.Schema arrowSchema, boolean upsert) {
      this.table = spec.connection().table(name);
      this.upsert = upsert;
      this.allocator = ConnectionSpec.allocator();
      this.arrowSchema = arrowSchema;
      newBatch();
    }

    private void newBatch() {
      root = VectorSchemaRoot.create(arrowSchema, allocator);
      writer = ArrowWriter.create(root);
    }

    @Override
    public void write(InternalRow row) {
      writer.write(row);
      if (++rows >= BATCH_ROWS) {
        send();
      }
    }

    private void send() {
      if (rows == 0) {
        return;
      }
      writer.finish();
      try {
        if (upsert) {
          table.upsert(root);
        } else {
          table.append(root);
        }
      } finally {
        // A batch handed to the core is never written again (the core may still hold its
        // buffers): release ours and start a new one.
        root.close();
        root = null;
        rows = 0;
      }
      newBatch();
    }

    @Override
    public WriterCommitMessage commit() {
      send();
      table.flush();
      return Committed.INSTANCE;
    }

    @Override
    public void abort() {}

    @Override
    public void close() throws IOException {
      try {
        if (root != null) {
          root.close();
        }
      } finally {
        table.close();
      }
    }
  }
}
