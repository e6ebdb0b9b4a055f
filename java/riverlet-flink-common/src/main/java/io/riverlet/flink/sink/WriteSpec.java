package io.riverlet.flink.sink;

import java.io.Serializable;
import java.util.List;

import io.riverlet.flink.ConnectionSpec;
import org.apache.flink.table.types.logical.RowType;

/** What the writer operator needs at runtime: the table, the row type and how to write rows. */
public final class WriteSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    final ConnectionSpec connection;
    final RowType rowType;
    final boolean primaryKeyTable;
    /** Columns a partial update writes (with the key), or null for whole rows. */
    final List<String> partialColumns;
    final boolean ignoreDelete;
    final int batchRows;

    public WriteSpec(ConnectionSpec connection, RowType rowType, boolean primaryKeyTable,
            List<String> partialColumns, boolean ignoreDelete, int batchRows) {
        this.connection = connection;
        this.rowType = rowType;
        this.primaryKeyTable = primaryKeyTable;
        this.partialColumns = partialColumns;
        this.ignoreDelete = ignoreDelete;
        this.batchRows = batchRows;
    }
}
