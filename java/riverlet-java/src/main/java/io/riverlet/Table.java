package io.riverlet;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A table: writes (append, upsert, partial update, delete), bounded reads (scan, count), point
 * and prefix lookups, and subscriptions. Thread-safe. Opened with {@link
 * Connection#table(String)}; close it (or its connection).
 *
 * <p>Arrow data crosses to the native core through the C Data Interface without copies of
 * column data: a written {@link VectorSchemaRoot} is exported (the caller still owns and closes
 * it), a read is imported into the connection's allocator (or the one passed).
 */
public final class Table implements AutoCloseable {
  /** {@link #lookup} modes of the native entry. */
  private static final int LOOKUP = 0;
  private static final int LOOKUP_MANY = 1;
  private static final int PREFIX_LOOKUP = 2;

  private final Connection connection;
  private final NativeHandle handle;
  private final TableInfo info;

  Table(Connection connection, long address) {
    this.connection = connection;
    NativeHandle h = new NativeHandle("a table of " + connection.bootstrapServers(), address,
        NativeMethods::tableFree);
    TableInfo i;
    BufferAllocator alloc = connection.allocator();
    try (ArrowSchema schema = ArrowSchema.allocateNew(alloc)) {
      TableInfo partial = h.call(t -> NativeMethods.tableInfoOf(t, schema.memoryAddress()));
      i = partial.withSchema(Data.importSchema(alloc, schema, null));
    } catch (RuntimeException e) {
      h.close();
      throw e;
    }
    this.info = i;
    this.handle = new NativeHandle("table " + i.name(), address, NativeMethods::tableFree);
    // The first guard only served the constructor; the second owns the address from here.
    h.abandon();
  }

  /**
   * {@code database.table}.
   *
   * @return the name
   */
  public String name() {
    return info.name();
  }

  /**
   * The table's metadata as of opening.
   *
   * @return the info
   */
  public TableInfo info() {
    return info;
  }

  /**
   * The Arrow schema of the table's rows.
   *
   * @return the schema
   */
  public Schema schema() {
    return info.schema();
  }

  // ---- writes ----

  /**
   * Queues the rows of {@code root} for appending (log tables); waits while the writer's buffer
   * is full. {@link #flush()} waits for the acknowledgements.
   *
   * @param root the rows, columns by name (the caller keeps owning it)
   * @throws InvalidArgumentException for a missing or mistyped column (named)
   */
  public void append(VectorSchemaRoot root) {
    exportAnd(root, (t, array, schema) -> NativeMethods.append(t, array, schema));
  }

  /**
   * Appends every batch of {@code reader} (the reader is read to its end, not closed).
   *
   * @param reader the batches
   */
  public void append(ArrowReader reader) {
    Objects.requireNonNull(reader, "reader");
    try {
      while (reader.loadNextBatch()) {
        append(reader.getVectorSchemaRoot());
      }
    } catch (IOException e) {
      throw new RiverletException(ErrorKind.IO, "reading the batches to append: " + e, e);
    }
  }

  /**
   * Queues upserts of the rows of {@code root} (primary-key tables): every column.
   *
   * @param root the rows
   * @throws InvalidArgumentException for a null primary-key value (named)
   */
  public void upsert(VectorSchemaRoot root) {
    upsert(root, null);
  }

  /**
   * Queues a partial update: only {@code columns} (which must include the primary key) are
   * written, the others keep their values. Upserts, partial updates and deletes of a table are
   * applied in call order: a call that switches between whole rows and a set of partial-update
   * columns first waits until the writes queued with the other set are acknowledged (and throws
   * their error, if one failed).
   *
   * @param root the rows (at least those columns)
   * @param columns the columns to write, or null for all
   */
  public void upsert(VectorSchemaRoot root, List<String> columns) {
    String[] cols = columns == null ? null : columns.toArray(new String[0]);
    exportAnd(root, (t, array, schema) -> NativeMethods.upsert(t, array, schema, cols));
  }

  /**
   * Queues deletes of the keys in {@code root} (it needs the primary-key columns).
   *
   * @param root the keys
   */
  public void delete(VectorSchemaRoot root) {
    delete(root, null);
  }

  /**
   * Queues deletes of the keys in {@code root} as a partial update of {@code columns} does
   * them: the server removes only those columns' values (a record whose other columns are all
   * null goes). Ordered with upserts and partial updates as {@link #upsert(VectorSchemaRoot,
   * List)} describes.
   *
   * @param root the keys
   * @param columns the partial update's columns (with the primary key), or null for whole rows
   */
  public void delete(VectorSchemaRoot root, List<String> columns) {
    String[] cols = columns == null ? null : columns.toArray(new String[0]);
    exportAnd(root, (t, array, schema) -> NativeMethods.delete(t, array, schema, cols));
  }

  /**
   * Waits until every queued write is acknowledged.
   *
   * @throws RiverletException the first write error since the previous flush
   */
  public void flush() {
    handle.run(NativeMethods::flush);
  }

  // ---- reads ----

  /**
   * Reads the whole table (every row and column).
   *
   * @return a reader (close it)
   */
  public ArrowReader scan() {
    return scan(ReadOptions.all());
  }

  /**
   * Plans and starts a bounded read; batches are fetched as the reader advances.
   *
   * @param options what to read
   * @return a reader in the connection's allocator (close it)
   * @throws InvalidArgumentException for a bad column, filter, window or bucket (named)
   */
  public ArrowReader scan(ReadOptions options) {
    return scan(options, openAllocator());
  }

  /**
   * {@link #scan(ReadOptions)} into the given allocator.
   *
   * @param options what to read
   * @param allocator where the imported batches are accounted
   * @return a reader (close it)
   */
  public ArrowReader scan(ReadOptions options, BufferAllocator allocator) {
    return read(options, allocator).reader();
  }

  /**
   * {@link #scan(ReadOptions)} with the core's warnings about the read (a window starting before
   * the table's {@code table.log.ttl}, ...).
   *
   * @param options what to read
   * @return the reader and the warnings (close it)
   * @throws InvalidArgumentException for a bad column, filter, window or bucket (named)
   */
  public ReadResult read(ReadOptions options) {
    return read(options, connection.allocator());
  }

  /**
   * {@link #read(ReadOptions)} into the given allocator.
   *
   * @param options what to read
   * @param allocator where the imported batches are accounted
   * @return the reader and the warnings (close it)
   */
  public ReadResult read(ReadOptions options, BufferAllocator allocator) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(allocator, "allocator");
    ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
    String[] warnings;
    try {
      warnings = handle.call(t -> NativeMethods.scan(t, options, stream.memoryAddress()));
    } catch (RuntimeException e) {
      stream.close();
      throw e;
    }
    return new ReadResult(Data.importArrayStream(allocator, stream), Warning.fromPairs(warnings));
  }

  /**
   * The number of rows (log tables: records retained; primary-key tables: keys).
   *
   * @return the row count
   */
  public long count() {
    return count(ReadOptions.all());
  }

  /**
   * The number of rows {@link #scan(ReadOptions)} would return.
   *
   * @param options what to count
   * @return the row count
   */
  public long count(ReadOptions options) {
    Objects.requireNonNull(options, "options");
    return handle.callLong(t -> NativeMethods.count(t, options));
  }

  /**
   * The primary-key columns, in the order lookups take them.
   *
   * @return key columns
   */
  public List<String> keyColumns() {
    return List.of(handle.call(t -> NativeMethods.lookupColumns(t, false)));
  }

  /**
   * The columns a prefix lookup takes (bucket keys, plus partition keys when partitioned).
   *
   * @return prefix columns
   */
  public List<String> prefixLookupColumns() {
    return List.of(handle.call(t -> NativeMethods.lookupColumns(t, true)));
  }

  /**
   * The tablet server leading each bucket of the table, as the cluster says now: one entry per
   * bucket in bucket order (for a partitioned table, per partition by name, then bucket). The
   * table's cached leaders are asked from the cluster again first, so the connection's writes,
   * reads and lookups route by this answer from then on. A bucket without a live leader (one is
   * being elected, or its leader just died) has a null {@link BucketLeader#leaderId()}; that is
   * not an error. Against the embedded server every bucket is led by server 0 at the bootstrap
   * address.
   *
   * @return the leaders, in bucket order
   * @throws RiverletException when the cluster cannot be asked (the error names the table)
   */
  public List<BucketLeader> bucketLeaders() {
    return List.of(handle.call(NativeMethods::bucketLeaders));
  }

  /**
   * Point lookups of the keys in {@code keys} (primary-key columns by name): the rows found, in
   * key order (a key without a row contributes nothing).
   *
   * @param keys the keys (the caller keeps owning it)
   * @return the rows found (close it)
   * @throws InvalidArgumentException for a null or missing key column (named)
   */
  public VectorSchemaRoot lookup(VectorSchemaRoot keys) {
    return lookupMode(keys, LOOKUP);
  }

  /**
   * Point lookups that say which key each row answers: the rows found with an INT32 column
   * {@code _key_index} (the row of {@code keys}) first.
   *
   * @param keys the keys
   * @return {@code _key_index} and the rows found (close it)
   */
  public VectorSchemaRoot lookupMany(VectorSchemaRoot keys) {
    return lookupMode(keys, LOOKUP_MANY);
  }

  /**
   * Prefix lookups: every row whose key starts with one of the prefixes in {@code prefixes}
   * (the {@link #prefixLookupColumns()} by name).
   *
   * @param prefixes the prefixes
   * @return the rows found (close it)
   */
  public VectorSchemaRoot prefixLookup(VectorSchemaRoot prefixes) {
    return lookupMode(prefixes, PREFIX_LOOKUP);
  }

  /**
   * {@link #lookup(VectorSchemaRoot)} without blocking: the future completes on a Riverlet
   * runtime thread (a daemon). Do not call blocking Riverlet methods from its callbacks (they
   * fail with {@link UnsupportedException}); use the {@code *Async} stages with an executor.
   *
   * @param keys the keys (exported before this returns; the caller may close it)
   * @return the rows found (close them)
   */
  public CompletableFuture<VectorSchemaRoot> lookupAsync(VectorSchemaRoot keys) {
    Objects.requireNonNull(keys, "keys");
    BufferAllocator alloc = openAllocator();
    AsyncLookup completion = new AsyncLookup(alloc);
    connection.trackAsync(completion.settled);
    BufferAllocator keysAlloc = exportAllocator(keys);
    try (ArrowArray array = ArrowArray.allocateNew(keysAlloc);
        ArrowSchema schema = ArrowSchema.allocateNew(keysAlloc)) {
      Data.exportVectorSchemaRoot(keysAlloc, keys, null, array, schema);
      try {
        handle.run(
            t ->
                NativeMethods.lookupAsync(
                    t,
                    array.memoryAddress(),
                    schema.memoryAddress(),
                    completion.array.memoryAddress(),
                    completion.schema.memoryAddress(),
                    completion));
      } finally {
        // Native code moved the keys; release them if it never got to (closed table).
        array.release();
        schema.release();
      }
    } catch (RuntimeException e) {
      completion.fail(e);
    }
    return completion.future;
  }

  /**
   * Starts an unbounded subscription to the table's changes.
   *
   * @param options where to start and what to read
   * @return the subscription (close it)
   */
  public Subscription subscribe(SubscribeOptions options) {
    Objects.requireNonNull(options, "options");
    long s = handle.callLong(t -> NativeMethods.subscribe(t, options));
    return connection.register(
        new Subscription(connection, name(), s, openAllocator()));
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
   * Flushes and closes this table's writers, then frees it. Idempotent. A caller that will write
   * the unacknowledged rows again anyway (a cancelled stream task) uses {@link #abort()} instead,
   * which does not wait for the server.
   *
   * @throws RiverletException a write error the final flush reported
   */
  @Override
  public void close() {
    try {
      handle.close(NativeMethods::closeWriters);
    } finally {
      connection.unregister(this);
    }
  }

  /**
   * Stops this table's writers at once, without waiting for the server, then frees the table:
   * for a caller that will write the rows again anyway, such as a stream processor's task that
   * is cancelled or failed and restores from its last checkpoint, where {@link #close()} would
   * wait for acknowledgements nobody needs (up to the writer's delivery timeout, 120 s, while a
   * server is unreachable).
   *
   * <p>Writes the server acknowledged stay written. Writes not acknowledged yet are discarded:
   * they may or may not have reached the table (a batch already sent can still be appended), and
   * a {@link #flush()} of another thread waiting for them throws {@link ClosedException}. Later
   * calls throw {@link ClosedException}. Idempotent; a no-op after {@link #close()}.
   *
   * @throws RiverletException only if the native call itself fails
   */
  public void abort() {
    try {
      // First beside calls in flight (a flush or a write of another thread waiting for the
      // server is answered by the abort, so it cannot hold the close below), then while freeing,
      // for a writer such a call may have opened meanwhile.
      try {
        handle.run(NativeMethods::abortWriters);
      } catch (ClosedException alreadyClosed) {
        return;
      }
      handle.close(NativeMethods::abortWriters);
    } finally {
      connection.unregister(this);
    }
  }

  @Override
  public String toString() {
    return "Table(" + name() + ")";
  }

  // ---- glue ----

  /**
   * The connection's allocator, once this table is known to be open: closing the connection
   * closes its tables and may close its allocator, and a caller must then get {@link
   * ClosedException}, not Arrow's error about a closed allocator.
   */
  private BufferAllocator openAllocator() {
    if (handle.isClosed()) {
      throw new ClosedException(this + " is closed");
    }
    return connection.allocator();
  }

  /**
   * The allocator to export {@code root} with: the one its buffers come from. Arrow's export
   * hands the buffers to a vector of the given allocator, which must share their root allocator,
   * so exporting with the connection's allocator fails for rows the caller allocated from an
   * allocator of their own ("A buffer can only be associated between two allocators that share
   * the same root"). A root without columns uses the connection's.
   */
  private BufferAllocator exportAllocator(VectorSchemaRoot root) {
    BufferAllocator connectionAllocator = openAllocator();
    List<FieldVector> vectors = root.getFieldVectors();
    return vectors.isEmpty() ? connectionAllocator : vectors.get(0).getAllocator();
  }

  private interface ExportedCall {
    void apply(long table, long array, long schema);
  }

  private void exportAnd(VectorSchemaRoot root, ExportedCall call) {
    Objects.requireNonNull(root, "root");
    BufferAllocator alloc = exportAllocator(root);
    try (ArrowArray array = ArrowArray.allocateNew(alloc);
        ArrowSchema schema = ArrowSchema.allocateNew(alloc)) {
      Data.exportVectorSchemaRoot(alloc, root, null, array, schema);
      try {
        handle.run(t -> call.apply(t, array.memoryAddress(), schema.memoryAddress()));
      } finally {
        // Native code moved what it took; release whatever it did not (after an early error).
        array.release();
        schema.release();
      }
    }
  }

  private VectorSchemaRoot lookupMode(VectorSchemaRoot keys, int mode) {
    Objects.requireNonNull(keys, "keys");
    BufferAllocator alloc = openAllocator();
    BufferAllocator keysAlloc = exportAllocator(keys);
    try (ArrowArray array = ArrowArray.allocateNew(keysAlloc);
        ArrowSchema schema = ArrowSchema.allocateNew(keysAlloc);
        ArrowArray outArray = ArrowArray.allocateNew(alloc);
        ArrowSchema outSchema = ArrowSchema.allocateNew(alloc)) {
      Data.exportVectorSchemaRoot(keysAlloc, keys, null, array, schema);
      try {
        handle.run(
            t ->
                NativeMethods.lookup(
                    t,
                    mode,
                    array.memoryAddress(),
                    schema.memoryAddress(),
                    outArray.memoryAddress(),
                    outSchema.memoryAddress()));
      } finally {
        array.release();
        schema.release();
      }
      return Data.importVectorSchemaRoot(alloc, outArray, outSchema, null);
    }
  }

  /** Completes a {@link #lookupAsync} future; the native library calls it on a runtime thread. */
  static final class AsyncLookup {
    final CompletableFuture<VectorSchemaRoot> future = new CompletableFuture<>();
    /**
     * Completed after {@link #future} and the stages chained to it before it completed (they run
     * inside its completion): {@link Connection#close()} waits for it.
     */
    final CompletableFuture<Void> settled = new CompletableFuture<>();
    final BufferAllocator allocator;
    final ArrowArray array;
    final ArrowSchema schema;

    AsyncLookup(BufferAllocator allocator) {
      this.allocator = allocator;
      this.array = ArrowArray.allocateNew(allocator);
      this.schema = ArrowSchema.allocateNew(allocator);
    }

    /**
     * Called by native code once the result is in {@link #array} and {@link #schema}. Never
     * throws: the future always completes, and nothing is left pending on the runtime thread
     * (the caller may have closed the table and its allocator while the lookup was in flight).
     */
    void complete() {
      VectorSchemaRoot root;
      try {
        root = Data.importVectorSchemaRoot(allocator, array, schema, null);
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
      RuntimeException closing = closeStructs();
      if (closing != null) {
        root.close();
        settle(() -> future.completeExceptionally(closing));
        return;
      }
      settle(() -> future.complete(root));
    }

    /** Called by native code (or above) with the error. Never throws. */
    void fail(Throwable error) {
      RuntimeException closing = closeStructs();
      if (closing != null) {
        error.addSuppressed(closing);
      }
      settle(() -> future.completeExceptionally(error));
    }

    /** Completes the future (its chained stages run now), then marks the call settled. */
    private void settle(Runnable completeFuture) {
      try {
        completeFuture.run();
      } finally {
        settled.complete(null);
      }
    }

    /** Frees the two C structs; what freeing threw (a closed allocator), or null. */
    private RuntimeException closeStructs() {
      RuntimeException failure = null;
      try {
        array.close();
      } catch (RuntimeException e) {
        failure = e;
      }
      try {
        schema.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
      return failure;
    }
  }
}
