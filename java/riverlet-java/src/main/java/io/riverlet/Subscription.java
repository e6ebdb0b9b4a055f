package io.riverlet;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.TransferPair;

/**
 * An unbounded read of a table's changes ({@link Table#subscribe(SubscribeOptions)}). Poll it
 * from one thread at a time; read {@link #position()} for a checkpoint and resume with {@link
 * SubscribeOptions#fromPosition(SubscriptionPosition)}.
 */
public final class Subscription implements AutoCloseable {
  private final Connection connection;
  private final NativeHandle handle;
  private final BufferAllocator allocator;

  Subscription(Connection connection, String table, long address, BufferAllocator allocator) {
    this.connection = connection;
    this.handle = new NativeHandle("the subscription to " + table, address,
        NativeMethods::subscriptionFree);
    this.allocator = allocator;
  }

  /**
   * The schema of the subscribed columns (without the change columns).
   *
   * @return the schema
   */
  public Schema schema() {
    try (ArrowSchema s = ArrowSchema.allocateNew(allocator)) {
      handle.run(h -> NativeMethods.subscriptionSchema(h, s.memoryAddress()));
      return Data.importSchema(allocator, s, null);
    }
  }

  /**
   * Waits up to {@code timeout} for changes and returns what arrived, possibly nothing. Each
   * batch owns its data: close it. The buckets that delivered rows are already fetching their
   * next rows when this returns (at most one answer per bucket waits for the next poll), so
   * work done on these rows overlaps with the next fetch; {@link #position()} counts only the
   * rows returned.
   *
   * @param timeout how long to wait when nothing is buffered
   * @return the change batches, in arrival order
   * @throws ClosedException after {@link #close()}
   */
  public List<ChangeBatch> poll(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new InvalidArgumentException("poll timeout must not be negative, got " + timeout);
    }
    // Past what a long of milliseconds holds means "until data arrives".
    long millis = timeout.compareTo(Duration.ofMillis(Long.MAX_VALUE)) > 0
        ? Long.MAX_VALUE : timeout.toMillis();
    return handle.call(
        h -> {
          ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
          Object[] meta;
          try {
            meta = NativeMethods.poll(h, millis, stream.memoryAddress());
          } catch (RuntimeException e) {
            stream.close();
            throw e;
          }
          long[] ids = (long[]) meta[0];
          String[] names = (String[]) meta[1];
          List<ChangeBatch> out = new ArrayList<>();
          try (ArrowReader reader = Data.importArrayStream(allocator, stream)) {
            int i = 0;
            while (reader.loadNextBatch()) {
              VectorSchemaRoot src = reader.getVectorSchemaRoot();
              VectorSchemaRoot own = VectorSchemaRoot.create(src.getSchema(), allocator);
              for (int c = 0; c < src.getFieldVectors().size(); c++) {
                TransferPair tp =
                    src.getVector(c).makeTransferPair(own.getVector(c));
                tp.transfer();
              }
              own.setRowCount(src.getRowCount());
              long pid = ids[2 * i];
              out.add(new ChangeBatch(own, pid < 0 ? null : pid, names[i], (int) ids[2 * i + 1]));
              i++;
            }
          } catch (IOException | RuntimeException e) {
            for (ChangeBatch b : out) {
              b.close();
            }
            throw e instanceof RiverletException ? (RiverletException) e
                : new InternalException("reading polled changes: " + e);
          }
          return out;
        });
  }

  /**
   * The next offset of every bucket read (for checkpoints).
   *
   * @return the position
   */
  public SubscriptionPosition position() {
    long[] flat = handle.call(NativeMethods::positions);
    List<BucketOffset> out = new ArrayList<>();
    for (int i = 0; i + 2 < flat.length; i += 3) {
      out.add(new BucketOffset(flat[i] < 0 ? null : flat[i], (int) flat[i + 1], flat[i + 2]));
    }
    return new SubscriptionPosition(out);
  }

  /**
   * Whether {@link #close()} was called.
   *
   * @return true once closed
   */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Stops the subscription. Idempotent. */
  @Override
  public void close() {
    handle.close();
    connection.unregister(this);
  }
}
