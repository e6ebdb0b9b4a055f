package io.riverlet.spark;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The options of Fluss's Spark connector, with Fluss's names and defaults.
 *
 * <p>Session options ({@code SET spark.sql.fluss.<name>=...}) configure every read of the
 * session: {@code read.optimized}, {@code scan.startup.mode}, {@code scan.poll.timeout}. The
 * per-read options {@code scan.incremental.start.timestamp} / {@code .end.timestamp} come from the
 * read's own options only ({@code spark.read.option(...)} or the table-valued function), never
 * from the session, so a time window cannot leak into later reads.
 */
public final class FlussOptions {
  private FlussOptions() {}

  /** Prefix of the session options. */
  public static final String SESSION_PREFIX = "spark.sql.fluss.";

  /** Read only the KV snapshot of a primary-key table (no log merge). */
  public static final String READ_OPTIMIZED = "read.optimized";

  /** Where a streaming read starts: full, earliest, latest (streaming supports latest). */
  public static final String STARTUP_MODE = "scan.startup.mode";

  /** How long one poll of a streaming read waits for records. */
  public static final String POLL_TIMEOUT = "scan.poll.timeout";

  /** Per-read: the inclusive start of a time-range read. */
  public static final String INCREMENTAL_START = "scan.incremental.start.timestamp";

  /** Per-read: the exclusive end of a time-range read. */
  public static final String INCREMENTAL_END = "scan.incremental.end.timestamp";

  /** A session option's value, or {@code def}. */
  static String session(String name, String def) {
    String v = SQLConf.get().getConfString(SESSION_PREFIX + name, null);
    return v == null ? def : v;
  }

  /** {@code spark.sql.fluss.read.optimized} of the current session. */
  public static boolean readOptimized(CaseInsensitiveStringMap readOptions) {
    String v = readOptions.get(READ_OPTIMIZED);
    if (v == null) {
      v = session(READ_OPTIMIZED, "false");
    }
    return parseBoolean(READ_OPTIMIZED, v);
  }

  /** {@code spark.sql.fluss.scan.startup.mode} (lower case). */
  public static String startupMode(CaseInsensitiveStringMap readOptions) {
    String v = readOptions.get(STARTUP_MODE);
    if (v == null) {
      v = session(STARTUP_MODE, "full");
    }
    String mode = v.trim().toLowerCase(Locale.ROOT);
    switch (mode) {
      case "full":
      case "earliest":
      case "latest":
      case "timestamp":
        return mode;
      default:
        throw new IllegalArgumentException(
            "Invalid value '" + v + "' for " + SESSION_PREFIX + STARTUP_MODE
                + ": expected one of full, earliest, latest, timestamp");
    }
  }

  /** {@code spark.sql.fluss.scan.poll.timeout} (default 10 s). */
  public static Duration pollTimeout(CaseInsensitiveStringMap readOptions) {
    String v = readOptions.get(POLL_TIMEOUT);
    if (v == null) {
      v = session(POLL_TIMEOUT, "10000ms");
    }
    return parseDuration(SESSION_PREFIX + POLL_TIMEOUT, v);
  }

  static boolean parseBoolean(String name, String v) {
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (t.equals("true")) {
      return true;
    }
    if (t.equals("false")) {
      return false;
    }
    throw new IllegalArgumentException(
        "Invalid value '" + v + "' for " + SESSION_PREFIX + name + ": expected true or false");
  }

  /** {@code 10000ms}, {@code 10s}, {@code 10 s}, {@code 1min}, {@code 2h}, or bare milliseconds. */
  public static Duration parseDuration(String name, String v) {
    String t = v.trim().toLowerCase(Locale.ROOT).replace(" ", "");
    int i = 0;
    while (i < t.length() && Character.isDigit(t.charAt(i))) {
      i++;
    }
    if (i == 0) {
      throw badDuration(name, v);
    }
    long n;
    try {
      n = Long.parseLong(t.substring(0, i));
    } catch (NumberFormatException e) {
      throw badDuration(name, v);
    }
    String unit = t.substring(i);
    switch (unit) {
      case "":
      case "ms":
      case "milli":
      case "millis":
      case "millisecond":
      case "milliseconds":
        return Duration.ofMillis(n);
      case "s":
      case "sec":
      case "secs":
      case "second":
      case "seconds":
        return Duration.ofSeconds(n);
      case "min":
      case "mins":
      case "minute":
      case "minutes":
        return Duration.ofMinutes(n);
      case "h":
      case "hour":
      case "hours":
        return Duration.ofHours(n);
      case "d":
      case "day":
      case "days":
        return Duration.ofDays(n);
      default:
        throw badDuration(name, v);
    }
  }

  private static IllegalArgumentException badDuration(String name, String v) {
    return new IllegalArgumentException(
        "Invalid duration '" + v + "' for " + name + ": expected e.g. 10000ms, 10s, 1min");
  }

  /** The Fluss client options of a catalog: its options minus Spark's own. */
  static Map<String, String> clientOptions(CaseInsensitiveStringMap catalogOptions) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    for (Map.Entry<String, String> e : catalogOptions.asCaseSensitiveMap().entrySet()) {
      out.put(e.getKey(), e.getValue());
    }
    return out;
  }
}
