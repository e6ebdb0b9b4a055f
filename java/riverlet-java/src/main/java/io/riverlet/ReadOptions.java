package io.riverlet;

import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * What a bounded read ({@link Table#scan(ReadOptions)}, {@link Table#count(ReadOptions)})
 * returns: columns, a filter, partitions and buckets, a limit, a commit-time window {@code
 * [start, end)} with its zone, a read-optimized (snapshot-only) read of a primary-key table, and
 * the changelog form. The core gives each option its meaning and validates it; this class only
 * carries the values. Immutable; build with {@link #builder()}.
 *
 * <p>Spark and Flink read one bucket per split: {@link Builder#buckets} (with {@link
 * Builder#partitions}) restricts a read to those buckets.
 */
public final class ReadOptions {
  private static final ReadOptions ALL = builder().build();

  // Read by the native library (field names are part of the JNI contract).
  final String[] columns;
  final String filter;
  final String[] partitionNames;
  final String[][] partitionSpecs;
  final int[] buckets;
  final long limit;
  final TimeBound start;
  final TimeBound end;
  final String zone;
  final boolean readOptimized;
  final boolean changelog;
  final int batchSize;

  private ReadOptions(Builder b) {
    this.columns = b.columns == null ? null : b.columns.toArray(new String[0]);
    this.filter = b.filter;
    this.partitionNames = b.partitionNames.isEmpty() && b.partitionSpecs.isEmpty()
        ? null : b.partitionNames.toArray(new String[0]);
    this.partitionSpecs = b.partitionSpecs.isEmpty() ? null
        : b.partitionSpecs.stream().map(Admin::flatten).toArray(String[][]::new);
    this.buckets = b.buckets == null ? null
        : b.buckets.stream().mapToInt(Integer::intValue).toArray();
    this.limit = b.limit;
    this.start = b.start;
    this.end = b.end;
    this.zone = b.zone;
    this.readOptimized = b.readOptimized;
    this.changelog = b.changelog;
    this.batchSize = b.batchSize;
  }

  /**
   * Every row and column.
   *
   * @return the default options
   */
  public static ReadOptions all() {
    return ALL;
  }

  /**
   * A builder.
   *
   * @return a builder with nothing set (read everything)
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The projected columns, or null for all.
   *
   * @return column names
   */
  public List<String> columns() {
    return columns == null ? null : List.of(columns);
  }

  /**
   * The filter text, or null.
   *
   * @return the filter
   */
  public String filter() {
    return filter;
  }

  /**
   * The buckets read, or null for all.
   *
   * @return bucket ids
   */
  public int[] buckets() {
    return buckets == null ? null : buckets.clone();
  }

  /**
   * The row limit, or -1 for none.
   *
   * @return the limit
   */
  public long limit() {
    return limit;
  }

  /**
   * The window's start, or null.
   *
   * @return the start bound
   */
  public TimeBound start() {
    return start;
  }

  /**
   * The window's end (exclusive), or null.
   *
   * @return the end bound
   */
  public TimeBound end() {
    return end;
  }

  @Override
  public String toString() {
    return "ReadOptions(columns=" + (columns == null ? "*" : Arrays.toString(columns))
        + ", filter=" + filter + ", buckets=" + Arrays.toString(buckets) + ", limit=" + limit
        + ", start=" + start + ", end=" + end + ", zone=" + zone
        + ", readOptimized=" + readOptimized + ", changelog=" + changelog + ")";
  }

  /** Builds {@link ReadOptions}. */
  public static final class Builder {
    private List<String> columns;
    private String filter;
    private final List<String> partitionNames = new ArrayList<>();
    private final List<Map<String, String>> partitionSpecs = new ArrayList<>();
    private TreeSet<Integer> buckets;
    private long limit = -1;
    private TimeBound start;
    private TimeBound end;
    private String zone;
    private boolean readOptimized;
    private boolean changelog;
    private int batchSize;

    private Builder() {}

    /**
     * Reads only these columns, in this order.
     *
     * @param names column names
     * @return this
     */
    public Builder columns(String... names) {
      return columns(Arrays.asList(names));
    }

    /**
     * Reads only these columns, in this order.
     *
     * @param names column names
     * @return this
     */
    public Builder columns(List<String> names) {
      this.columns = List.copyOf(names);
      return this;
    }

    /**
     * Keeps only rows matching a filter in the core's text form, e.g. {@code "amount > 10 AND
     * region = 'eu'"} (pushed to the server where it can be, applied exactly here).
     *
     * @param text the filter
     * @return this
     */
    public Builder filter(String text) {
      this.filter = text;
      return this;
    }

    /**
     * Reads only these partitions, by Fluss name (values joined by {@code $}).
     *
     * @param names partition names
     * @return this
     */
    public Builder partitions(String... names) {
      return partitions(Arrays.asList(names));
    }

    /**
     * Reads only these partitions, by Fluss name.
     *
     * @param names partition names
     * @return this
     */
    public Builder partitions(Collection<String> names) {
      for (String n : names) {
        partitionNames.add(Objects.requireNonNull(n, "partition name"));
      }
      return this;
    }

    /**
     * Reads this partition too, given as partition key to value.
     *
     * @param spec partition key to value
     * @return this
     */
    public Builder partition(Map<String, String> spec) {
      partitionSpecs.add(new LinkedHashMap<>(Objects.requireNonNull(spec, "partition spec")));
      return this;
    }

    /**
     * Reads only these buckets (of every selected partition).
     *
     * @param ids bucket ids
     * @return this
     */
    public Builder buckets(int... ids) {
      TreeSet<Integer> s = new TreeSet<>();
      for (int id : ids) {
        s.add(id);
      }
      this.buckets = s;
      return this;
    }

    /**
     * Reads only these buckets.
     *
     * @param ids bucket ids
     * @return this
     */
    public Builder buckets(Collection<Integer> ids) {
      this.buckets = new TreeSet<>(ids);
      return this;
    }

    /**
     * At most {@code n} rows.
     *
     * @param n the limit, at least 0
     * @return this
     */
    public Builder limit(long n) {
      if (n < 0) {
        throw new InvalidArgumentException("limit must be at least 0, not " + n);
      }
      this.limit = n;
      return this;
    }

    /**
     * The commit-time window {@code [start, end)}; either may be null (an end without a start is
     * an error).
     *
     * @param start the first commit time included, or null
     * @param end the first commit time excluded, or null
     * @return this
     */
    public Builder between(TimeBound start, TimeBound end) {
      this.start = start;
      this.end = end;
      return this;
    }

    /**
     * The window's start as text.
     *
     * @param text a timestamp text
     * @return this
     */
    public Builder start(String text) {
      this.start = TimeBound.text(text);
      return this;
    }

    /**
     * The window's start in epoch milliseconds.
     *
     * @param epochMillis epoch milliseconds
     * @return this
     */
    public Builder start(long epochMillis) {
      this.start = TimeBound.epochMillis(epochMillis);
      return this;
    }

    /**
     * The window's start as an instant.
     *
     * @param instant the instant
     * @return this
     */
    public Builder start(Instant instant) {
      this.start = TimeBound.instant(instant);
      return this;
    }

    /**
     * The window's end (exclusive) as text.
     *
     * @param text a timestamp text
     * @return this
     */
    public Builder end(String text) {
      this.end = TimeBound.text(text);
      return this;
    }

    /**
     * The window's end (exclusive) in epoch milliseconds.
     *
     * @param epochMillis epoch milliseconds
     * @return this
     */
    public Builder end(long epochMillis) {
      this.end = TimeBound.epochMillis(epochMillis);
      return this;
    }

    /**
     * The window's end (exclusive) as an instant.
     *
     * @param instant the instant
     * @return this
     */
    public Builder end(Instant instant) {
      this.end = TimeBound.instant(instant);
      return this;
    }

    /**
     * The zone of the window's texts without an offset: an IANA name ({@code Europe/Berlin}),
     * an offset ({@code +02:00}) or {@code UTC}; default: the process's local zone.
     *
     * @param zone the zone
     * @return this
     */
    public Builder zone(String zone) {
      this.zone = zone;
      return this;
    }

    /**
     * The zone of the window's texts.
     *
     * @param zone the zone
     * @return this
     */
    public Builder zone(ZoneId zone) {
      this.zone = zone.getId();
      return this;
    }

    /**
     * Snapshot-only read of a primary-key table (skips the log tail).
     *
     * @param enabled whether
     * @return this
     */
    public Builder readOptimized(boolean enabled) {
      this.readOptimized = enabled;
      return this;
    }

    /**
     * The changelog form: {@code _change_type}, {@code _log_offset}, {@code _commit_timestamp}
     * columns first.
     *
     * @param enabled whether
     * @return this
     */
    public Builder changelog(boolean enabled) {
      this.changelog = enabled;
      return this;
    }

    /**
     * At most this many rows per Arrow batch (0: the batches as they arrive).
     *
     * @param rows rows per batch
     * @return this
     */
    public Builder batchSize(int rows) {
      if (rows < 0) {
        throw new InvalidArgumentException("batch size must be at least 0, not " + rows);
      }
      this.batchSize = rows;
      return this;
    }

    /**
     * The options.
     *
     * @return the options
     */
    public ReadOptions build() {
      return new ReadOptions(this);
    }
  }
}
