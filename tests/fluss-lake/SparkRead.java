import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Riverlet's Spark connector (the riverlet-spark-3.5 JAR, its catalog {@code fluss_catalog})
 * reading the tables of tests/fluss-cluster/run-fluss-tiered-lake.sh in a local Spark session: a
 * batch {@code SELECT *} of each table (the union read) and of its {@code `t$lake`} table, written
 * as StatementRunner writes Flink's rows ({@code ### spark: NAME}, then each row as Flink's
 * Row.toString, sorted), so lake_check.py compares them the same way.
 *
 * <p>Usage: {@code java -cp SPARK_CP:RIVERLET_SPARK_JAR SparkRead.java BOOTSTRAP DB OUT TABLE...}
 */
public final class SparkRead {
  private SparkRead() {}

  public static void main(String[] args) throws Exception {
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("riverlet-fluss-tiered-lake")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.session.timeZone", "UTC")
            // java.time values (Instant, LocalDate), whose toString is Flink's Row.toString's.
            .config("spark.sql.datetime.java8API.enabled", "true")
            .config("spark.sql.catalog.fluss_catalog", "io.riverlet.spark.SparkCatalog")
            .config("spark.sql.catalog.fluss_catalog.bootstrap.servers", args[0])
            .config("spark.sql.extensions", "io.riverlet.spark.RiverletSparkSessionExtensions")
            .getOrCreate();
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(args[2])))) {
      for (int i = 3; i < args.length; i++) {
        out.println("### spark: " + args[i]);
        List<String> rows = new ArrayList<>();
        for (Row row : spark.sql("SELECT * FROM fluss_catalog." + args[1] + ".`" + args[i] + "`")
            .collectAsList()) {
          List<String> values = new ArrayList<>();
          for (int c = 0; c < row.length(); c++) {
            values.add(flink(row.get(c)));
          }
          rows.add("+I[" + String.join(", ", values) + "]");
        }
        Collections.sort(rows);
        rows.forEach(out::println);
      }
    } finally {
      spark.stop();
    }
  }

  /** A value as Flink's Row.toString prints it (a timestamp without zone read as UTC). */
  private static String flink(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof LocalDateTime t) {
      return t.toInstant(ZoneOffset.UTC).toString();
    }
    if (v instanceof Instant t) {
      return t.toString();
    }
    return v.toString();
  }
}
