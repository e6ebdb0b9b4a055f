package io.riverlet.spark;

import io.riverlet.Connection;
import io.riverlet.Riverlet;
import java.io.Serializable;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * How to reach a Fluss cluster: the client options of a catalog ({@code bootstrap.servers},
 * {@code client.security.*}, ...). Serializable, so that tasks on executors connect the same way
 * as the driver; each JVM keeps one shared {@link Connection} per spec (Riverlet's connections
 * are thread-safe), closed when the JVM exits.
 */
public final class ConnectionSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  private static final Map<ConnectionSpec, Connection> OPEN = new ConcurrentHashMap<>();
  private static final BufferAllocator ALLOCATOR = new RootAllocator();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  for (Connection c : OPEN.values()) {
                    try {
                      c.close();
                    } catch (RuntimeException ignored) {
                      // The process is exiting.
                    }
                  }
                },
                "riverlet-spark-close-connections"));
  }

  private final TreeMap<String, String> options;

  ConnectionSpec(Map<String, String> options) {
    this.options = new TreeMap<>(options);
    // Fluss's default (its clients create a missing partition when a row is written to it, so
    // INSERT INTO a partitioned table works as in Fluss's guide); the core's default is off.
    this.options.putIfAbsent("client.writer.dynamic-create-partition.enabled", "true");
    if (!this.options.containsKey("bootstrap.servers")) {
      throw new IllegalArgumentException(
          "The Fluss catalog needs the option 'bootstrap.servers' (host:port[,host:port]), "
              + "e.g. spark.sql.catalog.fluss_catalog.bootstrap.servers=localhost:9123");
    }
  }

  /** The options, sorted by name. */
  Map<String, String> options() {
    return Collections.unmodifiableMap(options);
  }

  /** The JVM's shared connection for this spec, opened on first use. */
  public Connection connection() {
    Connection c = OPEN.get(this);
    if (c != null && !c.isClosed()) {
      return c;
    }
    synchronized (OPEN) {
      c = OPEN.get(this);
      if (c == null || c.isClosed()) {
        c = Riverlet.connect(options, ALLOCATOR);
        OPEN.put(this, c);
      }
      return c;
    }
  }

  /** The allocator batches are read into (one per JVM). */
  public static BufferAllocator allocator() {
    return ALLOCATOR;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ConnectionSpec && ((ConnectionSpec) o).options.equals(options);
  }

  @Override
  public int hashCode() {
    return options.hashCode();
  }

  @Override
  public String toString() {
    return "ConnectionSpec(" + options.get("bootstrap.servers") + ")";
  }
}
