package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/** INSERT INTO (append / upsert), INSERT OVERWRITE rejected, DataFrame writeTo().append(). */
class SparkWritesTest extends SparkTestBase {

  @Test
  void insertOverwriteIsRejected() {
    sql("CREATE TABLE ow_log (a INT, b STRING)");
    sql("INSERT INTO ow_log VALUES (1, 'x')");
    Exception e = assertThrows(Exception.class,
        () -> sql("INSERT OVERWRITE ow_log VALUES (2, 'y')"));
    assertTrue(e.getMessage().contains("INSERT OVERWRITE is not supported")
        && e.getMessage().contains("INSERT INTO"), e.getMessage());
    assertEquals(List.of("[1,x]"), rows("SELECT * FROM ow_log"));
  }

  @Test
  void dataFrameAppendToLogAndPrimaryKeyTables() throws Exception {
    sql("CREATE TABLE df_log (id BIGINT, name STRING)");
    sql("CREATE TABLE df_pk (id BIGINT, name STRING) TBLPROPERTIES ('primary.key' = 'id')");
    Dataset<Row> df = sql("SELECT id, CONCAT('n', CAST(id AS STRING)) AS name FROM range(0, 10000)");
    df.writeTo("fluss_catalog." + db + ".df_log").append();
    df.writeTo("fluss_catalog." + db + ".df_log").append();
    assertEquals(List.of("[20000,10000,49995000]"),
        rows("SELECT COUNT(*), COUNT(DISTINCT id), CAST(SUM(id) / 2 AS BIGINT) FROM df_log"));
    df.writeTo("fluss_catalog." + db + ".df_pk").append();
    sql("SELECT id, 'changed' AS name FROM range(0, 10000, 1000)")
        .writeTo("fluss_catalog." + db + ".df_pk").append();
    assertEquals(List.of("[10000,10]"),
        rows("SELECT COUNT(*), COUNT_IF(name = 'changed') FROM df_pk"));
    assertEquals(List.of("[3000,changed]", "[3001,n3001]"),
        rows("SELECT * FROM df_pk WHERE id IN (3000, 3001) ORDER BY id"));
  }

  @Test
  void writingANullPrimaryKeyFailsClearly() {
    sql("CREATE TABLE null_pk (id BIGINT, v STRING) TBLPROPERTIES ('primary.key' = 'id')");
    Exception e = assertThrows(Exception.class,
        () -> sql("INSERT INTO null_pk VALUES (CAST(NULL AS BIGINT), 'x')"));
    assertTrue(e.toString().contains("id"), e.toString());
  }

  @Test
  void alterTableAddColumnsKeepsOldRowsWithNulls() {
    sql("CREATE TABLE evolve_pk (id BIGINT, name STRING) TBLPROPERTIES ('primary.key' = 'id')");
    sql("INSERT INTO evolve_pk VALUES (1, 'a'), (2, 'b')");
    sql("CREATE TABLE evolve_log (id BIGINT, name STRING)");
    sql("INSERT INTO evolve_log VALUES (1, 'a')");
    sql("ALTER TABLE evolve_pk ADD COLUMNS (note STRING)");
    sql("ALTER TABLE evolve_log ADD COLUMNS (note STRING, n INT)");
    sql("INSERT INTO evolve_pk VALUES (2, 'B', 'x'), (3, 'c', 'y')");
    sql("INSERT INTO evolve_log VALUES (2, 'b', 'x', 7)");
    assertEquals(List.of("[1,a,null]", "[2,B,x]", "[3,c,y]"),
        rows("SELECT * FROM evolve_pk ORDER BY id"));
    assertEquals(List.of("[1,a,null,null]", "[2,b,x,7]"),
        rows("SELECT * FROM evolve_log ORDER BY id"));
    assertEquals(List.of("[1]"), rows("SELECT id FROM evolve_pk WHERE note IS NULL"));
    Exception e = assertThrows(Exception.class,
        () -> sql("ALTER TABLE evolve_pk DROP COLUMN note"));
    assertTrue(e.getMessage().contains("only ADD COLUMNS"), e.getMessage());
  }
}
