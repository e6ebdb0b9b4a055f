package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lake part of the Ververica quickstart (fluss-quickstart-ververica.txt) through the Spark
 * catalog, against the embedded server tiering to Iceberg: {@code `trades$lake`} (buy and sell
 * volume in the lake), {@code `trades$lake$snapshots`} (one row per commit) and the union read
 * of {@code trades} (per-symbol totals over every trade). Trades are written in three rounds
 * with a lake commit after the first two, so the lake holds rounds 1 and 2 and the union read
 * all three; every expected total is computed from the rows written.
 */
class SparkLakeTest extends SparkTestBase {
  private static final String[] SYMBOLS = {"AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA"};
  /** Trade ids of the rounds: 1..20 (committed), 21..33 (committed), 34..40 (log only). */
  private static final int[] ROUND_ENDS = {20, 33, 40};
  private static final int LAKE_END = ROUND_ENDS[1];
  private static final int ALL_END = ROUND_ENDS[2];

  @BeforeAll
  void writeTrades() {
    Assumptions.assumeTrue(EXTERNAL_BOOTSTRAP == null,
        "lake commits at known points need the embedded server");
    sql("CREATE TABLE trades (trade_id BIGINT, account_id INT, notional DECIMAL(15, 2), "
        + "trade_date DATE, side STRING, symbol STRING) TBLPROPERTIES ('bucket.num' = '3', "
        + "'table.datalake.enabled' = 'true', 'table.datalake.freshness' = '1h')");
    int first = 1;
    for (int round = 0; round < ROUND_ENDS.length; round++) {
      StringBuilder values = new StringBuilder();
      for (int id = first; id <= ROUND_ENDS[round]; id++) {
        values.append(id == first ? "" : ", ").append("(").append(id).append(", ")
            .append(id % 22 + 1).append(", CAST(").append(notional(id).toPlainString())
            .append(" AS DECIMAL(15, 2)), DATE '2026-01-0").append(1 + id % 5).append("', '")
            .append(side(id)).append("', '").append(symbol(id)).append("')");
      }
      sql("INSERT INTO trades VALUES " + values);
      if (round < 2) {
        assertTrue(commitLake("SparkLakeTest"));
      }
      first = ROUND_ENDS[round] + 1;
    }
  }

  private static BigDecimal notional(int id) {
    return BigDecimal.valueOf(id * 1237L % 100_000, 2);
  }

  private static String side(int id) {
    return id % 3 == 0 ? "SELL" : "BUY";
  }

  private static String symbol(int id) {
    return SYMBOLS[id % SYMBOLS.length];
  }

  /** {@code [key,count,sum]} rows of the trades 1..{@code last} grouped by {@code key}, sorted. */
  private static List<String> totals(int last, IntFunction<String> key) {
    Map<String, long[]> counts = new TreeMap<>();
    Map<String, BigDecimal> sums = new TreeMap<>();
    for (int id = 1; id <= last; id++) {
      String k = key.apply(id);
      counts.computeIfAbsent(k, x -> new long[1])[0]++;
      sums.merge(k, notional(id), BigDecimal::add);
    }
    List<String> out = new ArrayList<>();
    for (String k : counts.keySet()) {
      out.add("[" + k + "," + counts.get(k)[0] + "," + sums.get(k).toPlainString() + "]");
    }
    return out;
  }

  @Test
  void lakeOnlyReadOfTheTrades() {
    assertEquals(totals(LAKE_END, SparkLakeTest::side),
        rows("SELECT side, COUNT(*), SUM(notional) FROM " + CATALOG + "." + db
            + ".`trades$lake` GROUP BY side ORDER BY side"));
    // The lake view is read whole, in one input partition.
    assertEquals(1, sql("SELECT * FROM `trades$lake`").rdd().getNumPartitions());
    List<String> ids = rows("SELECT trade_id FROM `trades$lake` ORDER BY trade_id");
    List<String> expected = new ArrayList<>();
    for (int id = 1; id <= LAKE_END; id++) {
      expected.add("[" + id + "]");
    }
    assertEquals(expected, ids);
    // Each lake row keeps the bucket and offset it had in Fluss.
    assertEquals(List.of("[" + LAKE_END + "," + LAKE_END + "]"),
        rows("SELECT COUNT(*), COUNT(DISTINCT __bucket, __offset) FROM `trades$lake` "
            + "WHERE __timestamp IS NOT NULL AND __bucket BETWEEN 0 AND 2"));
  }

  @Test
  void lakeTimestampsAreInstants() {
    // Fluss's TIMESTAMP_LTZ(3) columns come out as Spark's TIMESTAMP (an instant), not
    // TIMESTAMP_NTZ, as TIMESTAMP_LTZ columns of a table do.
    StructType lake = sql("SELECT * FROM `trades$lake`").schema();
    assertEquals(DataTypes.IntegerType, lake.apply("__bucket").dataType());
    assertEquals(DataTypes.LongType, lake.apply("__offset").dataType());
    assertEquals(DataTypes.TimestampType, lake.apply("__timestamp").dataType());
    StructType snaps = sql("SELECT * FROM `trades$lake$snapshots`").schema();
    assertEquals(DataTypes.TimestampType, snaps.apply("committed_at").dataType());
    assertEquals(List.of("[" + LAKE_END + "]"), rows("SELECT COUNT(*) FROM `trades$lake` "
        + "WHERE __timestamp > TIMESTAMP '2020-01-01 00:00:00 UTC'"));
  }

  @Test
  void lakeSnapshotsOfTheTrades() {
    List<Row> snaps = sql("SELECT committed_at, snapshot_id, parent_id, operation FROM "
        + CATALOG + "." + db + ".`trades$lake$snapshots`").collectAsList();
    // One row per commit: two commits, the second's parent the first.
    assertEquals(2, snaps.size(), snaps.toString());
    List<Row> sorted = new ArrayList<>(snaps);
    sorted.sort((a, b) -> Boolean.compare(!a.isNullAt(2), !b.isNullAt(2)));
    Row first = sorted.get(0);
    Row second = sorted.get(1);
    assertNull(first.get(2), snaps.toString());
    assertTrue(first.get(0) != null && second.get(0) != null, snaps.toString());
    assertEquals(first.get(1), second.get(2), snaps.toString());
    assertNotEquals(first.get(1), second.get(1), snaps.toString());
    for (Row r : snaps) {
      assertEquals("append", r.getString(3), snaps.toString());
    }
  }

  @Test
  void unionReadOfTheTrades() {
    assertEquals(totals(ALL_END, SparkLakeTest::symbol),
        rows("SELECT symbol, COUNT(*), SUM(notional) FROM " + CATALOG + "." + db
            + ".trades GROUP BY symbol ORDER BY symbol"));
    assertEquals(totals(LAKE_END, SparkLakeTest::symbol),
        rows("SELECT symbol, COUNT(*), SUM(notional) FROM `trades$lake` GROUP BY symbol "
            + "ORDER BY symbol"));
    // The rows written after the last commit are in the union read, not in the lake.
    assertEquals(List.of(), rows("SELECT trade_id FROM `trades$lake` WHERE trade_id > "
        + LAKE_END));
    assertEquals(ALL_END - LAKE_END,
        rows("SELECT trade_id FROM trades WHERE trade_id > " + LAKE_END).size());
    // COUNT(*) pushed down to the core counts the union too.
    assertEquals(List.of("[" + ALL_END + "]"), rows("SELECT COUNT(*) FROM trades"));
  }

  @Test
  void lakeViewsAreReadOnlyAndNeedALakeEnabledTable() {
    Exception write = assertThrows(Exception.class,
        () -> sql("INSERT INTO `trades$lake` SELECT * FROM `trades$lake`").collectAsList());
    assertTrue(String.valueOf(write.getMessage()).contains("trades$lake"), write.toString());
    sql("CREATE TABLE plain (id BIGINT)");
    Exception read = assertThrows(Exception.class,
        () -> sql("SELECT * FROM `plain$lake`").collectAsList());
    assertTrue(String.valueOf(read.getMessage()).contains("plain$lake"), read.toString());
  }
}
