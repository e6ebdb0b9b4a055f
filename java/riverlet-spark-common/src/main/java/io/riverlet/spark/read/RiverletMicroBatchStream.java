package io.riverlet.spark.read;

import io.riverlet.Admin;
import io.riverlet.BucketOffset;
import io.riverlet.ChangeBatch;
import io.riverlet.ChangeType;
import io.riverlet.OffsetSpec;
import io.riverlet.PartitionInfo;
import io.riverlet.StartupMode;
import io.riverlet.SubscribeOptions;
import io.riverlet.Subscription;
import io.riverlet.SubscriptionPosition;
import io.riverlet.Table;
import io.riverlet.TableInfo;
import io.riverlet.spark.ConnectionSpec;
import io.riverlet.spark.FlussOptions;
import io.riverlet.spark.RiverletTable;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A Structured Streaming read of a Fluss table. An offset is the next log offset of every bucket
 * (of every partition), as {@link SubscriptionPosition}'s text, so checkpoints restore exactly. A
 * micro-batch reads, per bucket, the records between two offsets; primary-key tables yield the
 * new values of their inserts and updates (deletes and update-befores are skipped).
 *
 * <p>Startup mode ({@code spark.sql.fluss.scan.startup.mode}): {@code latest} (changes committed
 * after the query starts) and {@code earliest}; {@code full} and {@code timestamp} are rejected.
 */
final class RiverletMicroBatchStream implements MicroBatchStream {
  private final RiverletTable table;
  private final List<String> columns;
  private final StructType schema;
  private final String mode;
  private final Duration pollTimeout;

  RiverletMicroBatchStream(
      RiverletTable table, List<String> columns, StructType schema,
      CaseInsensitiveStringMap options) {
    this.table = table;
    this.columns = columns;
    this.schema = schema;
    this.mode = FlussOptions.startupMode(options);
    if (!mode.equals("latest") && !mode.equals("earliest")) {
      throw new IllegalArgumentException(
          "Structured Streaming reads of Fluss table " + table.name() + " support "
              + FlussOptions.SESSION_PREFIX + FlussOptions.STARTUP_MODE
              + "=latest (and earliest), not '" + mode + "'; set it with SET "
              + FlussOptions.SESSION_PREFIX + FlussOptions.STARTUP_MODE + "=latest");
    }
    this.pollTimeout = FlussOptions.pollTimeout(options);
  }

  /** Partition id -> name of the table's partitions (one null entry: not partitioned). */
  private Map<Long, String> partitions(Admin admin) {
    Map<Long, String> out = new LinkedHashMap<>();
    TableInfo info = table.info();
    if (!info.isPartitioned()) {
      out.put(null, null);
      return out;
    }
    for (PartitionInfo p : admin.listPartitions(info.name())) {
      out.put(p.id(), p.name());
    }
    return out;
  }

  private PositionOffset offsets(OffsetSpec spec) {
    List<BucketOffset> all = new ArrayList<>();
    try (Admin admin = table.spec().connection().admin()) {
      for (Map.Entry<Long, String> p : partitions(admin).entrySet()) {
        Map<Integer, Long> offs = admin.listOffsets(table.info().name(), p.getValue(), spec);
        for (Map.Entry<Integer, Long> o : offs.entrySet()) {
          all.add(new BucketOffset(p.getKey(), o.getKey(), o.getValue()));
        }
      }
    }
    return new PositionOffset(new SubscriptionPosition(all).toString());
  }

  @Override
  public Offset initialOffset() {
    return offsets(mode.equals("earliest") ? OffsetSpec.earliest() : OffsetSpec.latest());
  }

  @Override
  public Offset latestOffset() {
    return offsets(OffsetSpec.latest());
  }

  @Override
  public Offset deserializeOffset(String json) {
    return new PositionOffset(json);
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    SubscriptionPosition from = SubscriptionPosition.parse(((PositionOffset) start).text);
    SubscriptionPosition to = SubscriptionPosition.parse(((PositionOffset) end).text);
    Map<Long, String> names;
    try (Admin admin = table.spec().connection().admin()) {
      names = partitions(admin);
    }
    List<InputPartition> out = new ArrayList<>();
    for (BucketOffset e : to.offsets()) {
      long begin = from.offset(e.partitionId(), e.bucket());
      // A bucket missing at the start (a partition created since) is read from its start.
      long first = begin < 0 ? 0 : begin;
      if (first >= e.offset()) {
        continue;
      }
      out.add(
          new RangeSplit(
              table.spec(), table.info().name(), columns, names.get(e.partitionId()),
              e.partitionId(), e.bucket(), first, e.offset(), pollTimeout.toMillis()));
    }
    return out.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new RangeReaderFactory(schema);
  }

  @Override
  public void commit(Offset end) {}

  @Override
  public void stop() {}

  /** A position as the offset of a micro-batch. */
  static final class PositionOffset extends Offset {
    final String text;

    PositionOffset(String text) {
      this.text = text;
    }

    @Override
    public String json() {
      return text;
    }
  }

  /** The records of one bucket in {@code [from, to)}. */
  static final class RangeSplit implements InputPartition {
    private static final long serialVersionUID = 1L;
    final ConnectionSpec connection;
    final String table;
    final ArrayList<String> columns;
    final String partitionName;
    final Long partitionId;
    final int bucket;
    final long from;
    final long to;
    final long pollMillis;

    RangeSplit(ConnectionSpec connection, String table, List<String> columns,
        String partitionName, Long partitionId, int bucket, long from, long to, long pollMillis) {
      this.connection = connection;
      this.table = table;
      this.columns = new ArrayList<>(columns);
      this.partitionName = partitionName;
      this.partitionId = partitionId;
      this.bucket = bucket;
      this.from = from;
      this.to = to;
      this.pollMillis = pollMillis;
    }
  }

  static final class RangeReaderFactory implements PartitionReaderFactory, Serializable {
    private static final long serialVersionUID = 1L;
    private final StructType schema;

    RangeReaderFactory(StructType schema) {
      this.schema = schema;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      return new RangeReader((RangeSplit) partition, schema);
    }
  }

  /** Subscribes to one bucket from {@code from} and returns its rows until {@code to}. */
  static final class RangeReader implements PartitionReader<InternalRow> {
    private final RangeSplit split;
    private final StructType schema;
    private final Table table;
    private final Subscription subscription;
    private final Deque<ChangeBatch> pending = new ArrayDeque<>();
    private ChangeBatch batch;
    private ColumnarBatch view;
    private int row = -1;
    private long reached;
    private InternalRow current;

    RangeReader(RangeSplit split, StructType schema) {
      this.split = split;
      this.schema = schema;
      this.table = split.connection.connection().table(split.table);
      this.reached = split.from;
      SubscriptionPosition start =
          new SubscriptionPosition(
              List.of(new BucketOffset(split.partitionId, split.bucket, split.from)));
      SubscribeOptions.Builder b =
          SubscribeOptions.fromPosition(start)
              .buckets(split.bucket)
              .columns(split.columns.toArray(new String[0]));
      if (split.partitionName != null) {
        b.partitions(split.partitionName);
      }
      try {
        this.subscription = table.subscribe(b.build());
      } catch (RuntimeException e) {
        table.close();
        throw e;
      }
    }

    @Override
    public boolean next() {
      while (true) {
        if (batch != null) {
          while (++row < batch.rowCount()) {
            long off = batch.offset(row);
            if (off >= split.to) {
              reached = split.to;
              return false;
            }
            reached = off + 1;
            if (off < split.from) {
              continue;
            }
            ChangeType t = batch.changeType(row);
            if (t == ChangeType.INSERT || t == ChangeType.UPDATE_AFTER) {
              current = view.getRow(row);
              return true;
            }
          }
          batch.close();
          batch = null;
        }
        if (reached >= split.to) {
          return false;
        }
        if (pending.isEmpty()) {
          pending.addAll(subscription.poll(Duration.ofMillis(split.pollMillis)));
          continue;
        }
        batch = pending.poll();
        view = columnsOf(batch.root());
        row = -1;
      }
    }

    private ColumnarBatch columnsOf(VectorSchemaRoot root) {
      StructField[] fields = schema.fields();
      ColumnVector[] cols = new ColumnVector[fields.length];
      for (int i = 0; i < fields.length; i++) {
        FieldVector v = root.getVector(fields[i].name());
        cols[i] = ArrowColumns.wrap(v, fields[i].dataType());
      }
      return new ColumnarBatch(cols, root.getRowCount());
    }

    @Override
    public InternalRow get() {
      return current;
    }

    @Override
    public void close() {
      if (batch != null) {
        batch.close();
      }
      for (ChangeBatch b : pending) {
        b.close();
      }
      try {
        subscription.close();
      } finally {
        table.close();
      }
    }
  }
}
