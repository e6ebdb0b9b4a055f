import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeMap;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.metadata.LakeSnapshot;
import org.apache.fluss.config.ConfigOptions;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.utils.ExceptionUtils;

/**
 * What Apache Fluss's own client (fluss-client 0.9.1, Admin) reports of the lake snapshots of the
 * tables of tests/fluss-cluster/run-fluss-tiered-lake.sh: for each table its latest tiered lake
 * snapshot ({@code getLatestLakeSnapshot}) and the readable one union reads use
 * ({@code getReadableLakeSnapshot}), with their per-bucket offsets, or the exception's class
 * when there is none. lake_check.py reads the output to know which lake state a union read must
 * take (a Paimon deletion-vector table's readable snapshot can lag behind, or not exist).
 *
 * <p>Output, one line per table and kind: {@code NAME latest|readable SNAPSHOT_ID
 * {bucket=offset, ...}} or {@code NAME latest|readable NONE ExceptionClass}.
 *
 * <p>Usage: {@code java -cp FLUSS_CLIENT_CP FlussLakeSnapshots.java BOOTSTRAP DB OUT TABLE...}
 */
public final class FlussLakeSnapshots {
  private FlussLakeSnapshots() {}

  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    conf.set(ConfigOptions.BOOTSTRAP_SERVERS, java.util.List.of(args[0]));
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Admin admin = conn.getAdmin();
        PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(args[2])))) {
      for (int i = 3; i < args.length; i++) {
        TablePath path = TablePath.of(args[1], args[i]);
        for (String kind : new String[] {"latest", "readable"}) {
          try {
            LakeSnapshot s = "latest".equals(kind)
                ? admin.getLatestLakeSnapshot(path).get()
                : admin.getReadableLakeSnapshot(path).get();
            TreeMap<Integer, Long> offsets = new TreeMap<>();
            s.getTableBucketsOffset().forEach((b, o) -> offsets.put(b.getBucket(), o));
            out.println(args[i] + " " + kind + " " + s.getSnapshotId() + " " + offsets);
          } catch (Exception e) {
            Throwable cause = ExceptionUtils.stripExecutionException(e);
            out.println(args[i] + " " + kind + " NONE " + cause.getClass().getSimpleName());
          }
        }
      }
    }
  }
}
