package io.riverlet.spark.read;

import io.riverlet.Admin;
import io.riverlet.PartitionInfo;
import io.riverlet.TableInfo;
import io.riverlet.spark.RiverletTable;
import io.riverlet.spark.WindowCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A planned read: one {@link BucketSplit} per bucket of each selected Fluss partition, read as
 * Arrow batches ({@link ColumnarReaderFactory}); or, for a pushed-down {@code COUNT(*)}, one
 * split per partition answered by the core's count.
 */
final class RiverletScan implements Scan, Batch {
  private final RiverletTable table;
  private final ReadSpec spec;
  private final StructType readSchema;
  private final boolean countStar;
  private final Map<String, Set<String>> partitionValues;
  private final List<Predicate> pushed;
  private final CaseInsensitiveStringMap options;

  RiverletScan(
      RiverletTable table,
      ReadSpec spec,
      StructType readSchema,
      boolean countStar,
      Map<String, Set<String>> partitionValues,
      List<Predicate> pushed,
      CaseInsensitiveStringMap options) {
    this.table = table;
    this.spec = spec;
    this.readSchema = readSchema;
    this.countStar = countStar;
    this.partitionValues = partitionValues;
    this.pushed = pushed;
    this.options = options;
    // Fails now, on the driver, for a window the core rejects, instead of in every task.
    WindowCheck.validate(table, options);
  }

  @Override
  public StructType readSchema() {
    return readSchema;
  }

  @Override
  public String description() {
    StringBuilder sb = new StringBuilder(table.name());
    sb.append(" [Columnar: Arrow");
    sb.append(", ReadSchema: ").append(readSchema.catalogString());
    if (!pushed.isEmpty()) {
      sb.append(", PushedFilters: ")
          .append(pushed.stream().map(Predicate::toString).collect(Collectors.toList()));
    }
    if (spec.filter != null) {
      sb.append(", CoreFilter: ").append(spec.filter);
    }
    if (!partitionValues.isEmpty()) {
      sb.append(", PartitionFilters: ").append(partitionValues);
    }
    if (spec.limit >= 0) {
      sb.append(", PushedLimit: ").append(spec.limit);
    }
    if (countStar) {
      sb.append(", PushedAggregation: [COUNT(*)]");
    }
    if (spec.hasWindow()) {
      sb.append(", Window: [").append(spec.windowStart).append(", ").append(spec.windowEnd)
          .append(") in ").append(spec.zone);
    }
    if (spec.readOptimized) {
      sb.append(", ReadOptimized");
    }
    return sb.append(']').toString();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    return new RiverletMicroBatchStream(table, spec.columns, readSchema, options);
  }

  /** The Fluss partitions to read (null: the table is not partitioned). */
  private List<String> partitions() {
    TableInfo info = table.info();
    if (!info.isPartitioned() || table.isLakeView()) {
      return null;
    }
    List<String> out = new ArrayList<>();
    try (Admin admin = table.spec().connection().admin()) {
      for (PartitionInfo p : admin.listPartitions(info.name())) {
        if (selected(p)) {
          out.add(p.name());
        }
      }
    }
    return out;
  }

  private boolean selected(PartitionInfo p) {
    for (Map.Entry<String, Set<String>> e : partitionValues.entrySet()) {
      String v = p.spec().get(e.getKey());
      if (v != null && !e.getValue().contains(v)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    List<String> parts = partitions();
    List<InputPartition> splits = new ArrayList<>();
    // A plain table reads per bucket (for a lake-enabled log table, the core's union read of
    // that bucket); a lake view in one split (the core takes no bucket selection for it).
    int buckets = table.info().bucketCount();
    if (parts == null) {
      parts = new ArrayList<>();
      parts.add(null);
    }
    for (String part : parts) {
      if (countStar || table.isLakeView()) {
        // The core counts a whole partition (or table) at once, and reads a lake view whole.
        splits.add(new BucketSplit(table.spec(), spec, part, -1));
        continue;
      }
      for (int b = 0; b < buckets; b++) {
        splits.add(new BucketSplit(table.spec(), spec, part, b));
      }
    }
    if (countStar && splits.isEmpty()) {
      // Spark sums the splits' counts: with no split at all the sum would be NULL, not 0.
      splits.add(new BucketSplit(table.spec(), spec, null, BucketSplit.NOTHING));
    }
    return splits.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new ColumnarReaderFactory(readSchema, countStar);
  }
}
