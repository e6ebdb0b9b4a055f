// Fluss's own Java client (org.apache.fluss:fluss-client 0.9.1-incubating from Maven Central) as
// a contender of benches/scale.py: one operation per JVM, one JSON line on stdout, as
// ScanBench.java prints for the Riverlet Java API.
//
//   java --add-opens=java.base/java.nio=ALL-UNNAMED -cp <fluss-client classpath> \
//     benches/jvm/FlussClientBench.java append <bootstrap> <db.table> <data.arrow> [rows] [k=v]...
//   java ... benches/jvm/FlussClientBench.java scan <bootstrap> <db.table> <rows> [k=v]...
//
// Trailing `key=value` arguments are client options (e.g. client.writer.batch-size=4mb) set on
// the Configuration after bootstrap.servers; without them the client runs with its defaults.
//
// (benches/scale.py compiles it once with javac and runs the class; the classpath is the one
// `mvn dependency:build-classpath` gives for tests/reliability/peer/pom.xml.)
//
// append: the bench data of benches/run.py (an Arrow IPC file: id BIGINT, event_time
//   TIMESTAMP(6), user_id INT, amount DOUBLE nullable, category STRING, flag BOOLEAN) is read
//   into memory first with the Arrow classes fluss-client shades (not timed). Timed: one
//   GenericRow per row built from those vectors and AppendWriter.append(row) for each, then
//   flush(), which returns when every row is acknowledged. The table exists already (the harness
//   created it); Fluss's client defaults throughout (batch size, buffer memory, acks=all, sticky
//   bucket assignment for a table without a bucket key).
// scan: timed from asking the latest offsets of every bucket (Admin.listOffsets, LatestSpec), a
//   LogScanner subscribed from the beginning of every bucket, poll() until each bucket has handed
//   out the records below its latest offset. Fluss's Java client hands out rows (InternalRow
//   over the fetched Arrow batches); the bench reads the id column of each row (their sum checks
//   what was read), not every column.
//
// Output (last line): {"op": ..., "rows": N, "seconds": S, "id_sum": X, "failed": F, ...}.

import java.io.File;
import java.io.FileInputStream;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.BufferAllocator;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.RootAllocator;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.BigIntVector;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.BitVector;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.Float8Vector;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.IntVector;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.VarCharVector;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.VectorLoader;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.VectorUnloader;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

public final class FlussClientBench {
  public static void main(String[] args) throws Exception {
    List<String> positional = new ArrayList<>();
    Map<String, String> options = new LinkedHashMap<>();
    for (String a : args) {
      if (a.matches("[a-z][a-z0-9._-]*=.*")) {
        options.put(a.substring(0, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
      } else {
        positional.add(a);
      }
    }
    args = positional.toArray(new String[0]);
    if (args.length < 4 || !(args[0].equals("append") || args[0].equals("scan"))) {
      System.err.println(
          "usage: FlussClientBench append <bootstrap> <db.table> <data.arrow> [rows] [k=v]...\n"
              + "       FlussClientBench scan <bootstrap> <db.table> <expected rows> [k=v]...");
      System.exit(2);
    }
    String op = args[0];
    String[] name = args[2].split("\\.", 2);
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", args[1]);
    options.forEach(conf::setString);
    String json;
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Table table = conn.getTable(TablePath.of(name[0], name[1]))) {
      if (op.equals("append")) {
        long limit = args.length > 4 ? Long.parseLong(args[4]) : Long.MAX_VALUE;
        json = append(table, new File(args[3]), limit);
      } else {
        json = scan(conn, table, TablePath.of(name[0], name[1]), Long.parseLong(args[3]));
      }
    }
    System.out.println(json);
    System.out.flush();
    // The client's netty threads need not hold up the exit.
    System.exit(0);
  }

  private static String append(Table table, File data, long limit) throws Exception {
    try (BufferAllocator alloc = new RootAllocator();
        FileInputStream in = new FileInputStream(data);
        FileChannel ch = in.getChannel();
        ArrowFileReader reader = new ArrowFileReader(ch, alloc)) {
      // Every batch into memory of its own first (the reader reuses one root): not timed.
      List<VectorSchemaRoot> batches = new ArrayList<>();
      VectorSchemaRoot src = reader.getVectorSchemaRoot();
      long loaded = 0;
      for (ArrowBlock block : reader.getRecordBlocks()) {
        if (loaded >= limit) {
          break;
        }
        reader.loadRecordBatch(block);
        VectorSchemaRoot copy = VectorSchemaRoot.create(src.getSchema(), alloc);
        try (ArrowRecordBatch arb = new VectorUnloader(src).getRecordBatch()) {
          new VectorLoader(copy).load(arb);
        }
        int keep = (int) Math.min(copy.getRowCount(), limit - loaded);
        copy.setRowCount(keep);
        loaded += keep;
        batches.add(copy);
      }
      AppendWriter writer = table.newAppend().createWriter();
      AtomicLong failed = new AtomicLong();
      AtomicReference<Throwable> firstError = new AtomicReference<>();
      long rows = 0;
      long idSum = 0;
      long t0 = System.nanoTime();
      for (VectorSchemaRoot root : batches) {
        BigIntVector id = (BigIntVector) root.getVector(0);
        TimeStampMicroVector ts = (TimeStampMicroVector) root.getVector(1);
        IntVector user = (IntVector) root.getVector(2);
        Float8Vector amount = (Float8Vector) root.getVector(3);
        VarCharVector category = (VarCharVector) root.getVector(4);
        BitVector flag = (BitVector) root.getVector(5);
        int n = root.getRowCount();
        for (int i = 0; i < n; i++) {
          long idv = id.get(i);
          GenericRow row = new GenericRow(6);
          row.setField(0, idv);
          row.setField(1, ts.isNull(i) ? null : TimestampNtz.fromMicros(ts.get(i)));
          row.setField(2, user.isNull(i) ? null : user.get(i));
          row.setField(3, amount.isNull(i) ? null : amount.get(i));
          row.setField(4, category.isNull(i) ? null : BinaryString.fromBytes(category.get(i)));
          row.setField(5, flag.isNull(i) ? null : flag.get(i) != 0);
          writer
              .append(row)
              .whenComplete(
                  (r, e) -> {
                    if (e != null) {
                      failed.incrementAndGet();
                      firstError.compareAndSet(null, e);
                    }
                  });
          idSum += idv;
        }
        rows += n;
      }
      writer.flush();
      double seconds = (System.nanoTime() - t0) / 1e9;
      for (VectorSchemaRoot root : batches) {
        root.close();
      }
      Throwable e = firstError.get();
      String err = e == null ? "" : (e.getClass().getName() + ": " + e.getMessage());
      return String.format(
          "{\"op\": \"append\", \"rows\": %d, \"seconds\": %.6f, \"id_sum\": %d, \"failed\": %d,"
              + " \"error\": \"%s\"}",
          rows, seconds, idSum, failed.get(), err.replace("\\", "/").replace("\"", "'"));
    }
  }

  private static String scan(Connection conn, Table table, TablePath path, long expected)
      throws Exception {
    int buckets = table.getTableInfo().getNumBuckets();
    long tableId = table.getTableInfo().getTableId();
    List<Integer> ids = new ArrayList<>();
    for (int b = 0; b < buckets; b++) {
      ids.add(b);
    }
    long t0 = System.nanoTime();
    Map<Integer, Long> latest =
        conn.getAdmin().listOffsets(path, ids, new OffsetSpec.LatestSpec()).all().get();
    long[] end = new long[buckets];
    int open = 0;
    long rows = 0;
    long idSum = 0;
    long polls = 0;
    try (LogScanner scanner = table.newScan().createLogScanner()) {
      for (int b = 0; b < buckets; b++) {
        end[b] = latest.get(b);
        if (end[b] > 0) {
          scanner.subscribeFromBeginning(b);
          open++;
        }
      }
      boolean[] done = new boolean[buckets];
      long deadline = System.nanoTime() + 600_000_000_000L;
      while (open > 0) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("scan did not reach the latest offsets within 600 s");
        }
        ScanRecords records = scanner.poll(Duration.ofMillis(500));
        polls++;
        for (TableBucket tb : records.buckets()) {
          int b = tb.getBucket();
          long stop = end[b];
          long last = -1;
          for (ScanRecord r : records.records(tb)) {
            last = r.logOffset();
            if (last < stop) {
              rows++;
              idSum += r.getRow().getLong(0);
            }
          }
          if (!done[b] && last + 1 >= stop) {
            done[b] = true;
            open--;
          }
        }
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    return String.format(
        "{\"op\": \"scan\", \"rows\": %d, \"seconds\": %.6f, \"id_sum\": %d, \"expected\": %d,"
            + " \"polls\": %d, \"table_id\": %d}",
        rows, seconds, idSum, expected, polls, tableId);
  }
}
