package io.riverlet;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** One partition of a partitioned table. */
public final class PartitionInfo {
  private final long id;
  private final String name;
  private final Map<String, String> spec;

  /**
   * Built by the native library.
   *
   * @param id the server-assigned partition id
   * @param name Fluss's partition name (values joined by {@code $})
   * @param spec partition key, value, key, value... in partition-key order
   */
  PartitionInfo(long id, String name, String[] spec) {
    this.id = id;
    this.name = name;
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < spec.length; i += 2) {
      m.put(spec[i], spec[i + 1]);
    }
    this.spec = Collections.unmodifiableMap(m);
  }

  /**
   * The server-assigned partition id.
   *
   * @return the id
   */
  public long id() {
    return id;
  }

  /**
   * Fluss's partition name: the values joined by {@code $}, e.g. {@code 2024-01-01$eu}.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * Partition key to value, in partition-key order.
   *
   * @return the spec
   */
  public Map<String, String> spec() {
    return spec;
  }

  @Override
  public String toString() {
    return "PartitionInfo(" + id + ", " + name + ", " + spec + ")";
  }
}
