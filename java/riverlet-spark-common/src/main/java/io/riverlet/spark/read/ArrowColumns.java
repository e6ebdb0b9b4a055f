package io.riverlet.spark.read;

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
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark column vectors over the Arrow vectors the core returns, without copying column data.
 *
 * <p>Where Spark's own {@link ArrowColumnVector} reads every vector of a column (the common
 * case: integers, floats, decimals, strings, binaries, dates, microsecond timestamps, and lists,
 * maps and structs of them) it is used as is. Fluss types Spark's class cannot read — timestamps
 * of second, millisecond or nanosecond precision (Fluss {@code TIMESTAMP(3)} is milliseconds),
 * fixed-size {@code BINARY(n)}, {@code TIME} — and any nesting that contains them are read by
 * {@link Converting}, which converts each value on access (to microseconds, to a byte array, to
 * milliseconds of the day).
 */
public final class ArrowColumns {
  private ArrowColumns() {}

  /** A Spark column over {@code vector}, read as {@code type}. */
  public static ColumnVector wrap(FieldVector vector, DataType type) {
    if (sparkReads(vector)) {
      return new Borrowed(vector);
    }
    return new Converting(vector, type);
  }

  /**
   * Spark's vector over a vector of the reader's root, which stays the root's: closing a
   * ColumnarBatch would otherwise close the root's vectors, and a closed StructVector drops its
   * children, so the reader could not load the next batch into it.
   */
  static final class Borrowed extends ArrowColumnVector {
    Borrowed(ValueVector vector) {
      super(vector);
    }

    @Override
    public void close() {
      // The vectors belong to the reader's VectorSchemaRoot, which closes them.
    }
  }

  /** Whether Spark's ArrowColumnVector reads this vector and all its children. */
  static boolean sparkReads(ValueVector v) {
    if (v instanceof BitVector
        || v instanceof TinyIntVector
        || v instanceof SmallIntVector
        || v instanceof IntVector
        || v instanceof BigIntVector
        || v instanceof Float4Vector
        || v instanceof Float8Vector
        || v instanceof DecimalVector
        || v instanceof VarCharVector
        || v instanceof LargeVarCharVector
        || v instanceof VarBinaryVector
        || v instanceof LargeVarBinaryVector
        || v instanceof DateDayVector
        || v instanceof TimeStampMicroTZVector
        || v instanceof TimeStampMicroVector) {
      return true;
    }
    // MapVector is a ListVector: check it first only for clarity; both recurse the same way.
    if (v instanceof MapVector || v instanceof ListVector) {
      return sparkReads(((ListVector) v).getDataVector());
    }
    if (v instanceof StructVector) {
      for (FieldVector c : ((StructVector) v).getChildrenFromFields()) {
        if (!sparkReads(c)) {
          return false;
        }
      }
      return true;
    }
    return false;
  }

  /** A column that converts Arrow values Spark's own vector cannot read. */
  static final class Converting extends ColumnVector {
    private final ValueVector vector;
    private final long unitToMicrosMul;
    private final long unitToMicrosDiv;
    private final ColumnVector[] children;

    Converting(ValueVector vector, DataType type) {
      super(type);
      this.vector = vector;
      long mul = 1;
      long div = 1;
      if (vector instanceof TimeStampVector) {
        TimeUnit unit = ((ArrowType.Timestamp) vector.getField().getType()).getUnit();
        switch (unit) {
          case SECOND:
            mul = 1_000_000L;
            break;
          case MILLISECOND:
            mul = 1_000L;
            break;
          case NANOSECOND:
            div = 1_000L;
            break;
          default:
            break;
        }
      }
      this.unitToMicrosMul = mul;
      this.unitToMicrosDiv = div;
      if (vector instanceof MapVector) {
        StructVector entries = (StructVector) ((MapVector) vector).getDataVector();
        MapType m = (MapType) type;
        List<FieldVector> kv = entries.getChildrenFromFields();
        this.children =
            new ColumnVector[] {
              wrap(kv.get(0), m.keyType()), wrap(kv.get(1), m.valueType())
            };
      } else if (vector instanceof ListVector) {
        this.children =
            new ColumnVector[] {
              wrap(((ListVector) vector).getDataVector(), ((ArrayType) type).elementType())
            };
      } else if (vector instanceof StructVector) {
        List<FieldVector> fields = ((StructVector) vector).getChildrenFromFields();
        StructType st = (StructType) type;
        this.children = new ColumnVector[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
          children[i] = wrap(fields.get(i), st.fields()[i].dataType());
        }
      } else {
        this.children = new ColumnVector[0];
      }
    }

    @Override
    public void close() {
      // The vectors belong to the reader's VectorSchemaRoot, which closes them.
    }

    @Override
    public boolean hasNull() {
      return vector.getNullCount() > 0;
    }

    @Override
    public int numNulls() {
      return vector.getNullCount();
    }

    @Override
    public boolean isNullAt(int rowId) {
      return vector.isNull(rowId);
    }

    @Override
    public boolean getBoolean(int rowId) {
      return ((BitVector) vector).get(rowId) == 1;
    }

    @Override
    public byte getByte(int rowId) {
      return ((TinyIntVector) vector).get(rowId);
    }

    @Override
    public short getShort(int rowId) {
      return ((SmallIntVector) vector).get(rowId);
    }

    @Override
    public int getInt(int rowId) {
      if (vector instanceof IntVector) {
        return ((IntVector) vector).get(rowId);
      }
      if (vector instanceof DateDayVector) {
        return ((DateDayVector) vector).get(rowId);
      }
      // TIME: milliseconds of the day.
      if (vector instanceof TimeMilliVector) {
        return ((TimeMilliVector) vector).get(rowId);
      }
      if (vector instanceof TimeSecVector) {
        return ((TimeSecVector) vector).get(rowId) * 1000;
      }
      if (vector instanceof TimeMicroVector) {
        return (int) (((TimeMicroVector) vector).get(rowId) / 1000L);
      }
      if (vector instanceof TimeNanoVector) {
        return (int) (((TimeNanoVector) vector).get(rowId) / 1_000_000L);
      }
      throw unsupported("getInt");
    }

    @Override
    public long getLong(int rowId) {
      if (vector instanceof TimeStampVector) {
        long raw = ((TimeStampVector) vector).get(rowId);
        return unitToMicrosDiv == 1
            ? raw * unitToMicrosMul
            : Math.floorDiv(raw, unitToMicrosDiv);
      }
      if (vector instanceof BigIntVector) {
        return ((BigIntVector) vector).get(rowId);
      }
      throw unsupported("getLong");
    }

    @Override
    public float getFloat(int rowId) {
      return ((Float4Vector) vector).get(rowId);
    }

    @Override
    public double getDouble(int rowId) {
      return ((Float8Vector) vector).get(rowId);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      if (isNullAt(rowId)) {
        return null;
      }
      BigDecimal d = ((DecimalVector) vector).getObject(rowId);
      return Decimal.apply(d, precision, scale);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      if (isNullAt(rowId)) {
        return null;
      }
      if (vector instanceof VarCharVector) {
        return UTF8String.fromBytes(((VarCharVector) vector).get(rowId));
      }
      if (vector instanceof LargeVarCharVector) {
        return UTF8String.fromBytes(((LargeVarCharVector) vector).get(rowId));
      }
      throw unsupported("getUTF8String");
    }

    @Override
    public byte[] getBinary(int rowId) {
      if (isNullAt(rowId)) {
        return null;
      }
      if (vector instanceof FixedSizeBinaryVector) {
        return ((FixedSizeBinaryVector) vector).get(rowId);
      }
      if (vector instanceof VarBinaryVector) {
        return ((VarBinaryVector) vector).get(rowId);
      }
      if (vector instanceof LargeVarBinaryVector) {
        return ((LargeVarBinaryVector) vector).get(rowId);
      }
      throw unsupported("getBinary");
    }

    @Override
    public ColumnarArray getArray(int rowId) {
      if (isNullAt(rowId)) {
        return null;
      }
      ListVector list = (ListVector) vector;
      int start = list.getOffsetBuffer().getInt((long) rowId * ListVector.OFFSET_WIDTH);
      int end = list.getOffsetBuffer().getInt((long) (rowId + 1) * ListVector.OFFSET_WIDTH);
      return new ColumnarArray(children[0], start, end - start);
    }

    @Override
    public ColumnarMap getMap(int rowId) {
      if (isNullAt(rowId)) {
        return null;
      }
      MapVector map = (MapVector) vector;
      int start = map.getOffsetBuffer().getInt((long) rowId * MapVector.OFFSET_WIDTH);
      int end = map.getOffsetBuffer().getInt((long) (rowId + 1) * MapVector.OFFSET_WIDTH);
      return new ColumnarMap(children[0], children[1], start, end - start);
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return children[ordinal];
    }

    private UnsupportedOperationException unsupported(String what) {
      return new UnsupportedOperationException(
          what + " of Arrow vector " + vector.getClass().getSimpleName() + " ("
              + vector.getField() + ") as Spark " + dataType().catalogString());
    }
  }
}
