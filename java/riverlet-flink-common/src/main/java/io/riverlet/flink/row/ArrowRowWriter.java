package io.riverlet.flink.row;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * Appends Flink {@link RowData} rows to an Arrow batch whose columns are the row type's fields
 * in order (the table's Arrow schema). Fields of the row type that map to no batch column are
 * skipped by passing {@code -1} in the column mapping.
 */
public final class ArrowRowWriter {

    /** Writes field {@code pos} of a row (known non-null) into slot {@code index}. */
    @FunctionalInterface
    private interface ValueWriter {
        void write(RowData row, int pos, int index);
    }

    private final VectorSchemaRoot root;
    private final FieldVector[] vectors;
    private final ValueWriter[] writers;
    private final int[] rowPositions;
    private int count;

    /**
     * A writer into {@code root}: batch column {@code c} takes field {@code rowPositions[c]} of
     * each row of {@code rowType} ({@code -1}: the column is left null).
     */
    public ArrowRowWriter(VectorSchemaRoot root, RowType rowType, int[] rowPositions) {
        this.root = root;
        List<FieldVector> columns = root.getFieldVectors();
        this.vectors = columns.toArray(new FieldVector[0]);
        this.rowPositions = rowPositions.clone();
        this.writers = new ValueWriter[vectors.length];
        for (int c = 0; c < vectors.length; c++) {
            int p = rowPositions[c];
            if (p >= 0) {
                writers[c] = writerOf(vectors[c], rowType.getTypeAt(p), rowType.getFieldNames().get(p));
            }
        }
        for (FieldVector v : vectors) {
            v.allocateNew();
        }
    }

    /** Appends one row. */
    public void append(RowData row) {
        for (int c = 0; c < vectors.length; c++) {
            int p = rowPositions[c];
            if (p < 0 || row.isNullAt(p)) {
                vectors[c].setNull(count);
            } else {
                writers[c].write(row, p, count);
            }
        }
        count++;
        root.setRowCount(count);
    }

    /** Rows appended since the last {@link #reset()}. */
    public int count() {
        return count;
    }

    /** Empties the batch for reuse. */
    public void reset() {
        for (FieldVector v : vectors) {
            v.reset();
        }
        count = 0;
        root.setRowCount(0);
    }

    private static ValueWriter writerOf(FieldVector v, LogicalType type, String name) {
        if (v instanceof BitVector) {
            BitVector b = (BitVector) v;
            return (row, p, i) -> b.setSafe(i, row.getBoolean(p) ? 1 : 0);
        }
        if (v instanceof TinyIntVector) {
            TinyIntVector b = (TinyIntVector) v;
            return (row, p, i) -> b.setSafe(i, row.getByte(p));
        }
        if (v instanceof SmallIntVector) {
            SmallIntVector b = (SmallIntVector) v;
            return (row, p, i) -> b.setSafe(i, row.getShort(p));
        }
        if (v instanceof IntVector) {
            IntVector b = (IntVector) v;
            return (row, p, i) -> b.setSafe(i, row.getInt(p));
        }
        if (v instanceof BigIntVector) {
            BigIntVector b = (BigIntVector) v;
            return (row, p, i) -> b.setSafe(i, row.getLong(p));
        }
        if (v instanceof Float4Vector) {
            Float4Vector b = (Float4Vector) v;
            return (row, p, i) -> b.setSafe(i, row.getFloat(p));
        }
        if (v instanceof Float8Vector) {
            Float8Vector b = (Float8Vector) v;
            return (row, p, i) -> b.setSafe(i, row.getDouble(p));
        }
        if (v instanceof VarCharVector) {
            VarCharVector b = (VarCharVector) v;
            return (row, p, i) -> b.setSafe(i, row.getString(p).toBytes());
        }
        if (v instanceof VarBinaryVector) {
            VarBinaryVector b = (VarBinaryVector) v;
            if (type instanceof org.apache.flink.table.types.logical.VarCharType
                    || type instanceof org.apache.flink.table.types.logical.CharType) {
                return (row, p, i) ->
                        b.setSafe(i, row.getString(p).toString().getBytes(StandardCharsets.UTF_8));
            }
            return (row, p, i) -> b.setSafe(i, row.getBinary(p));
        }
        if (v instanceof FixedSizeBinaryVector) {
            FixedSizeBinaryVector b = (FixedSizeBinaryVector) v;
            return (row, p, i) -> b.setSafe(i, row.getBinary(p));
        }
        if (v instanceof DecimalVector && type instanceof DecimalType) {
            DecimalVector b = (DecimalVector) v;
            DecimalType d = (DecimalType) type;
            return (row, p, i) -> {
                DecimalData value = row.getDecimal(p, d.getPrecision(), d.getScale());
                b.setSafe(i, value.toBigDecimal().setScale(b.getScale()));
            };
        }
        if (v instanceof DateDayVector) {
            DateDayVector b = (DateDayVector) v;
            return (row, p, i) -> b.setSafe(i, row.getInt(p));
        }
        if (v instanceof TimeSecVector) {
            TimeSecVector b = (TimeSecVector) v;
            return (row, p, i) -> b.setSafe(i, row.getInt(p) / 1000);
        }
        if (v instanceof TimeMilliVector) {
            TimeMilliVector b = (TimeMilliVector) v;
            return (row, p, i) -> b.setSafe(i, row.getInt(p));
        }
        if (v instanceof TimeMicroVector) {
            TimeMicroVector b = (TimeMicroVector) v;
            return (row, p, i) -> b.setSafe(i, row.getInt(p) * 1000L);
        }
        if (v instanceof TimeNanoVector) {
            TimeNanoVector b = (TimeNanoVector) v;
            return (row, p, i) -> b.setSafe(i, row.getInt(p) * 1_000_000L);
        }
        if (v instanceof TimeStampVector) {
            TimeStampVector b = (TimeStampVector) v;
            TimeUnit unit = ((ArrowType.Timestamp) v.getField().getType()).getUnit();
            int precision = timestampPrecision(type);
            return (row, p, i) -> b.setSafe(i, encode(row.getTimestamp(p, precision), unit));
        }
        throw new UnsupportedOperationException(
                "column '" + name + "' of Flink type " + type + " cannot be written as Arrow "
                        + v.getField().getType());
    }

    private static int timestampPrecision(LogicalType type) {
        if (type instanceof TimestampType) {
            return ((TimestampType) type).getPrecision();
        }
        if (type instanceof LocalZonedTimestampType) {
            return ((LocalZonedTimestampType) type).getPrecision();
        }
        return 9;
    }

    private static long encode(TimestampData ts, TimeUnit unit) {
        long millis = ts.getMillisecond();
        int nanos = ts.getNanoOfMillisecond();
        switch (unit) {
            case SECOND:
                return Math.floorDiv(millis, 1000);
            case MILLISECOND:
                return millis;
            case MICROSECOND:
                return millis * 1000 + nanos / 1000;
            default:
                return millis * 1_000_000 + nanos;
        }
    }
}
