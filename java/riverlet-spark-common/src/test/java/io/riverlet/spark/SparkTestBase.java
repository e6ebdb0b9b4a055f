package io.riverlet.spark;

import io.riverlet.Admin;
import io.riverlet.Connection;
import io.riverlet.LocalServer;
import io.riverlet.OffsetSpec;
import io.riverlet.Riverlet;
import io.riverlet.RiverletException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * One embedded Fluss server and one local Spark session ({@code local[2]}) for the whole test
 * JVM, with the catalog {@code fluss_catalog} and the session extension configured as Fluss's
 * guide does. Each test class works in its own database, named after the class.
 *
 * <p>With the environment variable {@code RIVERLET_TEST_BOOTSTRAP} set (the real-Fluss interop
 * run), the session talks to that server instead, and each class's database name gets a suffix
 * unique to the test JVM: both Spark versions run against the same server, and Apache Fluss
 * 0.9.1 can leave a table re-created at a just-dropped path without a leader, so names are never
 * reused there. (Every Spark test applies to Apache Fluss 0.9.1 as well.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class SparkTestBase {
  protected static final String CATALOG = "fluss_catalog";
  /** The catalog of the second embedded server, whose lake is Paimon ({@link #lakeCatalog}). */
  protected static final String PAIMON_CATALOG = "paimon_catalog";

  private static LocalServer server;
  private static Connection connection;
  private static SparkSession spark;
  /** The embedded server tiering to Paimon, started on first use by {@link #lakeCatalog}. */
  private static LocalServer paimonServer;
  private static Connection paimonConnection;
  private static Path tempDir;

  protected String db;

  /** The external server's bootstrap address, or null for the embedded one. */
  protected static final String EXTERNAL_BOOTSTRAP = externalBootstrap();

  /** The suffix of database names on an external server (empty on the embedded one). */
  protected static final String RUN_SUFFIX =
      EXTERNAL_BOOTSTRAP == null ? "" : "_" + Long.toString(System.nanoTime() & 0xffffffL, 36);

  private static String externalBootstrap() {
    String b = System.getenv("RIVERLET_TEST_BOOTSTRAP");
    return b == null || b.isBlank() ? null : b;
  }

  /** The shared session, started on first use (with the server). */
  protected static synchronized SparkSession spark() {
    if (spark == null) {
      String bootstrap = EXTERNAL_BOOTSTRAP;
      if (bootstrap == null) {
        try {
          Path dir = Files.createTempDirectory("riverlet-spark-test");
          tempDir = dir;
          // Tiering to Iceberg on (it touches only tables with 'table.datalake.enabled').
          server = LocalServer.start(dir.resolve("data"), "127.0.0.1", 0, Map.of(),
              Map.of("datalake.format", "iceberg",
                  "datalake.iceberg.warehouse", dir.resolve("warehouse").toString()));
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
        bootstrap = server.bootstrapServers();
      }
      connection = Riverlet.connect(bootstrap, Map.of());
      spark =
          SparkSession.builder()
              .master("local[2]")
              .appName("riverlet-spark-tests")
              .config("spark.ui.enabled", "false")
              .config("spark.driver.host", "127.0.0.1")
              .config("spark.driver.bindAddress", "127.0.0.1")
              .config("spark.sql.shuffle.partitions", "2")
              .config("spark.sql.session.timeZone", "UTC")
              .config("spark.sql.catalog." + CATALOG, SparkCatalog.class.getName())
              .config("spark.sql.catalog." + CATALOG + ".bootstrap.servers", bootstrap)
              .config("spark.sql.extensions", RiverletSparkSessionExtensions.class.getName())
              .config("spark.sql.defaultCatalog", CATALOG)
              .getOrCreate();
      Runtime.getRuntime().addShutdownHook(new Thread(SparkTestBase::shutdown));
    }
    return spark;
  }

  /**
   * The catalog whose embedded server tiers lake-enabled tables to {@code format}'s lake:
   * {@link #CATALOG} for {@code iceberg}; for {@code paimon} {@link #PAIMON_CATALOG}, a second
   * embedded server (a Paimon filesystem warehouse) registered in the same session on first use,
   * so the lake tests run over both formats without a second Spark session. Embedded server
   * only: callers skip themselves on an external one.
   */
  protected static synchronized String lakeCatalog(String format) {
    spark();
    switch (format) {
      case "iceberg":
        return CATALOG;
      case "paimon":
        break;
      default:
        throw new IllegalArgumentException("no test catalog tiers to lake format " + format);
    }
    if (server == null) {
      throw new IllegalStateException("the Paimon lake catalog needs the embedded server");
    }
    if (paimonServer == null) {
      paimonServer = LocalServer.start(tempDir.resolve("paimon-data"), "127.0.0.1", 0, Map.of(),
          Map.of("datalake.format", "paimon",
              "datalake.paimon.warehouse", tempDir.resolve("paimon-warehouse").toString()));
      paimonConnection = Riverlet.connect(paimonServer.bootstrapServers(), Map.of());
      // Spark loads a catalog from the session's configuration when a statement first names it.
      String key = "spark.sql.catalog." + PAIMON_CATALOG;
      spark.conf().set(key, SparkCatalog.class.getName());
      spark.conf().set(key + ".bootstrap.servers", paimonServer.bootstrapServers());
    }
    return PAIMON_CATALOG;
  }

  /**
   * Removes the data files (not the metadata) of Paimon table {@code database.table} of the
   * {@link #PAIMON_CATALOG} server's warehouse: Paimon keeps them in its {@code bucket-N}
   * directories. Returns how many it removed. A read that still succeeds did not read the lake.
   */
  protected static int removePaimonDataFiles(String database, String table) throws IOException {
    Path dir = tempDir.resolve("paimon-warehouse").resolve(database + ".db").resolve(table);
    List<Path> files;
    try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
      files = walk.filter(Files::isRegularFile)
          .filter(p -> p.getParent().getFileName().toString().startsWith("bucket-"))
          .collect(Collectors.toList());
    }
    for (Path f : files) {
      Files.delete(f);
    }
    return files.size();
  }

  private static synchronized void shutdown() {
    if (spark != null) {
      spark.stop();
    }
    if (connection != null) {
      connection.close();
    }
    if (server != null) {
      server.close();
    }
    if (paimonConnection != null) {
      paimonConnection.close();
    }
    if (paimonServer != null) {
      paimonServer.close();
    }
  }

  /**
   * Takes a KV snapshot of every changed primary-key bucket of the embedded server now, as
   * Fluss's test harness triggers one. Returns false (after printing why) on an external server,
   * whose snapshots come only every {@code kv.snapshot.interval}.
   */
  protected static boolean takeKvSnapshots(String test) {
    return takeKvSnapshots(test, CATALOG);
  }

  /**
   * {@link #takeKvSnapshots(String)} on the embedded server behind {@code catalog}
   * ({@link #CATALOG} or {@link #PAIMON_CATALOG}).
   */
  protected static boolean takeKvSnapshots(String test, String catalog) {
    spark();
    if (server == null) {
      System.out.println("NOT APPLICABLE to the server at " + EXTERNAL_BOOTSTRAP + ": " + test
          + ": needs a KV snapshot at a known point, which only the embedded server takes on "
          + "demand");
      return false;
    }
    if (PAIMON_CATALOG.equals(catalog)) {
      lakeCatalog("paimon");
      paimonServer.takeKvSnapshots();
    } else {
      server.takeKvSnapshots();
    }
    return true;
  }

  /**
   * Commits the new rows of every lake-enabled table of the embedded server to its Iceberg lake
   * now. Returns false (after printing why) on an external server, which tiers on its own.
   */
  protected static boolean commitLake(String test) {
    return commitLake(test, CATALOG);
  }

  /**
   * Commits the new rows of every lake-enabled table of the embedded server behind
   * {@code catalog} ({@link #CATALOG} or {@link #PAIMON_CATALOG}) to its lake now; false (after
   * printing why) on an external server, which tiers on its own.
   */
  protected static boolean commitLake(String test, String catalog) {
    spark();
    if (server == null) {
      System.out.println("NOT APPLICABLE to the server at " + EXTERNAL_BOOTSTRAP + ": " + test
          + ": needs lake commits at known points, which only the embedded server makes on "
          + "demand");
      return false;
    }
    if (PAIMON_CATALOG.equals(catalog)) {
      lakeCatalog("paimon");
      paimonServer.commitLake();
    } else {
      server.commitLake();
    }
    return true;
  }

  /** A direct connection to the test server (for writes Spark SQL has no syntax for). */
  protected static Connection connection() {
    spark();
    return connection;
  }

  /** A direct connection to the server behind {@code catalog} (see {@link #lakeCatalog}). */
  protected static Connection connection(String catalog) {
    if (PAIMON_CATALOG.equals(catalog)) {
      lakeCatalog("paimon");
      return paimonConnection;
    }
    return connection();
  }

  @BeforeAll
  void createDatabase() {
    db = getClass().getSimpleName().toLowerCase(Locale.ROOT) + RUN_SUFFIX;
    sql("CREATE DATABASE IF NOT EXISTS " + CATALOG + "." + db);
    sql("USE " + CATALOG + "." + db);
  }

  @AfterAll
  void resetSession() {
    spark().conf().unset("spark.sql.fluss.read.optimized");
    spark().conf().set("spark.sql.session.timeZone", "UTC");
  }

  /** A {@code CREATE TABLE} statement; group 1 is the table's (possibly qualified) name. */
  private static final Pattern CREATE_TABLE = Pattern.compile(
      "^\\s*CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?([`\\w.]+)",
      Pattern.CASE_INSENSITIVE);

  /** Runs a statement; after a {@code CREATE TABLE}, waits for its leaders (awaitLeaders). */
  protected static Dataset<Row> sql(String text) {
    Dataset<Row> result = spark().sql(text);
    Matcher m = CREATE_TABLE.matcher(text);
    if (EXTERNAL_BOOTSTRAP != null && m.find()) {
      String[] parts = m.group(1).replace("`", "").split("\\.");
      String table = parts.length == 1
          ? spark().catalog().currentDatabase() + "." + parts[0]
          : parts[parts.length - 2] + "." + parts[parts.length - 1];
      awaitLeaders(table, () -> spark().sql(text));
    }
    return result;
  }

  /**
   * The Fluss error codes of a new table that is not ready yet: LEADER_NOT_AVAILABLE (44) until the
   * coordinator elects leaders, then for a moment UNKNOWN_TABLE_OR_BUCKET (21) or
   * NOT_LEADER_OR_FOLLOWER (12) while the tablet server creates the replicas.
   */
  private static boolean notReadyYet(RiverletException e) {
    return e.hasFlussCode()
        && (e.flussCode() == 44 || e.flussCode() == 21 || e.flussCode() == 12);
  }

  /** How long one attempt waits for a new table's leaders. */
  private static final long LEADER_WAIT_MS = 20_000;

  /**
   * Against an external server, waits until every bucket of the new table {@code dbDotTable}
   * has a leader (a ListOffsets of every bucket answers). Apache Fluss 0.9.1's coordinator
   * sometimes never assigns buckets to a just-created table (the create-table race of
   * tests/README.md), so after {@link #LEADER_WAIT_MS} without leaders the table is dropped and
   * {@code recreate} runs, up to three attempts. Partitioned tables are not probed: their
   * buckets come with partitions. A no-op on the embedded server.
   */
  protected static void awaitLeaders(String dbDotTable, Runnable recreate) {
    if (EXTERNAL_BOOTSTRAP == null) {
      return;
    }
    try (Admin admin = connection().admin()) {
      if (!admin.getTableInfo(dbDotTable).partitionKeys().isEmpty()) {
        return;
      }
      for (int attempt = 1; ; attempt++) {
        long deadline = System.nanoTime() + LEADER_WAIT_MS * 1_000_000L;
        while (true) {
          try {
            admin.listOffsets(dbDotTable, null, OffsetSpec.latest());
            return;
          } catch (RiverletException e) {
            if (!notReadyYet(e)) {
              throw e;
            }
            if (System.nanoTime() > deadline) {
              if (attempt == 3) {
                throw e;
              }
              break;
            }
          }
          try {
            Thread.sleep(200);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
          }
        }
        System.out.println("table " + dbDotTable + " got no leader within " + LEADER_WAIT_MS
            + " ms (Apache Fluss's create-table race, tests/README.md): re-creating it");
        admin.dropTable(dbDotTable, false);
        recreate.run();
      }
    }
  }

  /** The rows of a query, each as Spark prints it ({@code [600,21,601,addr1]}), in order. */
  protected static List<String> rows(String query) {
    return rows(sql(query));
  }

  protected static List<String> rows(Dataset<Row> df) {
    return df.collectAsList().stream().map(SparkTestBase::show).collect(Collectors.toList());
  }

  /**
   * A row as {@code [v1,v2,...]}, the same on Scala 2.12 and 2.13: arrays as {@code [1, 2]},
   * maps as {@code {k=v, ...}}, structs as {@code [a,b]}.
   */
  protected static String show(Object v) {
    if (v instanceof Row) {
      Row r = (Row) v;
      StringBuilder sb = new StringBuilder("[");
      for (int i = 0; i < r.length(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(show(r.get(i)));
      }
      return sb.append(']').toString();
    }
    if (v instanceof scala.collection.Map) {
      scala.collection.Iterator<?> it = ((scala.collection.Map<?, ?>) v).iterator();
      List<String> entries = new ArrayList<>();
      while (it.hasNext()) {
        scala.Tuple2<?, ?> kv = (scala.Tuple2<?, ?>) it.next();
        entries.add(show(kv._1()) + "=" + show(kv._2()));
      }
      return "{" + String.join(", ", entries) + "}";
    }
    if (v instanceof scala.collection.Iterable) {
      scala.collection.Iterator<?> it = ((scala.collection.Iterable<?>) v).iterator();
      List<String> items = new ArrayList<>();
      while (it.hasNext()) {
        items.add(show(it.next()));
      }
      return "[" + String.join(", ", items) + "]";
    }
    if (v instanceof byte[]) {
      return Arrays.toString((byte[]) v);
    }
    return String.valueOf(v);
  }

  protected static List<String> list(String... rows) {
    return new ArrayList<>(Arrays.asList(rows));
  }

  /** The text of {@code EXPLAIN} for a query. */
  protected static String explain(String query) {
    return sql("EXPLAIN " + query).collectAsList().get(0).getString(0);
  }
}
