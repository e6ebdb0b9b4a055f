package io.riverlet.flink.lookup;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.riverlet.Connection;
import io.riverlet.Table;
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

/**
 * Lookup functions over the Java API's point and prefix lookups, synchronous and asynchronous,
 * optionally behind Flink's partial cache.
 */
public final class Lookups {

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

        @Override
        public void close() {
            table.close();
            connection.close();
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

        @Override
        public void close() {
            if (session != null) {
                session.close();
                session = null;
            }
        }
    }

    /** Asynchronous lookups ({@code lookup.async = true}, the default). */
    public static final class AsyncFn extends AsyncLookupFunction {
        private static final long serialVersionUID = 1L;
        private final LookupSpec spec;
        private transient Session session;

        public AsyncFn(LookupSpec spec) {
            this.spec = spec;
        }

        @Override
        public void open(FunctionContext context) {
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
            return found.handle((root, error) -> {
                keys.close();
                if (error != null) {
                    throw new RuntimeException("lookup in " + spec.connection.tablePath() + " failed", error);
                }
                return session.rows(root);
            });
        }

        @Override
        public void close() {
            if (session != null) {
                session.close();
                session = null;
            }
        }
    }
}
