package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.riverlet.Table;
import io.riverlet.TableDescriptor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/**
 * Spark writes into the Fluss types Spark has no exact type for: TIMESTAMP(3) and TIMESTAMP(0)
 * (Spark: TIMESTAMP_NTZ, microseconds), TIMESTAMP_LTZ(3) (Spark: TIMESTAMP), BINARY(n) (Spark:
 * BINARY) and TIME(0/3/6) (Spark: INT, milliseconds of the day, as Fluss's connector reads them).
 * Each value is read back exactly, through Spark and as the stored Arrow values; a value the
 * column cannot hold fails naming it. The tables are created through the Java API (Spark's
 * CREATE TABLE cannot name these types).
 */
class SparkWriteTypesTest extends SparkTestBase {
  // 2026-01-01T12:34:56.789Z: 1767225600 s (2026-01-01T00:00Z) + 45296.789 s.
  private static final long TS_MILLIS = 1_767_270_896_789L;
  private static final int TIME_MILLIS = 45_296_789; // 12:34:56.789

  private static Field field(String name, ArrowType t, boolean nullable) {
    return new Field(name, new FieldType(nullable, t, null), null);
  }

  private void createTable(String name, boolean primaryKey) {
    Schema schema =
        new Schema(
            List.of(
                field("id", new ArrowType.Int(64, true), false),
                field("ts3", new ArrowType.Timestamp(TimeUnit.MILLISECOND, null), true),
                field("ts0", new ArrowType.Timestamp(TimeUnit.SECOND, null), true),
                field("ltz3", new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC"), true),
                field("bin4", new ArrowType.FixedSizeBinary(4), true),
                field("t3", new ArrowType.Time(TimeUnit.MILLISECOND, 32), true),
                field("t0", new ArrowType.Time(TimeUnit.SECOND, 32), true),
                field("t6", new ArrowType.Time(TimeUnit.MICROSECOND, 64), true)));
    TableDescriptor.Builder d = TableDescriptor.builder(schema);
    if (primaryKey) {
      d.primaryKey("id");
    }
    connection().admin().createTable(db + "." + name, d.build(), false);
  }

  private static final String ROW_1 =
      "(1, TIMESTAMP_NTZ '2026-01-01 12:34:56.789', TIMESTAMP_NTZ '2026-01-01 12:34:56', "
          + "TIMESTAMP '2026-01-01 12:34:56.789', X'CAFEBABE', 45296789, 45296000, 45296789)";
  private static final String ROW_2 = "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)";

  @Test
  void timestamp3BinaryNAndTimeRoundTripExactly() throws Exception {
    for (String name : List.of("typed_log", "typed_pk")) {
      createTable(name, name.endsWith("pk"));
      sql("INSERT INTO " + name + " VALUES " + ROW_1 + ", " + ROW_2);
      // Spark's view: TIMESTAMP(p) as TIMESTAMP_NTZ, LTZ as TIMESTAMP (session zone UTC), BINARY,
      // TIME as INT milliseconds of the day.
      assertEquals(
          list(
              "[1,2026-01-01T12:34:56.789,2026-01-01T12:34:56,2026-01-01 12:34:56.789,"
                  + "[-54, -2, -70, -66],45296789,45296000,45296789]",
              "[2,null,null,null,null,null,null,null]"),
          rows("SELECT * FROM " + name + " ORDER BY id"),
          name);
      // What is stored: the table's own Arrow types with the exact values.
      try (Table t = connection().table(db + "." + name);
          ArrowReader r = t.scan()) {
        int seen = 0;
        while (r.loadNextBatch()) {
          VectorSchemaRoot root = r.getVectorSchemaRoot();
          for (int i = 0; i < root.getRowCount(); i++) {
            long id = ((org.apache.arrow.vector.BigIntVector) root.getVector("id")).get(i);
            if (id != 1) {
              continue;
            }
            seen++;
            assertEquals(TS_MILLIS, ((TimeStampVector) root.getVector("ts3")).get(i));
            assertEquals(1_767_270_896L, ((TimeStampVector) root.getVector("ts0")).get(i));
            assertEquals(TS_MILLIS, ((TimeStampVector) root.getVector("ltz3")).get(i));
            assertEquals(
                Arrays.toString(new byte[] {(byte) 0xCA, (byte) 0xFE, (byte) 0xBA, (byte) 0xBE}),
                Arrays.toString(((FixedSizeBinaryVector) root.getVector("bin4")).get(i)));
            assertEquals(TIME_MILLIS, ((TimeMilliVector) root.getVector("t3")).get(i));
            assertEquals(45_296, ((TimeSecVector) root.getVector("t0")).get(i));
            assertEquals(TIME_MILLIS * 1000L, ((TimeMicroVector) root.getVector("t6")).get(i));
          }
        }
        assertEquals(1, seen, name);
      }
    }
    // An upsert of the key with new values replaces them exactly.
    sql("INSERT INTO typed_pk VALUES (1, TIMESTAMP_NTZ '1969-12-31 23:59:59.999', NULL, NULL, "
        + "X'00000000', 0, 86399000, 86399999)");
    assertEquals(
        list("[1,1969-12-31T23:59:59.999,null,null,[0, 0, 0, 0],0,86399000,86399999]"),
        rows("SELECT * FROM typed_pk WHERE id = 1"));
  }

  /** The messages of an exception and all its causes (Spark wraps task failures). */
  private static String messages(Throwable e) {
    List<String> out = new ArrayList<>();
    for (Throwable t = e; t != null; t = t.getCause()) {
      out.add(String.valueOf(t.getMessage()));
    }
    return String.join(" / ", out);
  }

  @Test
  void valuesTheColumnCannotHoldAreNamed() {
    createTable("typed_bad", false);
    String head = "INSERT INTO typed_bad VALUES (7, ";
    // A microsecond digit TIMESTAMP(3) would drop.
    String m = messages(assertThrows(Exception.class, () -> sql(head
        + "TIMESTAMP_NTZ '2026-01-01 12:34:56.789123', NULL, NULL, NULL, NULL, NULL, NULL)")));
    assertTrue(m.contains("'ts3'") && m.contains("1767270896789123"), m);
    // BINARY(4) with 2 bytes.
    m = messages(assertThrows(Exception.class,
        () -> sql(head + "NULL, NULL, NULL, X'CAFE', NULL, NULL, NULL)")));
    assertTrue(m.contains("'bin4'") && m.contains("BINARY(4)") && m.contains("2 byte"), m);
    // TIME outside the day, and a TIME(0) value with milliseconds.
    m = messages(assertThrows(Exception.class,
        () -> sql(head + "NULL, NULL, NULL, NULL, 86400000, NULL, NULL)")));
    assertTrue(m.contains("'t3'") && m.contains("86400000"), m);
    m = messages(assertThrows(Exception.class,
        () -> sql(head + "NULL, NULL, NULL, NULL, NULL, 1500, NULL)")));
    assertTrue(m.contains("'t0'") && m.contains("1500"), m);
    assertEquals(List.of(), rows("SELECT * FROM typed_bad"));
  }
}
