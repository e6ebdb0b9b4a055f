package io.riverlet;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A connection to a Fluss cluster (or a {@link LocalServer}). Thread-safe: share one per
 * process and open {@link Table}s from it. Closing it closes everything opened from it.
 */
public final class Connection implements AutoCloseable {
  private final NativeHandle handle;
  private final String bootstrap;
  private final BufferAllocator allocator;
  private final boolean ownsAllocator;
  private final Set<AutoCloseable> children = ConcurrentHashMap.newKeySet();

  /**
   * How long {@link #close()} waits for {@link Table#lookupAsync} calls still in flight: their
   * results land in this connection's allocator, which close() then closes. Closing the native
   * connection fails the calls that have not been answered, so this is a bound, not a delay.
   */
  private static final long ASYNC_CLOSE_WAIT_SECONDS = 60;

  /** One entry per {@link Table#lookupAsync} call in flight, removed once it is settled. */
  private final Set<CompletableFuture<Void>> asyncInFlight = ConcurrentHashMap.newKeySet();

  Connection(long address, String bootstrap, BufferAllocator allocator, boolean ownsAllocator) {
    this.handle = new NativeHandle("the connection to " + bootstrap, address,
        NativeMethods::connectionFree);
    this.bootstrap = bootstrap;
    this.allocator = allocator;
    this.ownsAllocator = ownsAllocator;
  }

  /**
   * The bootstrap servers this connection was opened with.
   *
   * @return {@code host:port[,...]}
   */
  public String bootstrapServers() {
    return bootstrap;
  }

  /**
   * The Arrow allocator reads of this connection import into by default.
   *
   * @return the allocator
   */
  public BufferAllocator allocator() {
    return allocator;
  }

  /**
   * Cluster administration: databases, tables, partitions, offsets.
   *
   * @return an admin (close it, or let {@link #close()} do so)
   */
  public Admin admin() {
    long a = handle.callLong(NativeMethods::connectionAdmin);
    return register(new Admin(this, a));
  }

  /**
   * Opens a table. A lake-enabled table also opens as {@code database.table$lake} (reads return
   * only the rows of its latest lake snapshot, then the columns {@code __bucket}, {@code
   * __offset}, {@code __timestamp}) and {@code database.table$lake$snapshots} (one row per lake
   * commit: {@code committed_at}, {@code snapshot_id}, {@code parent_id}, {@code operation});
   * those are read-only, and their {@link Table#schema()} is the view's ({@code __timestamp} and
   * {@code committed_at} are TIMESTAMP_LTZ(3)); opening one of a table that is not lake-enabled
   * fails with {@link NotFoundException}. A plain read of a lake-enabled log table is the union of its lake
   * snapshot and the log after it; a time-range read never reads the lake.
   *
   * @param dbDotTable {@code database.table}
   * @return the table (close it, or let {@link #close()} do so)
   * @throws TableNotFoundException when it does not exist
   * @throws InvalidArgumentException for a name that is not {@code database.table}
   */
  public Table table(String dbDotTable) {
    Objects.requireNonNull(dbDotTable, "table name");
    long t = handle.callLong(c -> NativeMethods.connectionTable(c, dbDotTable));
    return register(new Table(this, t));
  }

  /**
   * Whether {@link #close()} was called.
   *
   * @return true once closed
   */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /**
   * Closes every table, admin and subscription opened from this connection, then the
   * connection; later calls throw {@link ClosedException}. Idempotent. {@link
   * Table#lookupAsync} calls still in flight are failed (or answered) and their futures settled
   * before this returns, so their results and the stages the caller chained to them (before the
   * call settled) are done with the allocator first. When the connection made its own allocator,
   * that is closed too: close readers and batches read through it first (Arrow reports any still
   * open as a leak).
   */
  @Override
  public void close() {
    if (handle.isClosed()) {
      return;
    }
    RuntimeException first = null;
    List<AutoCloseable> open = new ArrayList<>(children);
    for (AutoCloseable c : open) {
      try {
        c.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        }
      } catch (Exception e) {
        if (first == null) {
          first = new InternalException(e.toString());
        }
      }
    }
    children.clear();
    handle.close(NativeMethods::connectionClose);
    RuntimeException waiting = awaitAsyncLookups();
    if (first == null) {
      first = waiting;
    }
    if (ownsAllocator) {
      allocator.close();
    }
    if (first != null) {
      throw first;
    }
  }

  /**
   * Tracks an asynchronous call until {@code settled} completes (after its future and the
   * stages chained to it ran).
   */
  void trackAsync(CompletableFuture<Void> settled) {
    asyncInFlight.add(settled);
    settled.whenComplete((ignored, error) -> asyncInFlight.remove(settled));
  }

  /** Waits for the asynchronous calls in flight; an error when some did not settle in time. */
  private RuntimeException awaitAsyncLookups() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ASYNC_CLOSE_WAIT_SECONDS);
    for (CompletableFuture<Void> settled : new ArrayList<>(asyncInFlight)) {
      try {
        settled.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        return new InternalException(
            asyncInFlight.size()
                + " lookupAsync call(s) of "
                + this
                + " did not settle within "
                + ASYNC_CLOSE_WAIT_SECONDS
                + " s of closing the connection");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return new InternalException("interrupted while closing " + this);
      } catch (ExecutionException e) {
        // settled never completes exceptionally; nothing to report
      }
    }
    return null;
  }

  <T extends AutoCloseable> T register(T child) {
    children.add(child);
    if (handle.isClosed()) {
      // Closed while the child was being opened: do not leak it.
      children.remove(child);
      try {
        child.close();
      } catch (Exception ignored) {
        // The ClosedException below is what the caller needs to see.
      }
      throw new ClosedException(handle + " is closed");
    }
    return child;
  }

  void unregister(AutoCloseable child) {
    children.remove(child);
  }

  NativeHandle handle() {
    return handle;
  }

  @Override
  public String toString() {
    return "Connection(" + bootstrap + (isClosed() ? ", closed)" : ")");
  }
}
