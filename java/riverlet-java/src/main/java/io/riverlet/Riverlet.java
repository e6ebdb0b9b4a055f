package io.riverlet;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Entry point: connect to a Fluss cluster or to an embedded {@link LocalServer}.
 *
 * <pre>{@code
 * try (LocalServer server = LocalServer.start(dir, 0);
 *     Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of());
 *     Table t = conn.table("fluss.orders");
 *     ArrowReader r = t.scan(ReadOptions.builder().limit(10).build())) {
 *   while (r.loadNextBatch()) { ... r.getVectorSchemaRoot() ... }
 * }
 * }</pre>
 */
public final class Riverlet {
  private Riverlet() {}

  /**
   * Connects to {@code bootstrap} ({@code host:port[,host:port]}) with Fluss's client options.
   *
   * @param bootstrap the bootstrap servers (Fluss's {@code bootstrap.servers})
   * @param options Fluss client options: {@code client.security.protocol}, {@code
   *     client.security.sasl.mechanism}, {@code client.security.sasl.username}, {@code
   *     client.security.sasl.password}, {@code client.request-timeout}, ...; the core validates
   *     them and names an unknown or bad one
   * @return an open connection (close it)
   * @throws InvalidArgumentException for a bad option
   * @throws NetworkException when no bootstrap server answers
   * @throws AuthenticationException when SASL fails
   */
  public static Connection connect(String bootstrap, Map<String, String> options) {
    return connect(bootstrap, options, null);
  }

  /**
   * {@link #connect(String, Map)} with the Arrow allocator every read of this connection uses by
   * default (the caller keeps owning it); without one, the connection makes and closes its own.
   *
   * @param bootstrap the bootstrap servers
   * @param options Fluss client options
   * @param allocator the allocator for imported Arrow data, or null for a private one
   * @return an open connection (close it)
   */
  public static Connection connect(
      String bootstrap, Map<String, String> options, BufferAllocator allocator) {
    Objects.requireNonNull(bootstrap, "bootstrap");
    Map<String, String> props = new LinkedHashMap<>();
    if (options != null) {
      props.putAll(options);
    }
    props.put("bootstrap.servers", bootstrap);
    return connect(props, allocator);
  }

  /**
   * Connects with Fluss client properties only ({@code bootstrap.servers} among them).
   *
   * @param properties Fluss client properties
   * @param allocator the allocator for imported Arrow data, or null for a private one
   * @return an open connection (close it)
   */
  public static Connection connect(Map<String, String> properties, BufferAllocator allocator) {
    NativeLibrary.ensureLoaded();
    String[] keys = new String[properties.size()];
    String[] values = new String[properties.size()];
    int i = 0;
    for (Map.Entry<String, String> e : properties.entrySet()) {
      keys[i] = Objects.requireNonNull(e.getKey(), "option name");
      values[i] = Objects.requireNonNull(e.getValue(), () -> "value of option " + e.getKey());
      i++;
    }
    long h = NativeMethods.connect(keys, values);
    boolean owned = allocator == null;
    BufferAllocator alloc = owned ? new RootAllocator() : allocator;
    return new Connection(h, String.valueOf(properties.get("bootstrap.servers")), alloc, owned);
  }

  /**
   * Sets the number of worker threads of Riverlet's runtime (default 2). Call before the first
   * connection; later it throws {@link InvalidArgumentException}.
   *
   * @param threads worker threads, at least 1
   */
  public static void configureRuntime(int threads) {
    NativeLibrary.ensureLoaded();
    NativeMethods.configureRuntime(threads);
  }

  /**
   * The version of the native library.
   *
   * @return the crate version, e.g. {@code 0.1.0}
   */
  public static String nativeVersion() {
    NativeLibrary.ensureLoaded();
    return NativeMethods.version();
  }

  /**
   * The number of native objects alive in this class loader's copy of the library (connections,
   * admins, tables, subscriptions, servers, open scan streams). For tests and leak diagnostics:
   * it returns to its previous value when everything opened since is closed.
   *
   * @return live native objects
   */
  public static long nativeHandleCount() {
    NativeLibrary.ensureLoaded();
    return NativeMethods.liveHandles();
  }
}
