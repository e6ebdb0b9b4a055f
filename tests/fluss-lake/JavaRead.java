import io.riverlet.Connection;
import io.riverlet.ReadOptions;
import io.riverlet.ReadResult;
import io.riverlet.Riverlet;
import io.riverlet.Table;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Riverlet's Java binding reading the tables of tests/fluss-cluster/run-fluss-tiered-lake.sh (the
 * union read of each table and its {@code $lake} table), written as StatementRunner writes
 * Flink's rows ({@code ### java: NAME}, then each row as Flink's Row.toString, sorted), so
 * lake_check.py compares them the same way.
 *
 * <p>Usage: {@code java -Djava.library.path=target/debug -cp RIVERLET_JAVA_CP JavaRead.java
 * BOOTSTRAP DB OUT TABLE...}
 */
public final class JavaRead {
  private JavaRead() {}

  public static void main(String[] args) throws Exception {
    try (Connection conn = Riverlet.connect(args[0], Map.of());
        PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(args[2])))) {
      for (int i = 3; i < args.length; i++) {
        out.println("### java: " + args[i]);
        for (String row : rows(conn.table(args[1] + "." + args[i]))) {
          out.println(row);
        }
      }
    }
  }

  private static List<String> rows(Table table) throws Exception {
    List<String> rows = new ArrayList<>();
    try (ReadResult result = table.read(ReadOptions.all())) {
      ArrowReader reader = result.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        for (int r = 0; r < root.getRowCount(); r++) {
          List<String> values = new ArrayList<>();
          for (FieldVector v : root.getFieldVectors()) {
            values.add(flink(v, r));
          }
          rows.add("+I[" + String.join(", ", values) + "]");
        }
      }
    }
    Collections.sort(rows);
    return rows;
  }

  /** A value as Flink's Row.toString prints it (TIMESTAMP_LTZ as an Instant). */
  private static String flink(FieldVector v, int r) {
    if (v.isNull(r)) {
      return "null";
    }
    if (v instanceof DateDayVector d) {
      return LocalDate.ofEpochDay(d.get(r)).toString();
    }
    Object o = v.getObject(r);
    if (o instanceof LocalDateTime t) {
      return t.toInstant(ZoneOffset.UTC).toString();
    }
    return o.toString();
  }
}
