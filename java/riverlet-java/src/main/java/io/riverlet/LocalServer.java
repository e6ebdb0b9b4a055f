package io.riverlet;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * The embedded single-node Fluss-compatible server, running inside this JVM (on Riverlet's
 * native threads) and listening on TCP, for tests and notebooks. Any Fluss client can talk to
 * it. Close it to stop it; acknowledged data is on disk in the data directory.
 */
public final class LocalServer implements AutoCloseable {
  private final NativeHandle handle;
  private final String bootstrap;
  private final Path dataDir;

  private LocalServer(long address, Path dataDir) {
    this.handle = new NativeHandle("the local server in " + dataDir, address,
        NativeMethods::serverFree);
    this.bootstrap = handle.call(NativeMethods::serverBootstrap);
    this.dataDir = dataDir;
  }

  /**
   * Starts a server on {@code 127.0.0.1:port} storing its data in {@code dataDir}.
   *
   * @param dataDir the data directory (created if missing; reopened with its tables if not empty)
   * @param port the TCP port, or 0 for a free one
   * @return the running server (close it)
   * @throws StorageIOException when the directory cannot be used
   * @throws NetworkException when the port cannot be bound
   */
  public static LocalServer start(Path dataDir, int port) {
    return start(dataDir, "127.0.0.1", port, Map.of());
  }

  /**
   * Starts a server with SASL/PLAIN users.
   *
   * @param dataDir the data directory
   * @param host the address to listen on
   * @param port the TCP port, or 0 for a free one
   * @param users user name to password; empty for no authentication
   * @return the running server (close it)
   */
  public static LocalServer start(Path dataDir, String host, int port, Map<String, String> users) {
    return start(dataDir, host, port, users, Map.of());
  }

  /**
   * Starts a server with SASL/PLAIN users and server options by their Apache Fluss names (for
   * example {@code remote.data.dir}, {@code log.segment.file-size}).
   *
   * @param dataDir the data directory
   * @param host the address to listen on
   * @param port the TCP port, or 0 for a free one
   * @param users user name to password; empty for no authentication
   * @param options server options by their Fluss names, for example {@code kv.snapshot.interval}
   *     (how often primary-key buckets get the KV snapshot read-optimized reads serve; off unless
   *     set)
   * @return the running server (close it)
   * @throws InvalidArgumentException for an unknown option or a bad value
   */
  public static LocalServer start(
      Path dataDir, String host, int port, Map<String, String> users, Map<String, String> options) {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(host, "host");
    NativeLibrary.ensureLoaded();
    String[] flat = Admin.flatten(users == null ? Map.of() : users);
    String[] opts = Admin.flatten(options == null ? Map.of() : options);
    long h =
        NativeMethods.serverStart(dataDir.toAbsolutePath().toString(), host, port, flat, opts);
    return new LocalServer(h, dataDir);
  }

  /**
   * Takes a KV snapshot of every primary-key bucket whose state changed since its latest one,
   * now (what the {@code kv.snapshot.interval} task does periodically); returns once they are
   * written.
   */
  public void takeKvSnapshots() {
    handle.run(NativeMethods::serverTakeKvSnapshots);
  }

  /**
   * Commits the new rows of every lake-enabled table to the lake now (what the {@code
   * table.datalake.freshness} rounds do periodically); returns once committed. The server needs
   * the option {@code datalake.format} ({@code iceberg} or {@code paimon}) and the format's
   * warehouse ({@code datalake.iceberg.warehouse} or {@code datalake.paimon.warehouse}).
   */
  public void commitLake() {
    handle.run(NativeMethods::serverCommitLake);
  }

  /**
   * {@code host:port} to pass to {@link Riverlet#connect(String, Map)}.
   *
   * @return the bootstrap servers
   */
  public String bootstrapServers() {
    return bootstrap;
  }

  /**
   * The TCP port the server listens on.
   *
   * @return the port
   */
  public int port() {
    return Integer.parseInt(bootstrap.substring(bootstrap.lastIndexOf(':') + 1));
  }

  /**
   * The data directory.
   *
   * @return the directory
   */
  public Path dataDir() {
    return dataDir;
  }

  /**
   * Whether the server is running.
   *
   * @return false once closed
   */
  public boolean isRunning() {
    return !handle.isClosed();
  }

  /** Stops the server, flushing acknowledged data to disk. Idempotent. */
  @Override
  public void close() {
    handle.close(NativeMethods::serverShutdown);
  }

  @Override
  public String toString() {
    return "LocalServer(" + bootstrap + (isRunning() ? ")" : ", stopped)");
  }
}
