package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.riverlet.Table;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The time-range read of Fluss's guide: the table-valued function in every argument form,
 * rolling windows from constant expressions, the DataFrame options, the session time zone,
 * invalid windows failing at analysis, and the session option that must have no effect.
 *
 * <p>Two batches are written in two different wall-clock seconds: A in [t0, t1), B in [t1, t2).
 * The boundaries are whole seconds so the {@code yyyy-MM-dd HH:mm:ss} forms can name them.
 */
class SparkTimeRangeTest extends SparkTestBase {
  private static final List<String> A = List.of("[600,addr1]", "[700,addr2]", "[800,addr3]");
  private static final List<String> B = List.of("[900,addr4]", "[1000,addr5]");
  private static final List<String> AB =
      List.of("[600,addr1]", "[700,addr2]", "[800,addr3]", "[900,addr4]", "[1000,addr5]");

  private long t0;
  private long t1;
  private long t2;

  /** Waits until the wall clock enters a new second; returns that second in epoch ms. */
  private static long nextSecond() {
    long now = System.currentTimeMillis();
    long next = (now / 1000 + 1) * 1000;
    try {
      Thread.sleep(next - now + 5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return next;
  }

  private static String wall(long millis, String zone) {
    return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")
        .withZone(ZoneId.of(zone))
        .format(Instant.ofEpochMilli(millis));
  }

  @BeforeAll
  void writeTwoWindows() {
    sql("CREATE TABLE tr_log (order_id BIGINT, item_id BIGINT, amount INT, address STRING)");
    sql("CREATE TABLE tr_pk (id BIGINT, v STRING) TBLPROPERTIES ('primary.key' = 'id', "
        + "'bucket.num' = '2')");
    t0 = nextSecond();
    sql("INSERT INTO tr_log VALUES (600, 21, 601, 'addr1'), (700, 22, 602, 'addr2'), "
        + "(800, 23, 603, 'addr3')");
    sql("INSERT INTO tr_pk VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    t1 = nextSecond();
    sql("INSERT INTO tr_log VALUES (900, 24, 604, 'addr4'), (1000, 25, 605, 'addr5')");
    sql("INSERT INTO tr_pk VALUES (2, 'two-b'), (4, 'four'), (5, 'five')");
    deleteKeys(3L, 5L);
    t2 = nextSecond();
  }

  private void deleteKeys(long... ids) {
    Schema keySchema =
        new Schema(List.of(new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)),
            null)));
    BufferAllocator alloc = connection().allocator();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(keySchema, alloc);
        Table t = connection().table(db + ".tr_pk")) {
      BigIntVector id = (BigIntVector) root.getVector("id");
      id.allocateNew(ids.length);
      for (int i = 0; i < ids.length; i++) {
        id.set(i, ids[i]);
      }
      root.setRowCount(ids.length);
      t.delete(root);
      t.flush();
    }
  }

  @AfterEach
  void resetSession() {
    spark().conf().set("spark.sql.session.timeZone", "UTC");
    spark().conf().unset("spark.sql.fluss.scan.incremental.start.timestamp");
    spark().conf().unset("spark.sql.fluss.scan.incremental.end.timestamp");
    spark().conf().unset("spark.sql.fluss.read.optimized");
  }

  private static List<String> tvf(String args) {
    return rows("SELECT order_id, address FROM fluss_incremental_between_timestamp(" + args
        + ") ORDER BY order_id");
  }

  @Test
  void epochMillisStrings() {
    assertEquals(A, tvf("'tr_log', '" + t0 + "', '" + t1 + "'"));
    assertEquals(B, tvf("'tr_log', '" + t1 + "', '" + t2 + "'"));
  }

  @Test
  void datetimeStringsInTheSessionTimeZone() {
    assertEquals(A, tvf("'tr_log', '" + wall(t0, "UTC") + "', '" + wall(t1, "UTC") + "'"));
    spark().conf().set("spark.sql.session.timeZone", "Asia/Shanghai");
    assertEquals(A, tvf("'tr_log', '" + wall(t0, "Asia/Shanghai") + "', '"
        + wall(t1, "Asia/Shanghai") + "'"));
    // The UTC wall clocks read in Shanghai are 8 hours earlier: nothing was written then.
    assertEquals(List.of(), tvf("'tr_log', '" + wall(t0, "UTC") + "', '" + wall(t2, "UTC")
        + "'"));
  }

  @Test
  void omittedEndReadsUpToNow() {
    assertEquals(AB, tvf("'tr_log', '" + wall(t0, "UTC") + "'"));
    assertEquals(B, tvf("'tr_log', '" + t1 + "'"));
  }

  @Test
  void integralDateAndTimestampArguments() {
    assertEquals(A, tvf("'tr_log', " + t0 + ", " + t1 + "L"));
    assertEquals(A, tvf("'tr_log', TIMESTAMP '" + wall(t0, "UTC") + "', TIMESTAMP '"
        + wall(t1, "UTC") + "'"));
    assertEquals(B, tvf("'tr_log', TIMESTAMP_NTZ '" + wall(t1, "UTC") + "', TIMESTAMP_NTZ '"
        + wall(t2, "UTC") + "'"));
    LocalDate day = Instant.ofEpochMilli(t0).atZone(ZoneId.of("UTC")).toLocalDate();
    assertEquals(AB, tvf("'tr_log', DATE '" + day + "', '" + t2 + "'"));
    assertEquals(List.of(), tvf("'tr_log', DATE '" + day.minusDays(2) + "', DATE '"
        + day.minusDays(1) + "'"));
  }

  @Test
  void tableNameForms() {
    assertEquals(A, tvf("'" + db + ".tr_log', '" + t0 + "', '" + t1 + "'"));
    assertEquals(A, tvf("'fluss_catalog." + db + ".tr_log', '" + t0 + "', '" + t1 + "'"));
  }

  @Test
  void rollingWindowsFromConstantExpressions() {
    assertEquals(AB, tvf("'tr_log', CAST((unix_timestamp() - 3600) * 1000 AS STRING), "
        + "CAST(unix_timestamp() * 1000 AS STRING)"));
    assertEquals(AB, tvf("'tr_log', date_format(now() - INTERVAL 1 HOUR, 'yyyy-MM-dd HH:mm:ss'), "
        + "date_format(now(), 'yyyy-MM-dd HH:mm:ss')"));
  }

  @Test
  void theResultIsAnOrdinaryRelation() {
    String window = "fluss_incremental_between_timestamp('tr_log', '" + t0 + "', '" + t2 + "')";
    assertEquals(List.of("[900]", "[1000]"),
        rows("SELECT order_id FROM " + window + " WHERE amount >= 604 ORDER BY order_id"));
    assertEquals(List.of("[700,22,602]"),
        rows("SELECT w.order_id, l.item_id, w.amount FROM " + window + " w JOIN tr_log l "
            + "ON w.order_id = l.order_id WHERE w.order_id = 700"));
    assertTrue(explain("SELECT order_id FROM " + window + " WHERE amount >= 604")
        .contains("Window: [" + t0 + ", " + t2 + ")"));
  }

  @Test
  void primaryKeyTableFoldsTheWindow() {
    assertEquals(List.of("[1,one]", "[2,two]", "[3,three]"),
        rows("SELECT * FROM fluss_incremental_between_timestamp('tr_pk', '" + t0 + "', '" + t1
            + "') ORDER BY id"));
    // In [t1, t2): 2 updated, 4 inserted, 3 deleted, 5 inserted then deleted.
    assertEquals(List.of("[2,two-b]", "[4,four]"),
        rows("SELECT * FROM fluss_incremental_between_timestamp('tr_pk', '" + wall(t1, "UTC")
            + "', '" + wall(t2, "UTC") + "') ORDER BY id"));
  }

  @Test
  void dataFrameOptions() {
    Dataset<Row> a = spark().read()
        .option("scan.incremental.start.timestamp", wall(t0, "UTC"))
        .option("scan.incremental.end.timestamp", wall(t1, "UTC"))
        .table("fluss_catalog." + db + ".tr_log");
    assertEquals(A, rows(a.select("order_id", "address").orderBy("order_id")));
    Dataset<Row> open = spark().read()
        .option("scan.incremental.start.timestamp", Long.toString(t1))
        .table("fluss_catalog." + db + ".tr_log");
    assertEquals(B, rows(open.select("order_id", "address").orderBy("order_id")));
    Exception endOnly = assertThrows(Exception.class, () -> rows(spark().read()
        .option("scan.incremental.end.timestamp", Long.toString(t1))
        .table("fluss_catalog." + db + ".tr_log")));
    assertTrue(endOnly.getMessage().contains("start"), endOnly.getMessage());
  }

  @Test
  void sessionOptionsHaveNoEffect() {
    sql("SET spark.sql.fluss.scan.incremental.start.timestamp=" + t1);
    sql("SET spark.sql.fluss.scan.incremental.end.timestamp=" + t2);
    assertEquals(AB, rows("SELECT order_id, address FROM tr_log ORDER BY order_id"));
  }

  @Test
  void invalidWindowsFailAtAnalysis() {
    // spark.sql() analyzes the statement: each of these fails before anything runs.
    Exception blank = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('tr_log', '')"));
    assertTrue(blank.getMessage().contains("blank"), blank.getMessage());
    Exception unparseable = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('tr_log', 'not-a-time')"));
    assertTrue(unparseable.getMessage().contains("not-a-time"), unparseable.getMessage());
    Exception reversed = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('tr_log', '" + t1 + "', '" + t0
            + "')"));
    assertTrue(reversed.getMessage().contains("before"), reversed.getMessage());
    Exception equal = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('tr_log', '" + t1 + "', '" + t1
            + "')"));
    assertTrue(equal.getMessage().contains("before"), equal.getMessage());
    Exception noStart = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('tr_log')"));
    assertTrue(noStart.getMessage().contains("start timestamp"), noStart.getMessage());
    Exception column = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM tr_log l, LATERAL fluss_incremental_between_timestamp('tr_log', "
            + "l.order_id)"));
    assertTrue(column.getMessage() != null);
    Exception missing = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('no_such_table', '" + t0 + "')"));
    assertTrue(missing.getMessage().contains("no_such_table"), missing.getMessage());
  }

  @Test
  void readOptimizedRejectsAWindow() {
    sql("SET spark.sql.fluss.read.optimized=true");
    Exception e = assertThrows(Exception.class, () -> sql(
        "SELECT * FROM fluss_incremental_between_timestamp('tr_pk', '" + t0 + "', '" + t2
            + "')"));
    assertTrue(e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("optimized"),
        e.getMessage());
  }

  /** Collects the formatted WARN+ events of {@link WindowCheck}'s logger while installed. */
  private static final class CapturedWarnings extends AbstractAppender implements AutoCloseable {
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final LoggerConfig config;

    CapturedWarnings() {
      super("riverlet-captured-warnings", null, null, true, Property.EMPTY_ARRAY);
      LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
      config = ctx.getConfiguration().getLoggerConfig(WindowCheck.class.getName());
      start();
      config.addAppender(this, Level.WARN, null);
      ctx.updateLoggers();
    }

    @Override
    public void append(LogEvent event) {
      if (!WindowCheck.class.getName().equals(event.getLoggerName())) {
        return;
      }
      events.add(event.getLevel() + " " + event.getMessage().getFormattedMessage());
    }

    List<String> events() {
      return new ArrayList<>(events);
    }

    @Override
    public void close() {
      config.removeAppender(getName());
      ((LoggerContext) LogManager.getContext(false)).updateLoggers();
      stop();
    }
  }

  @Test
  void aWindowOlderThanTheLogTtlWarnsOnTheDriver() {
    sql("CREATE TABLE tr_ttl (id BIGINT, v STRING) TBLPROPERTIES ('table.log.ttl' = '1h')");
    sql("INSERT INTO tr_ttl VALUES (1, 'a')");
    long now = System.currentTimeMillis();
    try (CapturedWarnings log = new CapturedWarnings()) {
      // Analysis of the statement is where the window is checked: no action needed.
      sql("SELECT * FROM fluss_incremental_between_timestamp('tr_ttl', '" + (now - 60_000L)
          + "')");
      assertEquals(List.of(), log.events());
      sql("SELECT * FROM fluss_incremental_between_timestamp('tr_ttl', '"
          + (now - 2 * 3_600_000L) + "')");
      List<String> events = log.events();
      assertEquals(1, events.size(), events.toString());
      String w = events.get(0);
      assertTrue(w.startsWith("WARN ") && w.contains(db + ".tr_ttl") && w.contains("table.log.ttl")
          && w.contains("1h"), w);
      // The same window through the DataFrame options warns when the read is planned.
      rows(spark().read()
          .option("scan.incremental.start.timestamp", Long.toString(now - 2 * 3_600_000L))
          .table("fluss_catalog." + db + ".tr_ttl"));
      assertEquals(2, log.events().size(), log.events().toString());
    }
  }
}
