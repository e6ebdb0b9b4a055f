package io.riverlet.flink.row;

import java.math.BigDecimal;
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
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
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
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Reads the rows of an Arrow batch as Flink {@link GenericRowData} of a given row type: the
 * batch's columns are matched to the row type's fields by position. Values become Flink's
 * internal data structures (StringData, DecimalData, TimestampData, epoch days, millis of day).
 */
public final class ArrowRowReader {

    /** Reads one value of one row of a vector; only called for non-null slots. */
    @FunctionalInterface
    private interface ValueReader {
        Object read(int row);
    }

    private final ValueReader[] readers;
    private final FieldVector[] vectors;

    private ArrowRowReader(FieldVector[] vectors, ValueReader[] readers) {
        this.vectors = vectors;
        this.readers = readers;
    }

    /**
     * A reader of {@code root}'s rows as {@code rowType}; the first {@code rowType} field reads
     * column {@code firstColumn} of the batch.
     */
    public static ArrowRowReader of(VectorSchemaRoot root, RowType rowType, int firstColumn) {
        List<FieldVector> columns = root.getFieldVectors();
        int n = rowType.getFieldCount();
        if (columns.size() < firstColumn + n) {
            throw new IllegalStateException(
                    "batch has " + columns.size() + " columns, expected " + (firstColumn + n)
                            + " for " + rowType);
        }
        FieldVector[] vectors = new FieldVector[n];
        ValueReader[] readers = new ValueReader[n];
        for (int i = 0; i < n; i++) {
            vectors[i] = columns.get(firstColumn + i);
            readers[i] = readerOf(vectors[i], rowType.getTypeAt(i), rowType.getFieldNames().get(i));
        }
        return new ArrowRowReader(vectors, readers);
    }

    /** Number of fields this reader fills. */
    public int arity() {
        return readers.length;
    }

    /** Writes the fields of {@code row} into {@code target} from position {@code offset}. */
    public void readInto(int row, GenericRowData target, int offset) {
        for (int i = 0; i < readers.length; i++) {
            target.setField(offset + i, vectors[i].isNull(row) ? null : readers[i].read(row));
        }
    }

    /** The row {@code row} as a new {@link GenericRowData}. */
    public GenericRowData read(int row) {
        GenericRowData out = new GenericRowData(readers.length);
        readInto(row, out, 0);
        return out;
    }

    private static ValueReader readerOf(FieldVector v, LogicalType type, String name) {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                if (v instanceof BitVector) {
                    BitVector b = (BitVector) v;
                    return r -> b.get(r) != 0;
                }
                break;
            case TINYINT:
                if (v instanceof TinyIntVector) {
                    TinyIntVector b = (TinyIntVector) v;
                    return b::get;
                }
                break;
            case SMALLINT:
                if (v instanceof SmallIntVector) {
                    SmallIntVector b = (SmallIntVector) v;
                    return b::get;
                }
                break;
            case INTEGER:
                if (v instanceof IntVector) {
                    IntVector b = (IntVector) v;
                    return b::get;
                }
                break;
            case BIGINT:
                if (v instanceof BigIntVector) {
                    BigIntVector b = (BigIntVector) v;
                    return b::get;
                }
                break;
            case FLOAT:
                if (v instanceof Float4Vector) {
                    Float4Vector b = (Float4Vector) v;
                    return b::get;
                }
                break;
            case DOUBLE:
                if (v instanceof Float8Vector) {
                    Float8Vector b = (Float8Vector) v;
                    return b::get;
                }
                break;
            case CHAR:
            case VARCHAR:
                if (v instanceof VarCharVector) {
                    VarCharVector b = (VarCharVector) v;
                    return r -> StringData.fromBytes(b.get(r));
                }
                if (v instanceof LargeVarCharVector) {
                    LargeVarCharVector b = (LargeVarCharVector) v;
                    return r -> StringData.fromBytes(b.get(r));
                }
                break;
            case BINARY:
            case VARBINARY:
                if (v instanceof VarBinaryVector) {
                    VarBinaryVector b = (VarBinaryVector) v;
                    return b::get;
                }
                if (v instanceof LargeVarBinaryVector) {
                    LargeVarBinaryVector b = (LargeVarBinaryVector) v;
                    return b::get;
                }
                if (v instanceof FixedSizeBinaryVector) {
                    FixedSizeBinaryVector b = (FixedSizeBinaryVector) v;
                    return b::get;
                }
                break;
            case DECIMAL:
                if (v instanceof DecimalVector) {
                    DecimalVector b = (DecimalVector) v;
                    DecimalType d = (DecimalType) type;
                    return r -> {
                        BigDecimal value = b.getObject(r);
                        return DecimalData.fromBigDecimal(value, d.getPrecision(), d.getScale());
                    };
                }
                break;
            case DATE:
                if (v instanceof DateDayVector) {
                    DateDayVector b = (DateDayVector) v;
                    return b::get;
                }
                break;
            case TIME_WITHOUT_TIME_ZONE:
                if (v instanceof TimeSecVector) {
                    TimeSecVector b = (TimeSecVector) v;
                    return r -> b.get(r) * 1000;
                }
                if (v instanceof TimeMilliVector) {
                    TimeMilliVector b = (TimeMilliVector) v;
                    return b::get;
                }
                if (v instanceof TimeMicroVector) {
                    TimeMicroVector b = (TimeMicroVector) v;
                    return r -> (int) (b.get(r) / 1000);
                }
                if (v instanceof TimeNanoVector) {
                    TimeNanoVector b = (TimeNanoVector) v;
                    return r -> (int) (b.get(r) / 1_000_000);
                }
                break;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                if (v instanceof TimeStampVector) {
                    TimeStampVector b = (TimeStampVector) v;
                    TimeUnit unit = ((ArrowType.Timestamp) v.getField().getType()).getUnit();
                    return r -> timestamp(b.get(r), unit);
                }
                break;
            default:
                break;
        }
        throw new UnsupportedOperationException(
                "column '" + name + "' of Flink type " + type + " cannot be read from Arrow "
                        + v.getField().getType() + " (" + v.getClass().getSimpleName() + ")");
    }

    private static TimestampData timestamp(long value, TimeUnit unit) {
        switch (unit) {
            case SECOND:
                return TimestampData.fromEpochMillis(value * 1000);
            case MILLISECOND:
                return TimestampData.fromEpochMillis(value);
            case MICROSECOND:
                return TimestampData.fromEpochMillis(
                        Math.floorDiv(value, 1000), Math.toIntExact(Math.floorMod(value, 1000L) * 1000));
            default:
                return TimestampData.fromEpochMillis(
                        Math.floorDiv(value, 1_000_000), Math.toIntExact(Math.floorMod(value, 1_000_000L)));
        }
    }
}
