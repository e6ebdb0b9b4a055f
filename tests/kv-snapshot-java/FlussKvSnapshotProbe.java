// Fluss's own Java client (fluss-client 0.9.1 from Maven Central) reading KV snapshots of
// `riverlet-server` built with the `kv-snapshot` feature: Table.newScan().createBatchScanner(
// bucket, snapshotId), the KvSnapshotBatchScanner that downloads the files GetKvSnapshotMetadata
// names and opens them as RocksDB (frocksdb 6.20), as Fluss's Flink source does for a snapshot
// split. The driver of tests/kv-snapshot-java/run.sh.
//
//   java -cp <fluss-client classpath> FlussKvSnapshotProbe.java <bootstrap>
//
// Writes through Fluss's UpsertWriter (inserts, an update, deletes), waits until the latest
// snapshot of every bucket covers the bucket's whole log (its log offset equals the bucket's
// latest offset), reads every bucket's snapshot and compares the rows with what was written.
// Prints one "ok <check>" or "FAIL <check>: <why>" line per check and exits 1 on any failure.

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.metadata.KvSnapshots;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.batch.BatchScanner;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.utils.CloseableIterator;

public final class FlussKvSnapshotProbe {
  private static final int BUCKETS = 3;
  private static int failures = 0;

  private static void check(String name, boolean ok, Object why) {
    if (ok) {
      System.out.println("ok " + name);
    } else {
      failures++;
      System.out.println("FAIL " + name + ": " + why);
    }
  }

  /**
   * Waits (bounded) until every bucket's latest snapshot covers its whole log (its log offset is
   * the bucket's latest offset); returns the snapshot ids (-1: a bucket without rows).
   */
  private static long[] awaitSnapshots(Admin admin, TablePath path) throws Exception {
    for (int i = 0; i < 600; i++) {
      Map<Integer, Long> ends =
          admin
              .listOffsets(path, Arrays.asList(0, 1, 2), new OffsetSpec.LatestSpec())
              .all()
              .get();
      KvSnapshots snaps = admin.getLatestKvSnapshots(path).get();
      long[] ids = new long[BUCKETS];
      boolean all = true;
      for (int b = 0; b < BUCKETS; b++) {
        OptionalLong id = snaps.getSnapshotId(b);
        OptionalLong offset = snaps.getLogOffset(b);
        long end = ends.get(b);
        // A bucket without rows gets no snapshot: nothing to read there.
        boolean covered =
            end == 0
                || (id.isPresent() && offset.isPresent() && offset.getAsLong() == end);
        ids[b] = id.isPresent() ? id.getAsLong() : -1;
        all &= covered;
      }
      if (all) {
        return ids;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("no snapshot covering every bucket's log within 60 s");
  }

  /** Every row of the buckets' snapshots, by Fluss's KvSnapshotBatchScanner. */
  private static Map<Integer, String> readSnapshots(Table table, long tableId, long[] ids)
      throws Exception {
    Map<Integer, String> rows = new TreeMap<>();
    for (int b = 0; b < BUCKETS; b++) {
      if (ids[b] < 0) {
        continue;
      }
      TableBucket tb = new TableBucket(tableId, b);
      try (BatchScanner scanner = table.newScan().createBatchScanner(tb, ids[b])) {
        CloseableIterator<InternalRow> batch;
        while ((batch = scanner.pollBatch(Duration.ofSeconds(10))) != null) {
          while (batch.hasNext()) {
            InternalRow row = batch.next();
            String v = row.isNullAt(1) ? null : row.getString(1).toString();
            if (rows.put(row.getInt(0), v) != null) {
              throw new IllegalStateException("key " + row.getInt(0) + " read twice");
            }
          }
        }
      }
    }
    return rows;
  }

  private static Map<Integer, String> rows(Object... kv) {
    Map<Integer, String> m = new TreeMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((Integer) kv[i], (String) kv[i + 1]);
    }
    return m;
  }

  private static GenericRow row(int k, String v) {
    return GenericRow.of(k, v == null ? null : BinaryString.fromString(v));
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: FlussKvSnapshotProbe <bootstrap>");
      System.exit(2);
    }
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", args[0]);
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      Admin admin = conn.getAdmin();
      admin.createDatabase("snap_db", DatabaseDescriptor.EMPTY, true).get();
      TablePath path = TablePath.of("snap_db", "pk_" + System.currentTimeMillis());
      Schema schema =
          Schema.newBuilder()
              .column("id", DataTypes.INT())
              .column("v", DataTypes.STRING())
              .primaryKey("id")
              .build();
      admin
          .createTable(
              path, TableDescriptor.builder().schema(schema).distributedBy(BUCKETS).build(), false)
          .get();
      long tableId = admin.getTableInfo(path).get().getTableId();
      try (Table table = conn.getTable(path)) {
        UpsertWriter w = table.newUpsert().createWriter();
        for (int k = 1; k <= 8; k++) {
          w.upsert(row(k, "v" + k));
        }
        w.upsert(row(2, "v2-updated"));
        w.upsert(row(5, null));
        w.delete(row(3, null));
        w.delete(row(7, null)).get();
        w.flush();
        long[] first = awaitSnapshots(admin, path);
        Map<Integer, String> want =
            rows(1, "v1", 2, "v2-updated", 4, "v4", 5, null, 6, "v6", 8, "v8");
        Map<Integer, String> got = readSnapshots(table, tableId, first);
        check(
            "Fluss's batch scanner reads every bucket's snapshot: updates applied, deleted keys"
                + " absent",
            want.equals(got),
            "want " + want + ", got " + got);

        w.upsert(row(9, "v9"));
        w.upsert(row(1, "v1-again"));
        w.delete(row(4, null)).get();
        w.flush();
        long[] second = awaitSnapshots(admin, path);
        want = rows(1, "v1-again", 2, "v2-updated", 5, null, 6, "v6", 8, "v8", 9, "v9");
        got = readSnapshots(table, tableId, second);
        check(
            "a later snapshot has the later changes",
            want.equals(got),
            "want " + want + ", got " + got);
      }
    }
    System.exit(failures == 0 ? 0 : 1);
  }
}
