package io.riverlet.flink.lookup;

import java.io.Serializable;
import java.util.Arrays;

import io.riverlet.flink.ConnectionSpec;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.types.logical.RowType;

/**
 * A lookup join against a Fluss table: which columns the join key fills (the primary key for
 * point lookups, the bucket key for prefix lookups) and which columns the join reads.
 */
public final class LookupSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    final ConnectionSpec connection;
    final RowType tableRowType;
    /** Table columns of the join key, in the key row's order. */
    final int[] keyFields;
    final boolean prefix;
    final int[] projection;

    private LookupSpec(ConnectionSpec connection, RowType tableRowType, int[] keyFields, boolean prefix,
            int[] projection) {
        this.connection = connection;
        this.tableRowType = tableRowType;
        this.keyFields = keyFields;
        this.prefix = prefix;
        this.projection = projection;
    }

    /** A lookup by {@code keyFields}, which must be the primary key or the bucket key. */
    public static LookupSpec of(ConnectionSpec connection, RowType tableRowType, int[] primaryKey,
            int[] bucketKey, int[] keyFields, int[] projection) {
        if (primaryKey.length == 0) {
            throw new ValidationException("Fluss table " + connection.tablePath()
                    + " has no primary key: lookup joins need a primary-key table");
        }
        int[] sortedKey = keyFields.clone();
        Arrays.sort(sortedKey);
        int[] sortedPk = primaryKey.clone();
        Arrays.sort(sortedPk);
        if (Arrays.equals(sortedKey, sortedPk)) {
            return new LookupSpec(connection, tableRowType, keyFields.clone(), false, projection.clone());
        }
        int[] sortedBucket = bucketKey.clone();
        Arrays.sort(sortedBucket);
        if (sortedBucket.length > 0 && Arrays.equals(sortedKey, sortedBucket)) {
            return new LookupSpec(connection, tableRowType, keyFields.clone(), true, projection.clone());
        }
        throw new ValidationException("a lookup join on " + connection.tablePath()
                + " must join on its full primary key " + names(tableRowType, primaryKey)
                + " or its bucket key " + names(tableRowType, bucketKey) + ", not on "
                + names(tableRowType, keyFields));
    }

    private static String names(RowType t, int[] fields) {
        StringBuilder b = new StringBuilder("(");
        for (int i = 0; i < fields.length; i++) {
            b.append(i == 0 ? "" : ", ").append(t.getFieldNames().get(fields[i]));
        }
        return b.append(")").toString();
    }
}
