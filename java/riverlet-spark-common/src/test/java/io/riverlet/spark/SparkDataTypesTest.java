package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** "All Data Types" of Fluss's guide, plus MAP (which Fluss's own connector cannot read). */
class SparkDataTypesTest extends SparkTestBase {

  /**
   * The guide's table without its STRUCT column: TIMESTAMP_LTZ is Spark's TIMESTAMP (the
   * binding's table schema marks LTZ columns), TIMESTAMP is TIMESTAMP_NTZ.
   */
  @Test
  void allTypesOfTheGuideButStruct() {
    sql("CREATE TABLE all_types_no_struct (id INT, flag BOOLEAN, small SHORT, value INT, "
        + "big BIGINT, real FLOAT, amount DOUBLE, name STRING, decimal_val DECIMAL(10, 2), "
        + "date_val DATE, timestamp_ntz_val TIMESTAMP_NTZ, timestamp_ltz_val TIMESTAMP_LTZ, "
        + "arr ARRAY<INT>)");
    sql("INSERT INTO all_types_no_struct VALUES (1, true, 100, 1000, 10000, 12.34, 56.78, "
        + "'string_val', 123.45, DATE '2026-01-01', TIMESTAMP_NTZ '2026-01-01 12:00:00', "
        + "TIMESTAMP '2026-01-01 12:00:00', ARRAY(1, 2, 3)), "
        + "(2, false, 200, 2000, 20000, 23.45, 67.89, 'another_str', 223.45, "
        + "DATE '2026-01-02', TIMESTAMP_NTZ '2026-01-02 12:00:00', TIMESTAMP '2026-01-02 12:00:00', "
        + "ARRAY(4, 5, 6))");
    assertEquals(
        list(
            "[1,true,100,1000,10000,12.34,56.78,string_val,123.45,2026-01-01,"
                + "2026-01-01T12:00,2026-01-01 12:00:00.0,[1, 2, 3]]",
            "[2,false,200,2000,20000,23.45,67.89,another_str,223.45,2026-01-02,"
                + "2026-01-02T12:00,2026-01-02 12:00:00.0,[4, 5, 6]]"),
        rows("SELECT * FROM all_types_no_struct ORDER BY id"));
    StructType schema = sql("SELECT * FROM all_types_no_struct").schema();
    assertEquals(DataTypes.TimestampType, schema.apply("timestamp_ltz_val").dataType());
    assertTrue(schema.apply("timestamp_ntz_val").dataType().sameType(DataTypes.TimestampNTZType));
  }

  /**
   * The guide's statements as written, the top-level STRUCT column included (it failed while
   * Spark's column vectors closed the reader's root: a closed StructVector drops its children).
   */
  @Test
  void allTypesOfTheGuide() {
    sql("CREATE TABLE all_types_table (id INT, flag BOOLEAN, small SHORT, value INT, big BIGINT, "
        + "real FLOAT, amount DOUBLE, name STRING, decimal_val DECIMAL(10, 2), date_val DATE, "
        + "timestamp_ntz_val TIMESTAMP, timestamp_ltz_val TIMESTAMP_LTZ, arr ARRAY<INT>, "
        + "struct_col STRUCT<col1: INT, col2: STRING>)");
    sql("INSERT INTO all_types_table VALUES (1, true, 100, 1000, 10000, 12.34, 56.78, "
        + "'string_val', 123.45, DATE '2026-01-01', TIMESTAMP '2026-01-01 12:00:00', "
        + "TIMESTAMP '2026-01-01 12:00:00', ARRAY(1, 2, 3), STRUCT(100, 'nested_value')), "
        + "(2, false, 200, 2000, 20000, 23.45, 67.89, 'another_str', 223.45, "
        + "DATE '2026-01-02', TIMESTAMP '2026-01-02 12:00:00', TIMESTAMP '2026-01-02 12:00:00', "
        + "ARRAY(4, 5, 6), STRUCT(200, 'nested_value2'))");
    assertEquals(
        list(
            "[1,true,100,1000,10000,12.34,56.78,string_val,123.45,2026-01-01,"
                + "2026-01-01 12:00:00.0,2026-01-01 12:00:00.0,[1, 2, 3],[100,nested_value]]",
            "[2,false,200,2000,20000,23.45,67.89,another_str,223.45,2026-01-02,"
                + "2026-01-02 12:00:00.0,2026-01-02 12:00:00.0,[4, 5, 6],[200,nested_value2]]"),
        rows("SELECT * FROM all_types_table ORDER BY id"));
    // A nested field alone: the core reads the whole struct column, Spark picks the field.
    assertEquals(list("[nested_value]", "[nested_value2]"),
        rows("SELECT struct_col.col2 FROM all_types_table ORDER BY id"));
    StructType schema = sql("SELECT * FROM all_types_table").schema();
    assertEquals(DataTypes.ShortType, schema.apply("small").dataType());
    assertEquals(DataTypes.FloatType, schema.apply("real").dataType());
    assertEquals(DataTypes.createDecimalType(10, 2), schema.apply("decimal_val").dataType());
    assertEquals(DataTypes.TimestampType, schema.apply("timestamp_ltz_val").dataType());
  }

  @Test
  void scalarAndArrayTypesOfTheGuide() {
    sql("CREATE TABLE all_scalar_types (id INT, flag BOOLEAN, small SHORT, value INT, "
        + "big BIGINT, real FLOAT, amount DOUBLE, name STRING, decimal_val DECIMAL(10, 2), "
        + "date_val DATE, arr ARRAY<INT>)");
    sql("INSERT INTO all_scalar_types VALUES (1, true, 100, 1000, 10000, 12.34, 56.78, "
        + "'string_val', 123.45, DATE '2026-01-01', ARRAY(1, 2, 3)), "
        + "(2, false, 200, 2000, 20000, 23.45, 67.89, 'another_str', 223.45, "
        + "DATE '2026-01-02', ARRAY(4, 5, 6))");
    assertEquals(
        list(
            "[1,true,100,1000,10000,12.34,56.78,string_val,123.45,2026-01-01,[1, 2, 3]]",
            "[2,false,200,2000,20000,23.45,67.89,another_str,223.45,2026-01-02,[4, 5, 6]]"),
        rows("SELECT * FROM all_scalar_types ORDER BY id"));
    StructType schema = sql("SELECT * FROM all_scalar_types").schema();
    assertEquals(DataTypes.ShortType, schema.apply("small").dataType());
    assertEquals(DataTypes.FloatType, schema.apply("real").dataType());
    assertEquals(DataTypes.createDecimalType(10, 2), schema.apply("decimal_val").dataType());
    assertEquals(list("[2]"), rows("SELECT id FROM all_scalar_types WHERE real > 20.0"));
  }

  @Test
  void mapNestedAndTimestampNtz() {
    sql("CREATE TABLE nested_types (id INT, m MAP<STRING, INT>, "
        + "deep ARRAY<STRUCT<k: STRING, v: ARRAY<BIGINT>>>, ntz TIMESTAMP_NTZ, bin BINARY, "
        + "tiny TINYINT)");
    sql("INSERT INTO nested_types VALUES (1, MAP('a', 1, 'b', 2), "
        + "ARRAY(STRUCT('x', ARRAY(1L, 2L)), STRUCT('y', ARRAY(3L))), "
        + "TIMESTAMP_NTZ '2026-01-01 12:00:00.123456', X'CAFE', 7), "
        + "(2, MAP(), ARRAY(), NULL, NULL, NULL), (3, NULL, NULL, NULL, NULL, -1)");
    assertEquals(
        list(
            "[1,{a=1, b=2},[[x,[1, 2]], [y,[3]]],2026-01-01T12:00:00.123456,[-54, -2],7]",
            "[2,{},[],null,null,null]",
            "[3,null,null,null,null,-1]"),
        rows("SELECT * FROM nested_types ORDER BY id"));
    assertEquals(list("[2]"), rows("SELECT m['b'] FROM nested_types WHERE id = 1"));
    assertTrue(sql("SELECT ntz FROM nested_types").schema().apply("ntz").dataType()
        .sameType(DataTypes.TimestampNTZType));
  }
}
