// The Spark side of benches/spark/run.py (issue 15's benchmark, not a test): the same rows read
// by one SparkSession through Riverlet's Spark connector (a table in `riverlet serve`) and from a
// local Parquet file, with a projection, with a selective filter and whole, each query run to
// its last row (Spark's `noop` sink) so that neither side can skip the read. Prints one JSON
// line per measured query.
//
//   java <Spark's --add-opens> -cp <classes>:<riverlet-spark-3.5 JAR>:<Spark> SparkBench \
//       <bootstrap> <rows> <runs> <rounds> <parquet dir>
//
// The data is generated once by Spark (spark.range) and written to both: INSERT INTO the Fluss
// table (4 buckets, as benches/jvm) and a Parquet file (Spark's defaults: snappy, 128 MB row
// groups), so both sides hold exactly the same rows.

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public final class SparkBench {
  private SparkBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: SparkBench <bootstrap> <rows> <runs> <rounds> <parquet dir>");
      System.exit(2);
    }
    String bootstrap = args[0];
    long rows = Long.parseLong(args[1]);
    int runs = Integer.parseInt(args[2]);
    int rounds = Integer.parseInt(args[3]);
    String parquet = args[4];

    SparkSession spark =
        SparkSession.builder()
            .master("local[2]")
            .appName("riverlet-spark-bench")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.catalog.fluss_catalog", "io.riverlet.spark.SparkCatalog")
            .config("spark.sql.catalog.fluss_catalog.bootstrap.servers", bootstrap)
            .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");

    String table = "fluss_catalog.bench.spark_" + rows;
    // Same columns as benches/jvm (core/examples/scan_throughput.rs): user_id spreads over
    // 0..99999 independently of id, so `user_id < 1000` keeps 1% of the rows, all over the table.
    String generated =
        "SELECT id, "
            + "CAST(timestamp_millis(1767225600000 + id) AS TIMESTAMP_NTZ) AS event_time, "
            + "CAST(pmod(id * 7919, 100000) AS INT) AS user_id, "
            + "CAST(pmod(id, 10000) AS DOUBLE) * 0.25 AS amount, "
            + "element_at(array('books','games','garden','music','outdoor','shoes','tools','toys'),"
            + " CAST(pmod(id, 8) AS INT) + 1) AS category, "
            + "pmod(id, 3) = 0 AS flag "
            + "FROM range(" + rows + ")";
    spark.sql("CREATE DATABASE IF NOT EXISTS fluss_catalog.bench");
    spark.sql(
        "CREATE TABLE " + table + " (id BIGINT, event_time TIMESTAMP_NTZ, user_id INT, "
            + "amount DOUBLE, category STRING, flag BOOLEAN) TBLPROPERTIES ('bucket.num' = '4')");
    long t0 = System.nanoTime();
    spark.sql("INSERT INTO " + table + " " + generated);
    log("load", "riverlet", rows, seconds(t0));
    t0 = System.nanoTime();
    spark.sql(generated).write().mode("overwrite").parquet(parquet);
    log("load", "parquet", rows, seconds(t0));

    Map<String, String> queries = new LinkedHashMap<>();
    queries.put("projection", "SELECT id, amount FROM %s");
    queries.put("filter", "SELECT * FROM %s WHERE user_id < 1000");
    queries.put("full", "SELECT * FROM %s");
    Map<String, String> sources = new LinkedHashMap<>();
    sources.put("riverlet", table);
    sources.put("parquet", "parquet.`" + parquet + "`");

    // Row counts first: each side must hold every row, and the filter must keep the same rows.
    for (Map.Entry<String, String> s : sources.entrySet()) {
      long n = spark.sql("SELECT COUNT(*) FROM " + s.getValue()).first().getLong(0);
      long f =
          spark.sql("SELECT COUNT(id) FROM " + s.getValue() + " WHERE user_id < 1000")
              .first().getLong(0);
      if (n != rows) {
        throw new IllegalStateException(s.getKey() + " holds " + n + " rows, expected " + rows);
      }
      System.out.printf("{\"count\": \"%s\", \"rows\": %d, \"filtered\": %d}%n", s.getKey(), n, f);
    }

    for (int round = 0; round < rounds; round++) {
      List<String> order = new ArrayList<>(sources.keySet());
      if (round % 2 == 1) {
        java.util.Collections.reverse(order);
      }
      for (String q : queries.keySet()) {
        for (String who : order) {
          String sql = String.format(queries.get(q), sources.get(who));
          for (int run = 0; run < runs; run++) {
            Dataset<Row> df = spark.sql(sql);
            long start = System.nanoTime();
            df.write().format("noop").mode("overwrite").save();
            double s = seconds(start);
            System.out.printf(
                "{\"query\": \"%s\", \"who\": \"%s\", \"round\": %d, \"run\": %d, "
                    + "\"seconds\": %.6f}%n",
                q, who, round, run, s);
          }
        }
      }
    }
    spark.sql("DROP TABLE " + table);
    spark.stop();
  }

  private static double seconds(long start) {
    return (System.nanoTime() - start) / 1e9;
  }

  private static void log(String what, String who, long rows, double s) {
    System.out.printf(
        "{\"%s\": \"%s\", \"rows\": %d, \"seconds\": %.6f}%n", what, who, rows, s);
  }
}
