package io.riverlet.spark;

import io.riverlet.Admin;
import io.riverlet.PartitionInfo;
import io.riverlet.ReadOptions;
import io.riverlet.Table;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Driver-side checks of a time-range read before any task runs: the core validates the window
 * (blank or unparseable bounds, an end without a start, a start not before the end, a window on
 * a read-optimized read) when it plans a read, so planning a zero-row read here surfaces its
 * error at analysis (table-valued function) or planning (DataFrame options) time; and a window
 * that starts before {@code now - table.log.ttl} logs a WARN on the driver.
 */
public final class WindowCheck {
  private static final Logger LOG = LoggerFactory.getLogger(WindowCheck.class);
  private static final Duration DEFAULT_TTL = Duration.ofDays(7);

  private WindowCheck() {}

  /** Validates the window of {@code readOptions} (if any) against {@code table}. */
  public static void validate(RiverletTable table, CaseInsensitiveStringMap readOptions) {
    String start = readOptions.get(FlussOptions.INCREMENTAL_START);
    String end = readOptions.get(FlussOptions.INCREMENTAL_END);
    if (start == null && end == null) {
      return;
    }
    String zone = SQLConf.get().sessionLocalTimeZone();
    ReadOptions.Builder b =
        ReadOptions.builder()
            .columns(table.info().schema().getFields().get(0).getName())
            .readOptimized(FlussOptions.readOptimized(readOptions))
            .zone(zone)
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
    // Planning the read (with a limit of 0 rows) is where the core checks the window.
    try (Table t = table.spec().connection().table(table.name());
        ArrowReader r = t.scan(b.build(), ConnectionSpec.allocator())) {
      r.getVectorSchemaRoot();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (IllegalArgumentException | io.riverlet.InvalidArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid time-range read of " + table.name() + ": " + e.getMessage(), e);
    }
    if (start != null) {
      warnIfBeforeRetention(table, start, ZoneId.of(zone));
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

  /** The WARN of a window older than the table's retention (a hint, see Fluss's guide). */
  static void warnIfBeforeRetention(RiverletTable table, String start, ZoneId zone) {
    Long startMs = millis(start, zone);
    if (startMs == null) {
      return;
    }
    Duration ttl = DEFAULT_TTL;
    String configured = table.info().properties().get("table.log.ttl");
    if (configured != null) {
      try {
        ttl = FlussOptions.parseDuration("table.log.ttl", configured);
      } catch (IllegalArgumentException e) {
        return;
      }
    }
    if (ttl.isZero() || ttl.isNegative()) {
      return;
    }
    long now = System.currentTimeMillis();
    if (startMs < now - ttl.toMillis()) {
      LOG.warn(
          "Time-range read of Fluss table {}: the window starts at {} ({}), before now - "
              + "table.log.ttl ({}); rows older than the TTL may already be deleted, so the "
              + "read can return fewer rows than were written in the window",
          table.name(), start, startMs, ttl);
    }
  }

  /** Epoch milliseconds of a bound in the two documented forms, or null. */
  private static Long millis(String text, ZoneId zone) {
    String t = text.trim();
    if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
      try {
        return Long.parseLong(t);
      } catch (NumberFormatException e) {
        return null;
      }
    }
    try {
      return LocalDateTime.parse(t, DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"))
          .atZone(zone)
          .toInstant()
          .toEpochMilli();
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
