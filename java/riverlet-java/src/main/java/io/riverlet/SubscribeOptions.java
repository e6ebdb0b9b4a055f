package io.riverlet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * What a {@link Subscription} reads: where it starts ({@link StartupMode}, or a restored {@link
 * SubscriptionPosition}), which columns, partitions and buckets. Immutable; build with {@link
 * #builder(StartupMode)}.
 */
public final class SubscribeOptions {
  // Read by the native library (field names are part of the JNI contract).
  final int startupMode;
  final long startupTimestamp;
  final long[] position;
  final String[] columns;
  final String[] partitionNames;
  final String[][] partitionSpecs;
  final int[] buckets;

  private SubscribeOptions(Builder b) {
    this.startupMode = b.mode.ordinal();
    this.startupTimestamp = b.timestamp;
    if (b.position == null) {
      this.position = null;
    } else {
      List<BucketOffset> offs = b.position.offsets();
      long[] flat = new long[offs.size() * 3];
      int i = 0;
      for (BucketOffset o : offs) {
        flat[i++] = o.partitionId() == null ? -1 : o.partitionId();
        flat[i++] = o.bucket();
        flat[i++] = o.offset();
      }
      this.position = flat;
    }
    this.columns = b.columns == null ? null : b.columns.toArray(new String[0]);
    this.partitionNames = b.partitionNames.isEmpty() && b.partitionSpecs.isEmpty()
        ? null : b.partitionNames.toArray(new String[0]);
    this.partitionSpecs = b.partitionSpecs.isEmpty() ? null
        : b.partitionSpecs.stream().map(Admin::flatten).toArray(String[][]::new);
    this.buckets = b.buckets == null ? null
        : b.buckets.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * A builder starting at {@code mode} ({@link StartupMode#TIMESTAMP} needs {@link
   * Builder#timestamp}, {@link StartupMode#POSITION} needs {@link Builder#startFrom}).
   *
   * @param mode where to start
   * @return a builder
   */
  public static Builder builder(StartupMode mode) {
    return new Builder(Objects.requireNonNull(mode, "startup mode"));
  }

  /**
   * Starts from the first batch committed at or after {@code epochMillis}.
   *
   * @param epochMillis epoch milliseconds
   * @return a builder
   */
  public static Builder fromTimestamp(long epochMillis) {
    return new Builder(StartupMode.TIMESTAMP).timestamp(epochMillis);
  }

  /**
   * Resumes at a position read from an earlier subscription.
   *
   * @param position the position
   * @return a builder
   */
  public static Builder fromPosition(SubscriptionPosition position) {
    return new Builder(StartupMode.POSITION).startFrom(position);
  }

  /**
   * The startup mode.
   *
   * @return the mode
   */
  public StartupMode startupMode() {
    return StartupMode.values()[startupMode];
  }

  /** Builds {@link SubscribeOptions}. */
  public static final class Builder {
    private StartupMode mode;
    private long timestamp = -1;
    private SubscriptionPosition position;
    private List<String> columns;
    private final List<String> partitionNames = new ArrayList<>();
    private final List<Map<String, String>> partitionSpecs = new ArrayList<>();
    private TreeSet<Integer> buckets;

    private Builder(StartupMode mode) {
      this.mode = mode;
    }

    /**
     * The startup timestamp (epoch milliseconds) of {@link StartupMode#TIMESTAMP}.
     *
     * @param epochMillis epoch milliseconds
     * @return this
     */
    public Builder timestamp(long epochMillis) {
      this.mode = StartupMode.TIMESTAMP;
      this.timestamp = epochMillis;
      return this;
    }

    /**
     * Resumes at {@code position}: every bucket in it continues from its offset; a bucket not
     * in it (of a partition created since) starts from the earliest offset.
     *
     * @param position a position from {@link Subscription#position()}
     * @return this
     */
    public Builder startFrom(SubscriptionPosition position) {
      this.mode = StartupMode.POSITION;
      this.position = Objects.requireNonNull(position, "position");
      return this;
    }

    /**
     * Reads only these columns, in this order.
     *
     * @param names column names
     * @return this
     */
    public Builder columns(String... names) {
      this.columns = List.copyOf(Arrays.asList(names));
      return this;
    }

    /**
     * Reads only these partitions, by Fluss name.
     *
     * @param names partition names
     * @return this
     */
    public Builder partitions(String... names) {
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
     * Reads only these buckets.
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
     * The options.
     *
     * @return the options
     */
    public SubscribeOptions build() {
      return new SubscribeOptions(this);
    }
  }
}
