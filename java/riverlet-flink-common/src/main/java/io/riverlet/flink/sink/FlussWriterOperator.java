package io.riverlet.flink.sink;

import java.util.ArrayList;
import java.util.List;

import io.riverlet.Connection;
import io.riverlet.Table;
import io.riverlet.flink.Closing;
import io.riverlet.flink.row.ArrowRowWriter;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a changelog of rows to a Fluss table: appends for log tables; upserts (or partial
 * upserts of the statement's target columns) and deletes (DELETE and UPDATE_BEFORE rows, with
 * the partial update's target columns) for primary-key tables. Rows are
 * batched as Arrow and handed to the Java API's writer; a change of kind (upsert to delete)
 * sends the batch first, so per key the order of changes is kept. Everything is flushed (and
 * acknowledged) before each checkpoint barrier and at the end of input, so a completed
 * checkpoint never misses a row; the idempotent writer keeps retries from duplicating.
 * Write errors surface there (and from {@link #processElement}); {@link #close()}, which also
 * runs after a cancel or a failure, releases everything and only logs what failed
 * ({@link Closing}); without a completed {@link #finish()} it aborts the table's writers
 * instead of flushing them.
 */
public final class FlussWriterOperator extends AbstractStreamOperator<Object>
        implements OneInputStreamOperator<RowData, Object>, BoundedOneInput {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(FlussWriterOperator.class);

    private enum Kind {
        APPEND,
        UPSERT,
        DELETE
    }

    private final WriteSpec spec;
    private transient Connection connection;
    private transient Table table;
    private transient Schema schema;
    private transient int[] positions;
    private transient VectorSchemaRoot root;
    private transient ArrowRowWriter writer;
    private transient Kind kind;
    /** The end of input was flushed ({@link #endInput()} or {@link #finish()} returned). */
    private transient boolean finished;

    public FlussWriterOperator(WriteSpec spec) {
        this.spec = spec;
    }

    @Override
    public void open() throws Exception {
        super.open();
        connection = spec.connection.connect();
        table = connection.table(spec.connection.tablePath());
        schema = table.schema();
        List<Field> fields = schema.getFields();
        positions = new int[fields.size()];
        List<String> names = spec.rowType.getFieldNames();
        for (int c = 0; c < fields.size(); c++) {
            positions[c] = names.indexOf(fields.get(c).getName());
        }
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        RowData row = element.getValue();
        RowKind rk = row.getRowKind();
        boolean retraction = rk == RowKind.DELETE || rk == RowKind.UPDATE_BEFORE;
        if (retraction && spec.ignoreDelete) {
            // sink.ignore-delete drops both kinds of retraction, as Fluss's sink does.
            return;
        }
        Kind k;
        if (!spec.primaryKeyTable) {
            if (retraction) {
                throw new UnsupportedOperationException("the log table " + spec.connection.tablePath()
                        + " takes only inserts, got a " + rk + " row; write changes to a"
                        + " primary-key table (or set 'sink.ignore-delete' = 'true')");
            }
            k = Kind.APPEND;
        } else if (retraction) {
            // An UPDATE_BEFORE is a delete of its key, as in Fluss's sink: Flink sends one only
            // when the UPDATE_AFTER that follows may carry another key (e.g. a Top-1 whose
            // winner changes), so dropping it would leave a stale row. The table's
            // 'table.delete.behavior' (ignore / allow / disable) is the server's to apply.
            k = Kind.DELETE;
        } else {
            k = Kind.UPSERT;
        }
        if (kind != k && writer != null && writer.count() > 0) {
            send();
        }
        kind = k;
        if (writer == null) {
            root = VectorSchemaRoot.create(schema, connection.allocator());
            writer = new ArrowRowWriter(root, spec.rowType, positions);
        }
        writer.append(row);
        if (writer.count() >= spec.batchRows) {
            send();
        }
    }

    private void send() {
        if (writer == null) {
            return;
        }
        try {
            if (writer.count() > 0) {
                switch (kind) {
                    case APPEND:
                        table.append(root);
                        break;
                    case DELETE:
                        // A partial update's deletes carry its target columns, as Fluss's sink
                        // does: only those columns are removed.
                        table.delete(root, spec.partialColumns == null
                                ? null : new ArrayList<>(spec.partialColumns));
                        break;
                    default:
                        if (spec.partialColumns != null) {
                            table.upsert(root, new ArrayList<>(spec.partialColumns));
                        } else {
                            table.upsert(root);
                        }
                        break;
                }
            }
        } finally {
            // The native writer holds its own references to the exported buffers.
            root.close();
            root = null;
            writer = null;
        }
    }

    private void flush() {
        send();
        if (table != null) {
            table.flush();
        }
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        flush();
    }

    @Override
    public void endInput() {
        flush();
        finished = true;
    }

    @Override
    public void finish() throws Exception {
        flush();
        finished = true;
        super.finish();
    }

    /**
     * Releases the batch being built, the table and the connection; failures are logged, never
     * thrown ({@link Closing}): rows that had to be written were flushed, with their errors
     * raised, by {@link #finish()} or the last checkpoint.
     *
     * <p>After a completed {@link #finish()} the table is closed (its writers have nothing left
     * to flush). Otherwise the task was cancelled or failed (Flink calls {@code close()} without
     * {@code finish()}): the rows written since the last checkpoint will be written again after
     * the restore, so waiting for their acknowledgements is useless, and while a tablet server is
     * unreachable it would hold the cancel for up to the writer's delivery timeout (120 s) and
     * Flink's task.cancellation.timeout (180 s) would then kill the TaskManager. The table is
     * aborted instead: its writers stop at once and discard what is unacknowledged.
     */
    @Override
    public void close() throws Exception {
        try {
            Closing.quietly(LOG, "the batch being written to " + spec.connection.tablePath(), root);
            root = null;
            writer = null;
            Table t = table;
            if (finished || t == null) {
                Closing.quietly(LOG, "the table " + spec.connection.tablePath(), t);
            } else {
                Closing.quietly(LOG, "the table " + spec.connection.tablePath()
                        + " (aborting its unacknowledged writes)", t::abort);
            }
            table = null;
            Closing.quietly(LOG, "the connection of the sink of " + spec.connection, connection);
            connection = null;
        } finally {
            super.close();
        }
    }
}
