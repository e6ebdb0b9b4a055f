package io.riverlet.flink.source;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import io.riverlet.flink.ConnectionSpec;
import org.apache.flink.table.types.logical.RowType;

/**
 * Everything a source needs at runtime to read a table, fixed at planning: the table, the
 * produced row type, the columns fetched, the pushed-down filter, limit and partitions, the
 * startup mode and whether the read is bounded. Serializable with the job graph.
 */
public final class ReadSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    /** How a streaming read starts. */
    public enum Startup {
        FULL,
        EARLIEST,
        LATEST,
        TIMESTAMP
    }

    final ConnectionSpec connection;
    /** The table's row type (all columns; for $changelog: the three change columns first). */
    final RowType tableRowType;
    /** Positions of the produced fields in {@link #tableRowType}. */
    final int[] projection;
    final boolean primaryKeyTable;
    final boolean partitioned;
    final boolean changelog;
    final boolean bounded;
    final Startup startup;
    final long startupTimestamp;
    final String filter;
    final List<String> partitionNames;
    final long limit;
    final boolean countOnly;
    final long discoveryIntervalMillis;

    public ReadSpec(
            ConnectionSpec connection,
            RowType tableRowType,
            int[] projection,
            boolean primaryKeyTable,
            boolean partitioned,
            boolean changelog,
            boolean bounded,
            Startup startup,
            long startupTimestamp,
            String filter,
            List<String> partitionNames,
            long limit,
            boolean countOnly,
            long discoveryIntervalMillis) {
        this.connection = connection;
        this.tableRowType = tableRowType;
        this.projection = projection.clone();
        this.primaryKeyTable = primaryKeyTable;
        this.partitioned = partitioned;
        this.changelog = changelog;
        this.bounded = bounded;
        this.startup = startup;
        this.startupTimestamp = startupTimestamp;
        this.filter = filter;
        this.partitionNames = partitionNames == null ? null : new ArrayList<>(partitionNames);
        this.limit = limit;
        this.countOnly = countOnly;
        this.discoveryIntervalMillis = discoveryIntervalMillis;
    }

    /**
     * Whether the table is a lake view ({@code t$lake}, {@code t$lake$snapshots}, by the core's
     * split of table names): one split reads the whole view (the core takes no bucket selection
     * for it).
     */
    boolean lakeView() {
        return io.riverlet.TableName.of(connection.table()).kind().isLakeView();
    }

    /** Number of change columns in front of the table's columns in {@link #tableRowType}. */
    int metaColumns() {
        return changelog ? 3 : 0;
    }

    /** Names of the table columns the read fetches (all when empty). */
    List<String> fetchedColumns() {
        List<String> names = new ArrayList<>();
        if (changelog) {
            // The change columns are fetched anyway; fetch every data column, project after.
            return names;
        }
        for (int p : projection) {
            names.add(tableRowType.getFieldNames().get(p));
        }
        return names;
    }

    /** The produced row type. */
    public RowType producedType() {
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : projection) {
            fields.add(tableRowType.getFields().get(p));
        }
        return new RowType(fields);
    }
}
