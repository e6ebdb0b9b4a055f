package io.riverlet;

import static io.riverlet.TestSupport.field;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.NullableStructWriter;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.Text;
import org.junit.jupiter.api.Test;

/** Every Fluss type, nested ones included, written from Arrow Java and read back unchanged. */
@org.junit.jupiter.api.Tag(ServerTestBase.INTEROP_TAG)
class DataTypesTest extends ServerTestBase {

  private static Field nested(String name, ArrowType type, List<Field> children) {
    return new Field(name, new FieldType(true, type, null), children);
  }

  static Schema allTypes() {
    Field listItem = field("element", new ArrowType.Int(32, true), true);
    Field mapEntries =
        new Field(
            "entries",
            new FieldType(false, ArrowType.Struct.INSTANCE, null),
            List.of(
                field("key", ArrowType.Utf8.INSTANCE, false),
                field("value", new ArrowType.Int(32, true), true)));
    return new Schema(
        List.of(
            field("id", new ArrowType.Int(64, true), false),
            field("b", ArrowType.Bool.INSTANCE, true),
            field("i8", new ArrowType.Int(8, true), true),
            field("i16", new ArrowType.Int(16, true), true),
            field("i32", new ArrowType.Int(32, true), true),
            field("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE), true),
            field("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE), true),
            field("dec", new ArrowType.Decimal(10, 2, 128), true),
            field("s", ArrowType.Utf8.INSTANCE, true),
            field("bytes", ArrowType.Binary.INSTANCE, true),
            field("fixed", new ArrowType.FixedSizeBinary(4), true),
            field("d", new ArrowType.Date(DateUnit.DAY), true),
            field("t3", new ArrowType.Time(TimeUnit.MILLISECOND, 32), true),
            field("t6", new ArrowType.Time(TimeUnit.MICROSECOND, 64), true),
            field("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null), true),
            field("ltz", new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC"), true),
            nested("arr", ArrowType.List.INSTANCE, List.of(listItem)),
            nested("m", new ArrowType.Map(false), List.of(mapEntries)),
            nested(
                "row",
                ArrowType.Struct.INSTANCE,
                List.of(
                    field("x", new ArrowType.Int(32, true), true),
                    field("y", ArrowType.Utf8.INSTANCE, true)))));
  }

  /** Row 0: values everywhere; row 1: nulls everywhere but the key. */
  static VectorSchemaRoot sample(org.apache.arrow.memory.BufferAllocator alloc) {
    VectorSchemaRoot root = VectorSchemaRoot.create(allTypes(), alloc);
    root.allocateNew();
    ((BigIntVector) root.getVector("id")).setSafe(0, 1);
    ((BigIntVector) root.getVector("id")).setSafe(1, 2);
    ((BitVector) root.getVector("b")).setSafe(0, 1);
    ((TinyIntVector) root.getVector("i8")).setSafe(0, -8);
    ((SmallIntVector) root.getVector("i16")).setSafe(0, 1600);
    ((IntVector) root.getVector("i32")).setSafe(0, -320000);
    ((Float4Vector) root.getVector("f32")).setSafe(0, 1.5f);
    ((Float8Vector) root.getVector("f64")).setSafe(0, -2.25);
    ((DecimalVector) root.getVector("dec")).setSafe(0, new BigDecimal("12345678.90"));
    ((VarCharVector) root.getVector("s")).setSafe(0, "héllo".getBytes(StandardCharsets.UTF_8));
    ((VarBinaryVector) root.getVector("bytes")).setSafe(0, new byte[] {0, 1, 2, (byte) 255});
    ((FixedSizeBinaryVector) root.getVector("fixed")).setSafe(0, new byte[] {9, 8, 7, 6});
    ((DateDayVector) root.getVector("d")).setSafe(0, 19000);
    ((TimeMilliVector) root.getVector("t3")).setSafe(0, 45_296_789);
    // Whole milliseconds: Fluss's KV rows store TIME as milliseconds of the day.
    ((TimeMicroVector) root.getVector("t6")).setSafe(0, 45_296_789_000L);
    ((TimeStampMicroVector) root.getVector("ts")).setSafe(0, 1_700_000_000_123_456L);
    ((TimeStampMilliTZVector) root.getVector("ltz")).setSafe(0, 1_700_000_000_123L);

    UnionListWriter lw = ((ListVector) root.getVector("arr")).getWriter();
    lw.setPosition(0);
    lw.startList();
    lw.writeInt(1);
    lw.writeNull();
    lw.writeInt(3);
    lw.endList();

    UnionMapWriter mw = ((MapVector) root.getVector("m")).getWriter();
    mw.setPosition(0);
    mw.startMap();
    mw.startEntry();
    mw.key().varChar().writeVarChar(new Text("k1"));
    mw.value().integer().writeInt(10);
    mw.endEntry();
    mw.startEntry();
    mw.key().varChar().writeVarChar(new Text("k2"));
    mw.value().integer().writeInt(20);
    mw.endEntry();
    mw.endMap();

    NullableStructWriter sw = ((StructVector) root.getVector("row")).getWriter();
    sw.setPosition(0);
    sw.start();
    sw.integer("x").writeInt(42);
    sw.varChar("y").writeVarChar(new Text("inner"));
    sw.end();

    for (int c = 1; c < root.getFieldVectors().size(); c++) {
      root.getVector(c).setNull(1);
    }
    root.setRowCount(2);
    for (org.apache.arrow.vector.FieldVector v : root.getFieldVectors()) {
      v.setValueCount(2);
    }
    return root;
  }

  private static List<String> rendered(VectorSchemaRoot root) {
    List<String> out = new ArrayList<>();
    int ltz = root.getSchema().getFields().indexOf(root.getSchema().findField("ltz"));
    for (List<Object> row : TestSupport.values(root)) {
      List<String> cells = new ArrayList<>();
      // TIMESTAMP_LTZ reads back as Arrow's zone-less timestamp of the same epoch value (the
      // core's mapping, as Fluss's Arrow format has it); write side: epoch millis with "UTC".
      if (row.get(ltz) instanceof Long) {
        row.set(ltz, java.time.LocalDateTime.ofInstant(
            java.time.Instant.ofEpochMilli((Long) row.get(ltz)), java.time.ZoneOffset.UTC));
      }
      for (Object o : row) {
        cells.add(o instanceof byte[] ? java.util.Arrays.toString((byte[]) o) : String.valueOf(o));
      }
      out.add(String.join("|", cells));
    }
    return out;
  }

  private void roundTrip(boolean primaryKey) throws Exception {
    String db = newDatabase();
    TableDescriptor.Builder d = TableDescriptor.builder(allTypes());
    if (primaryKey) {
      d.primaryKey("id");
    }
    String name = createTable(db, primaryKey ? "all_pk" : "all_log", d.build());
    try (Table t = conn.table(name); VectorSchemaRoot src = sample(alloc())) {
      assertEquals(allTypes().getFields().size(), t.schema().getFields().size());
      // The table's schema tells TIMESTAMP_LTZ (an instant: zone UTC) from TIMESTAMP.
      assertEquals(new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC"),
          t.schema().findField("ltz").getType());
      assertEquals(new ArrowType.Timestamp(TimeUnit.MICROSECOND, null),
          t.schema().findField("ts").getType());
      if (primaryKey) {
        t.upsert(src);
      } else {
        t.append(src);
      }
      t.flush();
      List<String> expected = rendered(src);
      List<String> got = new ArrayList<>();
      try (ArrowReader r = t.scan()) {
        while (r.loadNextBatch()) {
          got.addAll(rendered(r.getVectorSchemaRoot()));
        }
      }
      got.sort(null);
      assertEquals(expected, got);
      if (primaryKey) {
        try (VectorSchemaRoot keys = TestSupport.longs(alloc(), "id", 1, 2);
            VectorSchemaRoot found = t.lookup(keys)) {
          assertEquals(expected, rendered(found));
        }
      }
    }
  }

  @Test
  void everyTypeRoundTripsThroughALogTable() throws Exception {
    roundTrip(false);
  }

  @Test
  void everyTypeRoundTripsThroughAPrimaryKeyTable() throws Exception {
    roundTrip(true);
  }
}
