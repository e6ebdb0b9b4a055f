package io.riverlet.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CharType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.VarcharType;

/**
 * Spark types of Fluss columns and back, through the Arrow types the core uses for them.
 *
 * <p>Fluss to Spark: BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, DATE map to
 * the same Spark types; CHAR/STRING to STRING; BINARY/BYTES to BINARY; TIMESTAMP to
 * TIMESTAMP_NTZ and TIMESTAMP_LTZ to TIMESTAMP (Spark keeps microseconds); TIME to INT
 * (milliseconds of the day, as Fluss's own connector); ARRAY, MAP and ROW to ARRAY, MAP, STRUCT.
 *
 * <p>Spark to Fluss (CREATE TABLE): the reverse, with TIMESTAMP as TIMESTAMP_LTZ(6),
 * TIMESTAMP_NTZ as TIMESTAMP(6), and CHAR/VARCHAR as STRING.
 */
public final class TypeMapping {
  private TypeMapping() {}

  /** The Spark schema of an Arrow schema of a Fluss table or scan. */
  public static StructType toSpark(Schema schema) {
    List<StructField> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(toSparkField(f));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  static StructField toSparkField(Field f) {
    return new StructField(f.getName(), toSpark(f), f.isNullable(), Metadata.empty());
  }

  /** The Spark type of one Arrow field. */
  public static DataType toSpark(Field f) {
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Bool:
        return DataTypes.BooleanType;
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        switch (i.getBitWidth()) {
          case 8:
            return DataTypes.ByteType;
          case 16:
            return DataTypes.ShortType;
          case 32:
            return DataTypes.IntegerType;
          default:
            return DataTypes.LongType;
        }
      }
      case FloatingPoint:
        return ((ArrowType.FloatingPoint) t).getPrecision() == FloatingPointPrecision.SINGLE
            ? DataTypes.FloatType
            : DataTypes.DoubleType;
      case Utf8:
      case LargeUtf8:
        return DataTypes.StringType;
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        return DataTypes.BinaryType;
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        return DataTypes.createDecimalType(d.getPrecision(), d.getScale());
      }
      case Date:
        return DataTypes.DateType;
      case Time:
        return DataTypes.IntegerType;
      case Timestamp:
        return ((ArrowType.Timestamp) t).getTimezone() == null
            ? DataTypes.TimestampNTZType
            : DataTypes.TimestampType;
      case List:
      case LargeList: {
        Field element = f.getChildren().get(0);
        return DataTypes.createArrayType(toSpark(element), element.isNullable());
      }
      case Map: {
        Field entries = f.getChildren().get(0);
        Field key = entries.getChildren().get(0);
        Field value = entries.getChildren().get(1);
        return DataTypes.createMapType(toSpark(key), toSpark(value), value.isNullable());
      }
      case Struct: {
        List<StructField> children = new ArrayList<>();
        for (Field c : f.getChildren()) {
          children.add(toSparkField(c));
        }
        return new StructType(children.toArray(new StructField[0]));
      }
      default:
        throw new UnsupportedOperationException(
            "Column '" + f.getName() + "' has Arrow type " + t + ", which has no Spark type");
    }
  }

  /**
   * The Arrow schema Spark's own Arrow writer fills for a write into a table of {@code table}'s
   * schema: each top-level column as the Arrow type of its Spark type (see {@link #toSpark}), so
   * TIMESTAMP(p) and TIMESTAMP_LTZ(p) of any precision become microsecond timestamps, BINARY(n)
   * variable-length binary and TIME an INT of milliseconds of the day. The core converts the
   * batch back to the table's types, checking every value (no sub-unit digits dropped, exactly
   * n bytes, a time within the day) and naming the first that does not fit.
   */
  public static Schema sparkWritable(Schema table) {
    List<Field> fields = new ArrayList<>();
    for (Field f : table.getFields()) {
      ArrowType t = f.getType();
      ArrowType w = t;
      switch (t.getTypeID()) {
        case Timestamp:
          w = new ArrowType.Timestamp(TimeUnit.MICROSECOND, ((ArrowType.Timestamp) t).getTimezone());
          break;
        case FixedSizeBinary:
          w = ArrowType.Binary.INSTANCE;
          break;
        case Time:
          w = new ArrowType.Int(32, true);
          break;
        default:
          break;
      }
      fields.add(
          w == t
              ? f
              : new Field(
                  f.getName(),
                  new FieldType(f.isNullable(), w, null, f.getMetadata()),
                  f.getChildren()));
    }
    return new Schema(fields, table.getCustomMetadata());
  }

  /** The Arrow schema of a Spark schema, for CREATE TABLE (read by the core as Fluss types). */
  public static Schema toArrow(StructType schema) {
    List<Field> fields = new ArrayList<>();
    for (StructField f : schema.fields()) {
      fields.add(toArrowField(f.name(), f.dataType(), f.nullable()));
    }
    return new Schema(fields);
  }

  static Field toArrowField(String name, DataType t, boolean nullable) {
    if (t instanceof ArrayType) {
      ArrayType a = (ArrayType) t;
      return new Field(
          name,
          new FieldType(nullable, ArrowType.List.INSTANCE, null),
          List.of(toArrowField("element", a.elementType(), a.containsNull())));
    }
    if (t instanceof MapType) {
      MapType m = (MapType) t;
      Field entries =
          new Field(
              "entries",
              new FieldType(false, ArrowType.Struct.INSTANCE, null),
              List.of(
                  toArrowField("key", m.keyType(), false),
                  toArrowField("value", m.valueType(), m.valueContainsNull())));
      return new Field(
          name, new FieldType(nullable, new ArrowType.Map(false), null), List.of(entries));
    }
    if (t instanceof StructType) {
      List<Field> children = new ArrayList<>();
      for (StructField c : ((StructType) t).fields()) {
        children.add(toArrowField(c.name(), c.dataType(), c.nullable()));
      }
      return new Field(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null), children);
    }
    return new Field(name, new FieldType(nullable, toArrowPrimitive(name, t), null), null);
  }

  private static ArrowType toArrowPrimitive(String name, DataType t) {
    if (t instanceof BooleanType) {
      return ArrowType.Bool.INSTANCE;
    } else if (t instanceof ByteType) {
      return new ArrowType.Int(8, true);
    } else if (t instanceof ShortType) {
      return new ArrowType.Int(16, true);
    } else if (t instanceof IntegerType) {
      return new ArrowType.Int(32, true);
    } else if (t instanceof LongType) {
      return new ArrowType.Int(64, true);
    } else if (t instanceof FloatType) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    } else if (t instanceof DoubleType) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    } else if (t instanceof StringType || t instanceof CharType || t instanceof VarcharType) {
      return ArrowType.Utf8.INSTANCE;
    } else if (t instanceof BinaryType) {
      return ArrowType.Binary.INSTANCE;
    } else if (t instanceof DecimalType) {
      DecimalType d = (DecimalType) t;
      return new ArrowType.Decimal(d.precision(), d.scale(), 128);
    } else if (t instanceof DateType) {
      return new ArrowType.Date(DateUnit.DAY);
    } else if (t instanceof TimestampType) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
    } else if (t instanceof TimestampNTZType) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
    }
    throw new UnsupportedOperationException(
        "Column '" + name + "' has Spark type " + t.catalogString()
            + ", which Fluss cannot store");
  }
}
