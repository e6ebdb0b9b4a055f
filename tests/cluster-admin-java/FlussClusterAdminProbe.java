// Fluss's own Java client (fluss-client 0.9.1 from Maven Central) using its cluster-config API
// (Admin.describeClusterConfigs / alterClusterConfigs) and its KV snapshot leases
// (Admin.createKvSnapshotLease: acquireSnapshots, releaseSnapshots, dropLease) against
// `riverlet serve --set log.segment.file-size=1mb`: the driver of tests/cluster-admin-java/run.sh.
//
//   java -cp <fluss-client classpath> FlussClusterAdminProbe.java <bootstrap>
//
// Prints one "ok <check>" or "FAIL <check>: <why>" line per check and exits 1 on any failure.

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.KvSnapshotLease;
import org.apache.fluss.client.metadata.AcquireKvSnapshotLeaseResult;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.config.cluster.AlterConfig;
import org.apache.fluss.config.cluster.AlterConfigOpType;
import org.apache.fluss.config.cluster.ConfigEntry;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

public final class FlussClusterAdminProbe {
  private static int failures = 0;

  private static void check(String name, boolean ok, Object why) {
    if (ok) {
      System.out.println("ok " + name);
    } else {
      failures++;
      System.out.println("FAIL " + name + ": " + why);
    }
  }

  private static Throwable rootOf(Throwable t) {
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  private static ConfigEntry entry(Admin admin, String key) throws Exception {
    for (ConfigEntry e : admin.describeClusterConfigs().get()) {
      if (e.key().equals(key)) {
        return e;
      }
    }
    return null;
  }

  private static void alter(Admin admin, String key, String value, AlterConfigOpType op)
      throws Exception {
    Collection<AlterConfig> c = Collections.singletonList(new AlterConfig(key, value, op));
    admin.alterClusterConfigs(c).get();
  }

  /** Writes a new value and waits (bounded) until bucket 0 has a snapshot newer than `after`. */
  private static long nextSnapshot(Admin admin, UpsertWriter w, TablePath path, long after, int v)
      throws Exception {
    w.upsert(GenericRow.of(1, BinaryString.fromString("v" + v))).get();
    w.flush();
    for (int i = 0; i < 600; i++) {
      OptionalLong id = admin.getLatestKvSnapshots(path).get().getSnapshotId(0);
      if (id.isPresent() && id.getAsLong() > after) {
        return id.getAsLong();
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("no snapshot after " + after + " within 30 s");
  }

  private static boolean metadataAnswered(Admin admin, TableBucket tb, long id) {
    try {
      admin.getKvSnapshotMetadata(tb, id).get();
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: FlussClusterAdminProbe <bootstrap>");
      System.exit(2);
    }
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", args[0]);
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      Admin admin = conn.getAdmin();

      // ---- dynamic server options
      ConfigEntry seg = entry(admin, "log.segment.file-size");
      check(
          "a start-up option is described as INITIAL_SERVER_CONFIG",
          seg != null
              && "1mb".equals(seg.value())
              && seg.source() == ConfigEntry.ConfigSource.INITIAL_SERVER_CONFIG,
          seg);
      alter(admin, "kv.snapshot.interval", "100ms", AlterConfigOpType.SET);
      ConfigEntry interval = entry(admin, "kv.snapshot.interval");
      check(
          "a dynamic option set is described as DYNAMIC_SERVER_CONFIG",
          interval != null
              && "100ms".equals(interval.value())
              && interval.source() == ConfigEntry.ConfigSource.DYNAMIC_SERVER_CONFIG,
          interval);
      try {
        alter(admin, "log.segment.file-size", "2mb", AlterConfigOpType.SET);
        check("a start-up option cannot be altered", false, "accepted");
      } catch (Exception e) {
        String msg = String.valueOf(rootOf(e).getMessage());
        check(
            "a start-up option cannot be altered, the error names it",
            msg.contains("log.segment.file-size")
                && msg.contains("not allowed to be changed dynamically"),
            msg);
      }

      // ---- KV snapshot leases (snapshots every 100 ms now)
      admin.createDatabase("lease_db", DatabaseDescriptor.EMPTY, true).get();
      TablePath path = TablePath.of("lease_db", "pk_" + System.currentTimeMillis());
      Schema schema =
          Schema.newBuilder()
              .column("id", DataTypes.INT())
              .column("v", DataTypes.STRING())
              .primaryKey("id")
              .build();
      admin
          .createTable(path, TableDescriptor.builder().schema(schema).distributedBy(1).build(), false)
          .get();
      long tableId = admin.getTableInfo(path).get().getTableId();
      TableBucket tb = new TableBucket(tableId, 0);
      try (Table table = conn.getTable(path)) {
        UpsertWriter w = table.newUpsert().createWriter();
        long s0 = nextSnapshot(admin, w, path, -1, 0);
        KvSnapshotLease lease = admin.createKvSnapshotLease("probe-lease", 600_000);
        Map<TableBucket, Long> ask = new HashMap<>();
        ask.put(tb, s0);
        AcquireKvSnapshotLeaseResult r = lease.acquireSnapshots(ask).get();
        check(
            "an existing snapshot is leased",
            r.getUnavailableSnapshots().isEmpty(),
            r.getUnavailableSnapshots());
        long s1 = nextSnapshot(admin, w, path, s0, 1);
        long s2 = nextSnapshot(admin, w, path, s1, 2);
        long s3 = nextSnapshot(admin, w, path, s2, 3);
        check(
            "the leased snapshot outlives the retention of the latest two",
            metadataAnswered(admin, tb, s0) && !metadataAnswered(admin, tb, s1),
            "s0=" + s0 + " s1=" + s1 + " s3=" + s3);
        Map<TableBucket, Long> missing = new HashMap<>();
        missing.put(tb, s3 + 1000);
        r = lease.acquireSnapshots(missing).get();
        check(
            "a snapshot the bucket does not have is unavailable",
            Long.valueOf(s3 + 1000).equals(r.getUnavailableSnapshots().get(tb)),
            r.getUnavailableSnapshots());
        lease.releaseSnapshots(Collections.singleton(tb)).get();
        long s4 = nextSnapshot(admin, w, path, s3, 4);
        check(
            "a released snapshot goes with the next snapshot",
            !metadataAnswered(admin, tb, s0) && metadataAnswered(admin, tb, s4),
            "s0=" + s0 + " s4=" + s4);
        ask.put(tb, s4);
        lease.acquireSnapshots(ask).get();
        lease.dropLease().get();
        long s6 = nextSnapshot(admin, w, path, nextSnapshot(admin, w, path, s4, 5), 6);
        check(
            "a dropped lease keeps nothing",
            !metadataAnswered(admin, tb, s4) && metadataAnswered(admin, tb, s6),
            "s4=" + s4 + " s6=" + s6);
      }
      alter(admin, "kv.snapshot.interval", null, AlterConfigOpType.DELETE);
      check(
          "a deleted dynamic option is no longer described",
          entry(admin, "kv.snapshot.interval") == null,
          entry(admin, "kv.snapshot.interval"));
    }
    System.exit(failures == 0 ? 0 : 1);
  }
}
