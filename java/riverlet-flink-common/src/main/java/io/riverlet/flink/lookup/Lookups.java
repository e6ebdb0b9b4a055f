package io.riverlet.flink.lookup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.riverlet.Connection;
import io.riverlet.Table;
import io.riverlet.flink.Closing;
import io.riverlet.flink.row.ArrowRowReader;
import io.riverlet.flink.row.ArrowRowWriter;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.table.connector.source.LookupTableSource.LookupRuntimeProvider;
import org.apache.flink.table.connector.source.lookup.AsyncLookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.PartialCachingAsyncLookupProvider;
import org.apache.flink.table.connector.source.lookup.PartialCachingLookupProvider;
import org.apache.flink.table.connector.source.lookup.cache.LookupCache;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.AsyncLookupFunction;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.RowType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lookup functions over the Java API's point and prefix lookups, synchronous and asynchronous,
 * optionally behind Flink's partial cache. Their {@code close()} never throws and, for
 * asynchronous lookups, first waits for the lookups in flight ({@link Closing}).
 */
public final class Lookups {

    private static final Logger LOG = LoggerFactory.getLogger(Lookups.class);

    /**
     * How long {@code close()} waits for lookups in flight: far more than a lookup takes, and a
     * lookup the server does not answer ends with the client's request timeout anyway.
     */
    static final Duration IN_FLIGHT_WAIT = Duration.ofSeconds(30);

    private Lookups() {}

    /** The runtime provider of a lookup join. */
    public static LookupRuntimeProvider provider(LookupSpec spec, boolean async, LookupCache cache) {
        if (async) {
            AsyncFn fn = new AsyncFn(spec);
            return cache == null
                    ? AsyncLookupFunctionProvider.of(fn)
                    : PartialCachingAsyncLookupProvider.of(fn, cache);
        }
        SyncFn fn = new SyncFn(spec);
        return cache == null ? LookupFunctionProvider.of(fn) : PartialCachingLookupProvider.of(fn, cache);
    }

    /** The connection, table and conversions one task's lookup function uses. */
    private static final class Session implements AutoCloseable {
        final LookupSpec spec;
        final Connection connection;
        final Table table;
        final Schema keySchema;
        final RowType keyRowType;

        Session(LookupSpec spec) {
            this.spec = spec;
            this.connection = spec.connection.connect();
            this.table = connection.table(spec.connection.tablePath());
            Schema tableSchema = table.schema();
            List<Field> fields = new ArrayList<>();
            List<RowType.RowField> keyRowFields = new ArrayList<>();
            for (int k : spec.keyFields) {
                fields.add(tableSchema.getFields().get(k));
                keyRowFields.add(spec.tableRowType.getFields().get(k));
            }
            this.keySchema = new Schema(fields);
            this.keyRowType = new RowType(keyRowFields);
        }

        VectorSchemaRoot keys(RowData keyRow) {
            VectorSchemaRoot root = VectorSchemaRoot.create(keySchema, connection.allocator());
            int[] identity = new int[spec.keyFields.length];
            for (int i = 0; i < identity.length; i++) {
                identity[i] = i;
            }
            ArrowRowWriter w = new ArrowRowWriter(root, keyRowType, identity);
            w.append(keyRow);
            return root;
        }

        VectorSchemaRoot lookup(VectorSchemaRoot keys) {
            return spec.prefix ? table.prefixLookup(keys) : table.lookup(keys);
        }

        Collection<RowData> rows(VectorSchemaRoot found) {
            try {
                List<RowData> out = new ArrayList<>();
                ArrowRowReader reader = ArrowRowReader.of(found, spec.tableRowType, 0);
                for (int r = 0; r < found.getRowCount(); r++) {
                    GenericRowData full = reader.read(r);
                    GenericRowData row = new GenericRowData(spec.projection.length);
                    for (int i = 0; i < spec.projection.length; i++) {
                        row.setField(i, full.getField(spec.projection[i]));
                    }
                    out.add(row);
                }
                return out;
            } finally {
                found.close();
            }
        }

        /** Closes the table and the connection; failures are logged, never thrown. */
        @Override
        public void close() {
            Closing.quietly(LOG, "the lookup table " + spec.connection.tablePath(), table);
            Closing.quietly(LOG, "the lookup connection of " + spec.connection, connection);
        }
    }

    /** Synchronous lookups. */
    public static final class SyncFn extends LookupFunction {
        private static final long serialVersionUID = 1L;
        private final LookupSpec spec;
        private transient Session session;

        public SyncFn(LookupSpec spec) {
            this.spec = spec;
        }

        @Override
        public void open(FunctionContext context) {
            session = new Session(spec);
        }

        @Override
        public Collection<RowData> lookup(RowData keyRow) {
            try (VectorSchemaRoot keys = session.keys(keyRow)) {
                return session.rows(session.lookup(keys));
            }
        }

        /** Closes the connection; never throws (lookups run on the caller's thread: none is in flight). */
        @Override
        public void close() {
            if (session != null) {
                session.close();
                session = null;
            }
        }
    }

    /**
     * Asynchronous lookups ({@code lookup.async = true}, the default). A lookup's keys and the
     * rows found live in the connection's Arrow allocator until the lookup is done, so
     * {@link #close()} waits (up to {@link #IN_FLIGHT_WAIT}) for the lookups in flight before it
     * closes the connection: Flink closes the function on a cancel without waiting for them.
     */
    public static final class AsyncFn extends AsyncLookupFunction {
        private static final long serialVersionUID = 1L;
        private final LookupSpec spec;
        private transient Session session;
        /** The lookups started and not yet done with the connection's memory. */
        private transient Set<CompletableFuture<?>> inFlight;

        public AsyncFn(LookupSpec spec) {
            this.spec = spec;
        }

        @Override
        public void open(FunctionContext context) {
            inFlight = ConcurrentHashMap.newKeySet();
            session = new Session(spec);
        }

        @Override
        public CompletableFuture<Collection<RowData>> asyncLookup(RowData keyRow) {
            VectorSchemaRoot keys = session.keys(keyRow);
            if (spec.prefix) {
                try {
                    return CompletableFuture.completedFuture(session.rows(session.lookup(keys)));
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                } finally {
                    keys.close();
                }
            }
            CompletableFuture<VectorSchemaRoot> found;
            try {
                found = session.table.lookupAsync(keys);
            } catch (RuntimeException e) {
                keys.close();
                return CompletableFuture.failedFuture(e);
            }
            Session s = session;
            CompletableFuture<Collection<RowData>> rows = found.handle((root, error) -> {
                keys.close();
                if (error != null) {
                    throw new RuntimeException("lookup in " + spec.connection.tablePath() + " failed", error);
                }
                return s.rows(root);
            });
            // Done with the connection's memory once the keys and the rows found are closed.
            inFlight.add(rows);
            rows.whenComplete((r, e) -> inFlight.remove(rows));
            return rows;
        }

        /**
         * Waits for the lookups in flight (up to {@link #IN_FLIGHT_WAIT}), then closes the
         * connection; never throws.
         */
        @Override
        public void close() {
            if (session == null) {
                return;
            }
            CompletableFuture<Void> all = CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]));
            if (!Closing.await(all, IN_FLIGHT_WAIT)) {
                LOG.warn("{} lookups in {} still in flight after {} s; closing its connection anyway",
                        inFlight.size(), spec.connection.tablePath(), IN_FLIGHT_WAIT.toSeconds());
            }
            session.close();
            session = null;
        }
    }
}
