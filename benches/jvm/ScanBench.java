// The Java side of benches/jvm/run.sh: reads a whole table through the Java API (Arrow through
// the C Data Interface) `runs` times in one JVM and prints one JSON line per run, as
// core/examples/scan_throughput.rs does for the same scan in Rust.
//
//   java -cp <riverlet-java JAR + Arrow> benches/jvm/ScanBench.java <bootstrap> <db.table> <runs>

import io.riverlet.Connection;
import io.riverlet.Riverlet;
import io.riverlet.Table;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

public final class ScanBench {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: ScanBench <bootstrap> <db.table> <runs>");
      System.exit(2);
    }
    int runs = Integer.parseInt(args[2]);
    try (Connection conn = Riverlet.connect(args[0], Map.of());
        Table table = conn.table(args[1])) {
      for (int run = 0; run < runs; run++) {
        long t0 = System.nanoTime();
        long rows = 0;
        long bytes = 0;
        try (ArrowReader reader = table.scan()) {
          while (reader.loadNextBatch()) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            rows += root.getRowCount();
            for (FieldVector v : root.getFieldVectors()) {
              bytes += v.getBufferSize();
            }
          }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
            "{\"run\": %d, \"rows\": %d, \"bytes\": %d, \"seconds\": %.6f}%n",
            run, rows, bytes, seconds);
      }
    }
  }
}
