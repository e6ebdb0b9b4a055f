package io.riverlet.flink.sink;

import java.util.ArrayList;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import io.riverlet.Connection;
import io.riverlet.Table;
import io.riverlet.flink.ConnectionSpec;
import io.riverlet.flink.row.ArrowRowWriter;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.RowLevelModificationScanContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.abilities.SupportsDeletePushDown;
import org.apache.flink.table.connector.sink.abilities.SupportsPartitioning;
import org.apache.flink.table.connector.sink.abilities.SupportsRowLevelDelete;
import org.apache.flink.table.connector.sink.abilities.SupportsRowLevelUpdate;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * The sink of a Fluss table: appends to log tables, upserts and deletes to primary-key tables,
 * partial updates of the statement's target columns, and the rows of batch {@code DELETE} and
 * {@code UPDATE} statements (Flink reads the matching rows through the source, whose filter the
 * core evaluates, and hands them here to be deleted or written back by key).
 */
public final class FlussTableSink
        implements DynamicTableSink, SupportsPartitioning, SupportsDeletePushDown,
                SupportsRowLevelDelete, SupportsRowLevelUpdate {

    private final ConnectionSpec connection;
    private final ResolvedSchema schema;
    private final RowType rowType;
    private final List<String> primaryKey;
    private final String mergeEngine;
    private final String deleteBehavior;
    private final boolean ignoreDelete;

    private List<String> partialColumns;
    private boolean ignoreAllDeletes;
    /** A DELETE whose WHERE names one full key: deleted directly, no scan. */
    private RowData keyToDelete;
    /** An UPDATE statement: its target columns are the SET columns, and whole rows come back. */
    private boolean rowLevelUpdate;

    public FlussTableSink(ConnectionSpec connection, ResolvedSchema schema, RowType rowType,
            List<String> primaryKey, String mergeEngine, String deleteBehavior, boolean ignoreDelete) {
        this.connection = connection;
        this.schema = schema;
        this.rowType = rowType;
        this.primaryKey = primaryKey;
        this.mergeEngine = mergeEngine == null ? null : mergeEngine.trim().toLowerCase(Locale.ROOT);
        this.deleteBehavior = deleteBehavior == null ? "allow" : deleteBehavior.trim().toLowerCase(Locale.ROOT);
        this.ignoreDelete = ignoreDelete;
    }

    private boolean primaryKeyTable() {
        return !primaryKey.isEmpty();
    }

    @Override
    public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
        if ((!primaryKeyTable() && !ignoreDelete) || requestedMode.containsOnly(RowKind.INSERT)) {
            // Inserts only (an append of new rows is an upsert of new keys): Flink 2 then needs
            // no ON CONFLICT clause for an INSERT INTO a primary-key table.
            return ChangelogMode.insertOnly();
        }
        return ChangelogMode.newBuilder()
                .addContainedKind(RowKind.INSERT)
                .addContainedKind(RowKind.UPDATE_AFTER)
                .addContainedKind(RowKind.DELETE)
                .build();
    }

    @Override
    // getTargetColumns is deprecated in Flink 2 (not in 1.20) and still the portable form.
    @SuppressWarnings("deprecation")
    public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
        Optional<int[][]> target = context.getTargetColumns();
        List<String> partial = partialColumns;
        if (partial == null && !rowLevelUpdate && target.isPresent()
                && target.get().length < rowType.getFieldCount()) {
            if (!primaryKeyTable()) {
                throw new ValidationException("INSERT INTO " + connection.tablePath()
                        + " with a column list is a partial update, which needs a primary-key table");
            }
            List<String> cols = new ArrayList<>();
            for (int[] path : target.get()) {
                cols.add(rowType.getFieldNames().get(path[0]));
            }
            if (!cols.containsAll(primaryKey)) {
                throw new ValidationException("a partial update of " + connection.tablePath()
                        + " must write every primary-key column " + primaryKey + "; it writes " + cols);
            }
            partial = cols;
        }
        WriteSpec spec = new WriteSpec(connection, rowType, primaryKeyTable(), partial,
                ignoreDelete || ignoreAllDeletes, 1024);
        return new Provider(spec);
    }

    /** Chains the writer operator after the input, then a discarding end. */
    private static final class Provider implements DataStreamSinkProvider {
        private final WriteSpec spec;

        Provider(WriteSpec spec) {
            this.spec = spec;
        }

        @Override
        public DataStreamSink<?> consumeDataStream(ProviderContext context, DataStream<RowData> input) {
            SingleOutputStreamOperator<Object> written = input.transform(
                    "FlussWriter(" + spec.connection.tablePath() + ")",
                    TypeInformation.of(Object.class),
                    new FlussWriterOperator(spec));
            context.generateUid("fluss-writer").ifPresent(written::uid);
            return written.sinkTo(new DiscardingSink<>()).name("FlussWriterEnd");
        }
    }

    @Override
    public DynamicTableSink copy() {
        FlussTableSink s = new FlussTableSink(connection, schema, rowType, primaryKey, mergeEngine,
                deleteBehavior, ignoreDelete);
        s.partialColumns = partialColumns;
        s.ignoreAllDeletes = ignoreAllDeletes;
        s.keyToDelete = keyToDelete;
        s.rowLevelUpdate = rowLevelUpdate;
        return s;
    }

    @Override
    public String asSummaryString() {
        return "Fluss(" + connection.tablePath() + ")";
    }

    @Override
    public void applyStaticPartition(Map<String, String> partition) {
        // The rows carry their partition values (Flink fills static ones in); the writer routes
        // each row to its partition.
    }

    // ---- DELETE and UPDATE --------------------------------------------------------------

    private void checkModifiable(String statement) {
        if (!primaryKeyTable()) {
            throw new UnsupportedOperationException(statement + " is only supported for primary-key"
                    + " tables; " + connection.tablePath() + " is a log table");
        }
        if (mergeEngine != null && !mergeEngine.isEmpty() && !mergeEngine.equals("last_row")
                && !mergeEngine.equals("default")) {
            throw new UnsupportedOperationException(statement + " is not supported on "
                    + connection.tablePath() + ": its merge engine is '" + mergeEngine + "'; only"
                    + " tables with the default merge engine take DELETE and UPDATE");
        }
    }

    @Override
    public boolean applyDeleteFilters(List<ResolvedExpression> filters) {
        checkModifiable("DELETE");
        checkDeleteAllowed();
        if (deleteBehavior.equals("ignore")) {
            ignoreAllDeletes = true;
            return true;
        }
        Optional<RowData> key = KeyEquality.fullKey(filters, rowType, primaryKey);
        key.ifPresent(k -> keyToDelete = k);
        return key.isPresent();
    }

    @Override
    public Optional<Long> executeDeletion() {
        if (ignoreAllDeletes || keyToDelete == null) {
            return Optional.of(0L);
        }
        try (Connection c = connection.connect();
                Table table = c.table(connection.tablePath());
                VectorSchemaRoot root = VectorSchemaRoot.create(table.schema(), c.allocator())) {
            List<String> names = rowType.getFieldNames();
            int[] positions = new int[root.getFieldVectors().size()];
            for (int i = 0; i < positions.length; i++) {
                positions[i] = names.indexOf(root.getVector(i).getName());
            }
            ArrowRowWriter w = new ArrowRowWriter(root, rowType, positions);
            w.append(keyToDelete);
            table.delete(root);
            table.flush();
        }
        return Optional.of(1L);
    }

    private void checkDeleteAllowed() {
        if (deleteBehavior.equals("disable")) {
            throw new UnsupportedOperationException("DELETE is disabled on " + connection.tablePath()
                    + " ('table.delete.behavior' = 'disable')");
        }
    }

    @Override
    public RowLevelDeleteInfo applyRowLevelDelete(RowLevelModificationScanContext context) {
        checkModifiable("DELETE");
        checkDeleteAllowed();
        if (deleteBehavior.equals("ignore")) {
            ignoreAllDeletes = true;
        }
        // Whole rows: the writer maps columns by the table's row type.
        List<Column> all = new ArrayList<>(schema.getColumns());
        return new RowLevelDeleteInfo() {
            @Override
            public Optional<List<Column>> requiredColumns() {
                return Optional.of(all);
            }

            @Override
            public RowLevelDeleteMode getRowLevelDeleteMode() {
                return RowLevelDeleteMode.DELETED_ROWS;
            }
        };
    }

    @Override
    public RowLevelUpdateInfo applyRowLevelUpdate(List<Column> updatedColumns,
            RowLevelModificationScanContext context) {
        checkModifiable("UPDATE");
        for (Column c : updatedColumns) {
            if (primaryKey.contains(c.getName())) {
                throw new UnsupportedOperationException("UPDATE cannot change the primary-key column '"
                        + c.getName() + "' of " + connection.tablePath() + " (primary key "
                        + primaryKey + ")");
            }
        }
        rowLevelUpdate = true;
        List<Column> all = new ArrayList<>(schema.getColumns());
        return new RowLevelUpdateInfo() {
            @Override
            public Optional<List<Column>> requiredColumns() {
                return Optional.of(all);
            }

            @Override
            public RowLevelUpdateMode getRowLevelUpdateMode() {
                return RowLevelUpdateMode.UPDATED_ROWS;
            }
        };
    }

}
