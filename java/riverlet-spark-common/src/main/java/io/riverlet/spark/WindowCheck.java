package io.riverlet.spark;

import io.riverlet.Admin;
import io.riverlet.PartitionInfo;
import io.riverlet.ReadOptions;
import io.riverlet.ReadResult;
import io.riverlet.Table;
import io.riverlet.Warning;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Driver-side checks of a time-range read before any task runs. The core owns every rule: it
 * validates the window (blank or unparseable bounds, an end without a start, a start not before
 * the end, a window on a read-optimized read) and finds the window that starts before {@code
 * now - table.log.ttl} when it plans a read. So this plans a zero-row read: its error surfaces at
 * analysis (table-valued function) or planning (DataFrame options) time, and its warnings are
 * logged at WARN on the driver.
 */
public final class WindowCheck {
  private static final Logger LOG = LoggerFactory.getLogger(WindowCheck.class);

  private WindowCheck() {}

  /** Validates the window of {@code readOptions} (if any) against {@code table}. */
  public static void validate(RiverletTable table, CaseInsensitiveStringMap readOptions) {
    String start = readOptions.get(FlussOptions.INCREMENTAL_START);
    String end = readOptions.get(FlussOptions.INCREMENTAL_END);
    if (start == null && end == null) {
      return;
    }
    ReadOptions.Builder b =
        ReadOptions.builder()
            .columns(table.info().schema().getFields().get(0).getName())
            .readOptimized(FlussOptions.readOptimized(readOptions))
            .zone(SQLConf.get().sessionLocalTimeZone())
            .limit(0);
    if (start != null) {
      b.start(start);
    }
    if (end != null) {
      b.end(end);
    }
    String partition = anyPartition(table);
    if (partition != null) {
      b.partitions(partition);
    }
    List<Warning> warnings;
    try (Table t = table.spec().connection().table(table.name());
        ReadResult r = t.read(b.build(), ConnectionSpec.allocator())) {
      warnings = r.warnings();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (IllegalArgumentException | io.riverlet.InvalidArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid time-range read of " + table.name() + ": " + e.getMessage(), e);
    }
    for (Warning w : warnings) {
      LOG.warn("{}", w.message());
    }
  }

  private static String anyPartition(RiverletTable table) {
    if (!table.info().isPartitioned()) {
      return null;
    }
    try (Admin a = table.spec().connection().admin()) {
      List<PartitionInfo> parts = a.listPartitions(table.name());
      return parts.isEmpty() ? null : parts.get(0).name();
    }
  }
}
