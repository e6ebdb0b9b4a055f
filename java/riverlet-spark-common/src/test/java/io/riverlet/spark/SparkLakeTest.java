package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.riverlet.Connection;
import io.riverlet.Table;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lake part of the Ververica quickstart (fluss-quickstart-ververica.txt) through the Spark
 * catalog, against embedded servers tiering to Iceberg ({@link #CATALOG}) and to Paimon
 * ({@link #PAIMON_CATALOG}, a second server in the same session): {@code `trades$lake`} (buy and
 * sell volume in the lake), {@code `trades$lake$snapshots`} (one row per commit) and the union
 * read of {@code trades} (per-symbol totals over every trade). Trades are written in three rounds
 * with a lake commit after the first two, so the lake holds rounds 1 and 2 and the union read
 * all three; every expected total is computed from the rows written. Over Paimon also a
 * primary-key table: the union read is the lake's merged state with the later changes of the
 * log winning by key, deletes included.
 */
class SparkLakeTest extends SparkTestBase {
  private static final String[] SYMBOLS = {"AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA"};
  /** Trade ids of the rounds: 1..20 (committed), 21..33 (committed), 34..40 (log only). */
  private static final int[] ROUND_ENDS = {20, 33, 40};
  private static final int LAKE_END = ROUND_ENDS[1];
  private static final int ALL_END = ROUND_ENDS[2];

  /** The lake formats the parametrized tests run over (each has its catalog, lakeCatalog). */
  private static final String[] FORMATS = {"iceberg", "paimon"};

  /**
   * Writes the trades of each format's catalog in three rounds with a lake commit after the
   * first two. A lake commit covers every lake-enabled table of its server, so the Paimon
   * catalog's primary-key table {@code accounts} is written here too, around the second commit:
   * its first changes before it, the later ones after the last.
   */
  @BeforeAll
  void writeTrades() {
    Assumptions.assumeTrue(EXTERNAL_BOOTSTRAP == null,
        "lake commits at known points need the embedded server");
    for (String format : FORMATS) {
      String catalog = lakeCatalog(format);
      sql("CREATE DATABASE IF NOT EXISTS " + catalog + "." + db);
      sql("CREATE TABLE " + t(format, "trades") + " (trade_id BIGINT, account_id INT, "
          + "notional DECIMAL(15, 2), trade_date DATE, side STRING, symbol STRING) "
          + "TBLPROPERTIES ('bucket.num' = '3', 'table.datalake.enabled' = 'true', "
          + "'table.datalake.freshness' = '1h')");
      boolean paimon = "paimon".equals(format);
      int first = 1;
      for (int round = 0; round < ROUND_ENDS.length; round++) {
        StringBuilder values = new StringBuilder();
        for (int id = first; id <= ROUND_ENDS[round]; id++) {
          values.append(id == first ? "" : ", ").append("(").append(id).append(", ")
              .append(id % 22 + 1).append(", CAST(").append(notional(id).toPlainString())
              .append(" AS DECIMAL(15, 2)), DATE '2026-01-0").append(1 + id % 5).append("', '")
              .append(side(id)).append("', '").append(symbol(id)).append("')");
        }
        sql("INSERT INTO " + t(format, "trades") + " VALUES " + values);
        if (paimon && round == 1) {
          writeAccountsBeforeTheCommit();
        }
        if (round < 2) {
          assertTrue(commitLake("SparkLakeTest", catalog));
        }
        first = ROUND_ENDS[round] + 1;
      }
      if (paimon) {
        writeAccountsAfterTheCommit();
      }
    }
  }

  /** The rows of {@code accounts} in its one lake commit (its merged state there). */
  private static final List<String> ACCOUNTS_AT_COMMIT =
      List.of("[1,a1,10]", "[2,b2,21]", "[4,a4,40]");
  /** The rows of {@code accounts} after the later changes (the log wins by key). */
  private static final List<String> ACCOUNTS_LATEST =
      List.of("[1,c1,11]", "[2,b2,21]", "[3,c3,31]", "[5,c5,50]");

  /** Inserts, updates and deletes in {@code accounts} before its lake commit. */
  private void writeAccountsBeforeTheCommit() {
    String accounts = t("paimon", "accounts");
    sql("CREATE TABLE " + accounts + " (id BIGINT, name STRING, balance INT) TBLPROPERTIES ("
        + "'primary.key' = 'id', 'bucket.num' = '2', 'table.datalake.enabled' = 'true', "
        + "'table.datalake.freshness' = '1h')");
    sql("INSERT INTO " + accounts + " VALUES (1, 'a1', 10), (2, 'a2', 20), (3, 'a3', 30), "
        + "(4, 'a4', 40)");
    sql("INSERT INTO " + accounts + " VALUES (2, 'b2', 21)");
    deleteKeys(lakeCatalog("paimon"), "accounts", 3L);
  }

  /**
   * The rows of {@code accounts} in the KV snapshot taken between the later changes (after the
   * upserts, before the delete): what a read-optimized read returns.
   */
  private static final List<String> ACCOUNTS_IN_KV_SNAPSHOT =
      List.of("[1,c1,11]", "[2,b2,21]", "[3,c3,31]", "[4,a4,40]", "[5,c5,50]");

  /**
   * Changes after the last commit, only in the log: a key updated, added, re-added, deleted; a
   * KV snapshot is taken before the delete.
   */
  private void writeAccountsAfterTheCommit() {
    sql("INSERT INTO " + t("paimon", "accounts")
        + " VALUES (1, 'c1', 11), (5, 'c5', 50), (3, 'c3', 31)");
    takeKvSnapshots("SparkLakeTest", PAIMON_CATALOG);
    deleteKeys(lakeCatalog("paimon"), "accounts", 4L);
  }

  /** The qualified name of table (or view) {@code name} in the catalog of {@code format}. */
  private String t(String format, String name) {
    return lakeCatalog(format) + "." + db + ".`" + name + "`";
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

  @ParameterizedTest
  @ValueSource(strings = {"iceberg", "paimon"})
  void lakeOnlyReadOfTheTrades(String format) {
    String lake = t(format, "trades$lake");
    assertEquals(totals(LAKE_END, SparkLakeTest::side),
        rows("SELECT side, COUNT(*), SUM(notional) FROM " + lake + " GROUP BY side ORDER BY side"));
    // The lake view is read whole, in one input partition.
    assertEquals(1, sql("SELECT * FROM " + lake).rdd().getNumPartitions());
    List<String> ids = rows("SELECT trade_id FROM " + lake + " ORDER BY trade_id");
    List<String> expected = new ArrayList<>();
    for (int id = 1; id <= LAKE_END; id++) {
      expected.add("[" + id + "]");
    }
    assertEquals(expected, ids);
    // Each lake row keeps the bucket and offset it had in Fluss.
    assertEquals(List.of("[" + LAKE_END + "," + LAKE_END + "]"),
        rows("SELECT COUNT(*), COUNT(DISTINCT __bucket, __offset) FROM " + lake
            + " WHERE __timestamp IS NOT NULL AND __bucket BETWEEN 0 AND 2"));
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

  @ParameterizedTest
  @ValueSource(strings = {"iceberg", "paimon"})
  void unionReadOfTheTrades(String format) {
    String trades = t(format, "trades");
    String lake = t(format, "trades$lake");
    assertEquals(totals(ALL_END, SparkLakeTest::symbol),
        rows("SELECT symbol, COUNT(*), SUM(notional) FROM " + trades
            + " GROUP BY symbol ORDER BY symbol"));
    assertEquals(totals(LAKE_END, SparkLakeTest::symbol),
        rows("SELECT symbol, COUNT(*), SUM(notional) FROM " + lake + " GROUP BY symbol "
            + "ORDER BY symbol"));
    // The rows written after the last commit are in the union read, not in the lake.
    assertEquals(List.of(), rows("SELECT trade_id FROM " + lake + " WHERE trade_id > "
        + LAKE_END));
    assertEquals(ALL_END - LAKE_END,
        rows("SELECT trade_id FROM " + trades + " WHERE trade_id > " + LAKE_END).size());
    // COUNT(*) pushed down to the core counts the union too.
    assertEquals(List.of("[" + ALL_END + "]"), rows("SELECT COUNT(*) FROM " + trades));
  }

  @Test
  void paimonLakeSnapshotsOfTheTrades() {
    // Paimon's own snapshots table: Paimon numbers a table's snapshots from 1, one per commit;
    // each tiering round appends the rows written since the previous one.
    assertEquals(List.of("[1,APPEND,20,20]", "[2,APPEND," + (LAKE_END - ROUND_ENDS[0]) + ","
            + LAKE_END + "]"),
        rows("SELECT snapshot_id, commit_kind, delta_record_count, total_record_count FROM "
            + t("paimon", "trades$lake$snapshots") + " ORDER BY snapshot_id"));
    // Paimon's commit_time is a TIMESTAMP(3) without time zone, as in Paimon.
    StructType snaps = sql("SELECT * FROM " + t("paimon", "trades$lake$snapshots")).schema();
    assertEquals(DataTypes.TimestampNTZType, snaps.apply("commit_time").dataType());
  }

  /** The columns the primary-key test reads, in the order of its expected rows. */
  private static final String PK_COLUMNS = "id, name, balance";

  @Test
  void paimonPrimaryKeyUnionReadLetsTheLogWinByKey() throws IOException {
    String accounts = t("paimon", "accounts");
    String lake = t("paimon", "accounts$lake");
    // $lake: the lake's merged state at the commit, one row per key (update and delete applied).
    assertEquals(ACCOUNTS_AT_COMMIT,
        rows("SELECT " + PK_COLUMNS + " FROM " + lake + " ORDER BY id"));
    assertEquals(list("[1]"),
        rows("SELECT COUNT(*) FROM " + t("paimon", "accounts$lake$snapshots")));
    // The union read: the changes after the commit win by key, a delete removes its key.
    assertEquals(ACCOUNTS_LATEST,
        rows("SELECT " + PK_COLUMNS + " FROM " + accounts + " ORDER BY id"));
    assertEquals(list("[" + ACCOUNTS_LATEST.size() + "]"),
        rows("SELECT COUNT(*) FROM " + accounts));
    // Read-optimized: each bucket's latest KV snapshot, without the log after it (the delete
    // of key 4) and without the lake, which is older.
    try {
      sql("SET spark.sql.fluss.read.optimized=true");
      assertEquals(ACCOUNTS_IN_KV_SNAPSHOT,
          rows("SELECT " + PK_COLUMNS + " FROM " + accounts + " ORDER BY id"));
    } finally {
      spark().conf().unset("spark.sql.fluss.read.optimized");
    }

    // The union read takes the keys the log did not change from the lake: without the lake's
    // data files it fails (the log alone would still give every row). Last: nothing else
    // reads this table.
    assertTrue(removePaimonDataFiles(db, "accounts") > 0);
    Exception e = assertThrows(Exception.class,
        () -> rows("SELECT " + PK_COLUMNS + " FROM " + accounts));
    assertTrue(causes(e).contains("accounts"), causes(e));
  }

  /** Deletes the rows of keys {@code ids} from {@code table} of {@code catalog}'s server. */
  private void deleteKeys(String catalog, String table, long... ids) {
    Schema keySchema = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null)));
    Connection conn = connection(catalog);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(keySchema, conn.allocator());
        Table tbl = conn.table(db + "." + table)) {
      BigIntVector id = (BigIntVector) root.getVector("id");
      id.allocateNew(ids.length);
      for (int i = 0; i < ids.length; i++) {
        id.set(i, ids[i]);
      }
      root.setRowCount(ids.length);
      tbl.delete(root);
      tbl.flush();
    }
  }

  /** The messages of {@code t} and its causes, one per line. */
  private static String causes(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append('\n');
    }
    return sb.toString();
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
