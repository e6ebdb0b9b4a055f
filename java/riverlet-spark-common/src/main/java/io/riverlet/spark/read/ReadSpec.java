package io.riverlet.spark.read;

import io.riverlet.ReadOptions;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * What one Spark read asks the core for, planned on the driver and shipped to every task: the
 * columns, the filter text, the limit, the time window (texts the core parses, in the session's
 * zone) and the read mode. Each task adds its own partition and bucket.
 */
final class ReadSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  final String table;
  /** Columns to read, in output order; never empty (see {@link #emptyProjection}). */
  final List<String> columns;
  /** True when Spark needs no column at all (only row counts): {@link #columns} has one. */
  final boolean emptyProjection;
  final String filter;
  final long limit;
  final String windowStart;
  final String windowEnd;
  final String zone;
  final boolean readOptimized;

  ReadSpec(
      String table,
      List<String> columns,
      boolean emptyProjection,
      String filter,
      long limit,
      String windowStart,
      String windowEnd,
      String zone,
      boolean readOptimized) {
    this.table = table;
    this.columns = new ArrayList<>(columns);
    this.emptyProjection = emptyProjection;
    this.filter = filter;
    this.limit = limit;
    this.windowStart = windowStart;
    this.windowEnd = windowEnd;
    this.zone = zone;
    this.readOptimized = readOptimized;
  }

  /** The core's options for one partition (or null: all / not partitioned) and bucket (or -1). */
  ReadOptions options(String partition, int bucket) {
    ReadOptions.Builder b = ReadOptions.builder().columns(columns).readOptimized(readOptimized);
    if (filter != null) {
      b.filter(filter);
    }
    if (partition != null) {
      b.partitions(partition);
    }
    if (bucket >= 0) {
      b.buckets(bucket);
    }
    if (limit >= 0) {
      b.limit(limit);
    }
    if (windowStart != null) {
      b.start(windowStart);
    }
    if (windowEnd != null) {
      b.end(windowEnd);
    }
    if (zone != null) {
      b.zone(zone);
    }
    return b.build();
  }

  boolean hasWindow() {
    return windowStart != null || windowEnd != null;
  }
}
