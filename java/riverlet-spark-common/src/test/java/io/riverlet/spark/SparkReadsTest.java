package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every statement of Fluss's "Spark Reads" guide (batch reads of log, partitioned, primary-key
 * and partitioned primary-key tables), run as written, with the rows the guide's data implies.
 */
class SparkReadsTest extends SparkTestBase {

  @BeforeAll
  void createTables() {
    sql("CREATE TABLE log_table (order_id BIGINT, item_id BIGINT, amount INT, address STRING)");
    sql("INSERT INTO log_table VALUES (600, 21, 601, 'addr1'), (700, 22, 602, 'addr2'), "
        + "(800, 23, 603, 'addr3'), (900, 24, 604, 'addr4'), (1000, 25, 605, 'addr5')");
    sql("CREATE TABLE part_log_table (order_id BIGINT, item_id BIGINT, amount INT, "
        + "address STRING, dt STRING) PARTITIONED BY (dt)");
    sql("INSERT INTO part_log_table VALUES (600, 21, 601, 'addr1', '2026-01-01'), "
        + "(700, 22, 602, 'addr2', '2026-01-01'), (800, 23, 603, 'addr3', '2026-01-02'), "
        + "(900, 24, 604, 'addr4', '2026-01-02'), (1000, 25, 605, 'addr5', '2026-01-03')");
    sql("CREATE TABLE pk_table (order_id BIGINT, item_id BIGINT, amount INT, address STRING) "
        + "TBLPROPERTIES ('primary.key' = 'order_id', 'bucket.num' = '1')");
    sql("INSERT INTO pk_table VALUES (600, 21, 601, 'addr1'), (700, 22, 602, 'addr2'), "
        + "(800, 23, 603, 'addr3'), (900, 24, 604, 'addr4'), (1000, 25, 605, 'addr5')");
    sql("CREATE TABLE part_pk_table (order_id BIGINT, item_id BIGINT, amount INT, "
        + "address STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ("
        + "'primary.key' = 'order_id,dt', 'bucket.num' = '1')");
    sql("INSERT INTO part_pk_table VALUES (600, 21, 601, 'addr1', '2026-01-01'), "
        + "(700, 22, 602, 'addr2', '2026-01-01'), (800, 23, 603, 'addr3', '2026-01-02'), "
        + "(900, 24, 604, 'addr4', '2026-01-02'), (1000, 25, 605, 'addr5', '2026-01-03')");
  }

  @Test
  void logTableSelectAll() {
    assertEquals(
        list("[600,21,601,addr1]", "[700,22,602,addr2]", "[800,23,603,addr3]",
            "[900,24,604,addr4]", "[1000,25,605,addr5]"),
        rows("SELECT * FROM log_table ORDER BY order_id"));
  }

  @Test
  void oneInputPartitionPerBucketOfEachPartition() {
    sql("CREATE TABLE bucketed (id INT, dt STRING) PARTITIONED BY (dt) "
        + "TBLPROPERTIES ('bucket.num' = '3')");
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < 60; i++) {
      values.append(i == 0 ? "" : ", ").append("(").append(i).append(", '")
          .append(i % 2 == 0 ? "2026-01-01" : "2026-01-02").append("')");
    }
    sql("INSERT INTO bucketed VALUES " + values);
    // 2 partitions x 3 buckets; each input partition reads only its bucket: every row once.
    assertEquals(6, sql("SELECT * FROM bucketed").rdd().getNumPartitions());
    assertEquals(3,
        sql("SELECT * FROM bucketed WHERE dt = '2026-01-02'").rdd().getNumPartitions());
    java.util.List<String> expected = new java.util.ArrayList<>();
    for (int i = 0; i < 60; i++) {
      expected.add("[" + i + "]");
    }
    assertEquals(expected, rows("SELECT id FROM bucketed ORDER BY id"));
  }

  @Test
  void logTableProjection() {
    String q = "SELECT address, item_id FROM log_table ORDER BY order_id";
    assertEquals(
        list("[addr1,21]", "[addr2,22]", "[addr3,23]", "[addr4,24]", "[addr5,25]"), rows(q));
    String plan = explain(q);
    assertTrue(
        plan.contains("ReadSchema: struct<order_id:bigint,item_id:bigint,address:string>"), plan);
    assertFalse(plan.contains("amount"), "amount is not read: " + plan);
  }

  @Test
  void logTableFilterSparkEvaluates() {
    String q = "SELECT * FROM log_table WHERE amount % 2 = 0 ORDER BY order_id";
    assertEquals(list("[700,22,602,addr2]", "[900,24,604,addr4]"), rows(q));
    // Arithmetic is not something the core evaluates: Spark keeps the filter above the scan
    // (only the IS NOT NULL it infers is pushed).
    String plan = explain(q);
    assertTrue(plan.contains("Filter ((amount#"), plan);
    assertTrue(plan.contains("CoreFilter: `amount` IS NOT NULL]"), plan);
  }

  @Test
  void logTableProjectionAndFilter() {
    String q = "SELECT order_id, item_id FROM log_table WHERE order_id >= 900 ORDER BY order_id";
    assertEquals(list("[900,24]", "[1000,25]"), rows(q));
    String plan = explain(q);
    assertTrue(plan.contains("PushedFilters: [order_id IS NOT NULL, order_id >= 900]"), plan);
    assertTrue(plan.contains("CoreFilter: (`order_id` IS NOT NULL) AND (`order_id` >= 900)"),
        plan);
  }

  @Test
  void partitionedLogTableEquality() {
    String q = "SELECT * FROM part_log_table WHERE dt = '2026-01-01' ORDER BY order_id";
    assertEquals(list("[600,21,601,addr1,2026-01-01]", "[700,22,602,addr2,2026-01-01]"), rows(q));
    assertTrue(explain(q).contains("PartitionFilters: {dt=[2026-01-01]}"), explain(q));
  }

  @Test
  void partitionedLogTableIn() {
    String q = "SELECT order_id, address, dt FROM part_log_table "
        + "WHERE dt IN ('2026-01-01', '2026-01-02') ORDER BY order_id";
    assertEquals(
        list("[600,addr1,2026-01-01]", "[700,addr2,2026-01-01]", "[800,addr3,2026-01-02]",
            "[900,addr4,2026-01-02]"),
        rows(q));
    assertTrue(explain(q).contains("PartitionFilters: {dt=[2026-01-01, 2026-01-02]}"), explain(q));
  }

  @Test
  void primaryKeyTableBeforeAndAfterUpsert() {
    sql("CREATE TABLE pk_upsert (order_id BIGINT, item_id BIGINT, amount INT, address STRING) "
        + "TBLPROPERTIES ('primary.key' = 'order_id', 'bucket.num' = '1')");
    sql("INSERT INTO pk_upsert VALUES (600, 21, 601, 'addr1'), (700, 22, 602, 'addr2'), "
        + "(800, 23, 603, 'addr3'), (900, 24, 604, 'addr4'), (1000, 25, 605, 'addr5')");
    assertEquals(
        list("[600,21,601,addr1]", "[700,22,602,addr2]", "[800,23,603,addr3]",
            "[900,24,604,addr4]", "[1000,25,605,addr5]"),
        rows("SELECT * FROM pk_upsert ORDER BY order_id"));
    sql("INSERT INTO pk_upsert VALUES (700, 220, 602, 'addr2'), (900, 240, 604, 'addr4'), "
        + "(1100, 260, 606, 'addr6')");
    assertEquals(
        list("[600,21,addr1]", "[700,220,addr2]", "[800,23,addr3]"),
        rows("SELECT order_id, item_id, address FROM pk_upsert WHERE amount <= 603 "
            + "ORDER BY order_id"));
    assertEquals(
        list("[600,21,601,addr1]", "[700,220,602,addr2]", "[800,23,603,addr3]",
            "[900,240,604,addr4]", "[1000,25,605,addr5]", "[1100,260,606,addr6]"),
        rows("SELECT * FROM pk_upsert ORDER BY order_id"));
  }

  @Test
  void readOptimizedReadsTheKvSnapshotWithoutTheLogTail() {
    sql("CREATE TABLE pk_ro (order_id BIGINT, item_id BIGINT, amount INT, address STRING) "
        + "TBLPROPERTIES ('primary.key' = 'order_id', 'bucket.num' = '2')");
    sql("INSERT INTO pk_ro VALUES (600, 21, 601, 'addr1'), (700, 22, 602, 'addr2'), "
        + "(800, 23, 603, 'addr3')");
    if (!takeKvSnapshots("SparkReadsTest.readOptimizedReadsTheKvSnapshotWithoutTheLogTail")) {
      return;
    }
    sql("INSERT INTO pk_ro VALUES (700, 220, 602, 'addr2'), (900, 24, 604, 'addr4')");
    try {
      sql("SET spark.sql.fluss.read.optimized=true");
      // The snapshot's state: the upsert after it is not merged.
      assertEquals(
          list("[600,21,601,addr1]", "[700,22,602,addr2]", "[800,23,603,addr3]"),
          rows("SELECT * FROM pk_ro ORDER BY order_id"));
      assertEquals(
          list("[600,21]", "[700,22]"),
          rows("SELECT order_id, item_id FROM pk_ro WHERE amount <= 602 ORDER BY order_id"));
      sql("SET spark.sql.fluss.read.optimized=false");
      assertEquals(
          list("[600,21,601,addr1]", "[700,220,602,addr2]", "[800,23,603,addr3]",
              "[900,24,604,addr4]"),
          rows("SELECT * FROM pk_ro ORDER BY order_id"));
      // The DataFrame option overrides the session for one read.
      assertEquals(
          list("[600,21,601,addr1]", "[700,22,602,addr2]", "[800,23,603,addr3]"),
          rows(spark().read().option("read.optimized", "true").table("pk_ro")
              .orderBy("order_id")));
    } finally {
      spark().conf().unset("spark.sql.fluss.read.optimized");
    }
  }

  @Test
  void primaryKeyTableSelectAll() {
    assertEquals(
        list("[600,21,601,addr1]", "[700,22,602,addr2]", "[800,23,603,addr3]",
            "[900,24,604,addr4]", "[1000,25,605,addr5]"),
        rows("SELECT * FROM pk_table ORDER BY order_id"));
  }

  @Test
  void partitionedPrimaryKeyTable() {
    assertEquals(
        list("[600,21,601,addr1,2026-01-01]", "[700,22,602,addr2,2026-01-01]"),
        rows("SELECT * FROM part_pk_table WHERE dt = '2026-01-01' ORDER BY order_id"));
    assertEquals(
        list("[600,21,601,addr1,2026-01-01]", "[700,22,602,addr2,2026-01-01]",
            "[800,23,603,addr3,2026-01-02]", "[900,24,604,addr4,2026-01-02]"),
        rows("SELECT * FROM part_pk_table WHERE dt IN ('2026-01-01', '2026-01-02') "
            + "ORDER BY order_id"));
  }

  @Test
  void limitIsPushed() {
    String q = "SELECT * FROM log_table LIMIT 2";
    assertEquals(2, rows(q).size());
    assertTrue(explain(q).contains("PushedLimit: 2"), explain(q));
  }

  @Test
  void countStarIsPushed() {
    String q = "SELECT COUNT(*) FROM log_table";
    assertEquals(list("[5]"), rows(q));
    assertTrue(explain(q).contains("PushedAggregation: [COUNT(*)]"), explain(q));
    assertEquals(list("[2]"), rows("SELECT COUNT(*) FROM part_log_table WHERE dt = '2026-01-02'"));
    assertEquals(list("[5]"), rows("SELECT COUNT(*) FROM pk_table"));
    // No partition selected: still one row, 0 (not NULL).
    assertEquals(list("[0]"), rows("SELECT COUNT(*) FROM part_log_table WHERE dt = '2030-01-01'"));
  }

  @Test
  void filtersOfEveryPushableShape() {
    assertEquals(list("[600]", "[1000]"),
        rows("SELECT order_id FROM log_table WHERE order_id < 700 OR order_id > 900 "
            + "ORDER BY order_id"));
    assertEquals(list("[800]"),
        rows("SELECT order_id FROM log_table WHERE address LIKE 'addr3%' ORDER BY order_id"));
    assertEquals(list("[700]", "[900]"),
        rows("SELECT order_id FROM log_table WHERE amount IN (602, 604) ORDER BY order_id"));
    assertEquals(list("[600]", "[800]", "[1000]"),
        rows("SELECT order_id FROM log_table WHERE NOT (amount IN (602, 604)) "
            + "ORDER BY order_id"));
    assertEquals(list(),
        rows("SELECT order_id FROM log_table WHERE address IS NULL"));
    assertEquals(list("[addr5]"),
        rows("SELECT address FROM log_table WHERE address <> 'addr1' AND item_id = 25"));
    String plan = explain("SELECT order_id FROM log_table WHERE address LIKE 'addr3%'");
    assertTrue(plan.contains("`address` LIKE 'addr3%'"), plan);
  }
}
