package io.riverlet.flink.row;

import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.BinaryType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * Flink column types to and from the Arrow fields the Java API describes a table schema with
 * (the core's Fluss type to Arrow mapping): STRING and CHAR are Utf8, BYTES Binary,
 * BINARY(n) FixedSizeBinary(n), DECIMAL Decimal128, DATE Date32, TIME and TIMESTAMP pick the
 * unit from the precision, TIMESTAMP_LTZ is a timestamp with a zone.
 */
public final class FlinkArrowTypes {

    private FlinkArrowTypes() {}

    /** The Arrow field of a Flink column. */
    public static Field toArrow(String name, LogicalType t) {
        return new Field(name, new FieldType(t.isNullable(), arrowTypeOf(name, t), null), null);
    }

    /** The Arrow schema of Flink columns. */
    public static Schema toArrow(List<String> names, List<LogicalType> types) {
        List<Field> fields = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            fields.add(toArrow(names.get(i), types.get(i)));
        }
        return new Schema(fields);
    }

    private static TimeUnit unit(int precision) {
        if (precision == 0) {
            return TimeUnit.SECOND;
        } else if (precision <= 3) {
            return TimeUnit.MILLISECOND;
        } else if (precision <= 6) {
            return TimeUnit.MICROSECOND;
        }
        return TimeUnit.NANOSECOND;
    }

    private static int precision(TimeUnit unit) {
        switch (unit) {
            case SECOND:
                return 0;
            case MILLISECOND:
                return 3;
            case MICROSECOND:
                return 6;
            default:
                return 9;
        }
    }

    private static ArrowType arrowTypeOf(String name, LogicalType t) {
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return ArrowType.Bool.INSTANCE;
            case TINYINT:
                return new ArrowType.Int(8, true);
            case SMALLINT:
                return new ArrowType.Int(16, true);
            case INTEGER:
                return new ArrowType.Int(32, true);
            case BIGINT:
                return new ArrowType.Int(64, true);
            case FLOAT:
                return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
            case DOUBLE:
                return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
            case DECIMAL:
                DecimalType d = (DecimalType) t;
                return new ArrowType.Decimal(d.getPrecision(), d.getScale(), 128);
            case CHAR:
            case VARCHAR:
                return ArrowType.Utf8.INSTANCE;
            case BINARY:
                return new ArrowType.FixedSizeBinary(((BinaryType) t).getLength());
            case VARBINARY:
                return ArrowType.Binary.INSTANCE;
            case DATE:
                return new ArrowType.Date(DateUnit.DAY);
            case TIME_WITHOUT_TIME_ZONE:
                TimeUnit tu = unit(((TimeType) t).getPrecision());
                int bits = tu == TimeUnit.SECOND || tu == TimeUnit.MILLISECOND ? 32 : 64;
                return new ArrowType.Time(tu, bits);
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return new ArrowType.Timestamp(unit(((TimestampType) t).getPrecision()), null);
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return new ArrowType.Timestamp(
                        unit(((LocalZonedTimestampType) t).getPrecision()), "UTC");
            default:
                throw new ValidationException(
                        "column '" + name + "': Fluss tables have no column type for Flink type "
                                + t.asSummaryString());
        }
    }

    /** The Flink column type of an Arrow field (nullability from the field). */
    public static DataType toFlink(Field f) {
        DataType t = baseOf(f);
        return f.isNullable() ? t.nullable() : t.notNull();
    }

    private static DataType baseOf(Field f) {
        ArrowType t = f.getType();
        switch (t.getTypeID()) {
            case Bool:
                return DataTypes.BOOLEAN();
            case Int:
                switch (((ArrowType.Int) t).getBitWidth()) {
                    case 8:
                        return DataTypes.TINYINT();
                    case 16:
                        return DataTypes.SMALLINT();
                    case 32:
                        return DataTypes.INT();
                    default:
                        return DataTypes.BIGINT();
                }
            case FloatingPoint:
                return ((ArrowType.FloatingPoint) t).getPrecision() == FloatingPointPrecision.SINGLE
                        ? DataTypes.FLOAT()
                        : DataTypes.DOUBLE();
            case Decimal:
                ArrowType.Decimal d = (ArrowType.Decimal) t;
                return DataTypes.DECIMAL(d.getPrecision(), d.getScale());
            case Utf8:
            case LargeUtf8:
                return DataTypes.STRING();
            case Binary:
            case LargeBinary:
                return DataTypes.BYTES();
            case FixedSizeBinary:
                return DataTypes.BINARY(((ArrowType.FixedSizeBinary) t).getByteWidth());
            case Date:
                return DataTypes.DATE();
            case Time:
                return DataTypes.TIME(Math.min(3, precision(((ArrowType.Time) t).getUnit())));
            case Timestamp:
                ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
                int p = precision(ts.getUnit());
                return ts.getTimezone() == null
                        ? DataTypes.TIMESTAMP(p)
                        : DataTypes.TIMESTAMP_LTZ(p);
            default:
                throw new ValidationException(
                        "column '" + f.getName() + "': Arrow type " + t
                                + " has no Flink column type in this connector");
        }
    }
}
