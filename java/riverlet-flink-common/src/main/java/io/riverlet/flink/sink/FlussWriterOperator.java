package io.riverlet.flink.sink;

import java.util.ArrayList;
import java.util.List;

import io.riverlet.Connection;
import io.riverlet.Table;
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

/**
 * Writes a changelog of rows to a Fluss table: appends for log tables; upserts (or partial
 * upserts of the statement's target columns) and deletes for primary-key tables. Rows are
 * batched as Arrow and handed to the Java API's writer; a change of kind (upsert to delete)
 * sends the batch first, so per key the order of changes is kept. Everything is flushed (and
 * acknowledged) before each checkpoint barrier and at the end of input, so a completed
 * checkpoint never misses a row; the idempotent writer keeps retries from duplicating.
 */
public final class FlussWriterOperator extends AbstractStreamOperator<Object>
        implements OneInputStreamOperator<RowData, Object>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

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
        Kind k;
        if (!spec.primaryKeyTable) {
            if (rk != RowKind.INSERT && rk != RowKind.UPDATE_AFTER) {
                throw new UnsupportedOperationException("the log table " + spec.connection.tablePath()
                        + " takes only inserts, got a " + rk + " row; write changes to a"
                        + " primary-key table");
            }
            k = Kind.APPEND;
        } else if (rk == RowKind.INSERT || rk == RowKind.UPDATE_AFTER) {
            k = Kind.UPSERT;
        } else if (rk == RowKind.DELETE) {
            if (spec.ignoreDelete) {
                return;
            }
            k = Kind.DELETE;
        } else {
            // UPDATE_BEFORE: the following UPDATE_AFTER overwrites the key.
            return;
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
                        table.delete(root);
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
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            if (root != null) {
                root.close();
                root = null;
            }
            if (table != null) {
                table.close();
                table = null;
            }
            if (connection != null) {
                connection.close();
                connection = null;
            }
        } finally {
            super.close();
        }
    }
}
