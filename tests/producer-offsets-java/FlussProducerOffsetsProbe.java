// Fluss's own Java client (fluss-client 0.9.1 from Maven Central) using its producer-offset
// API (Admin.registerProducerOffsets / getProducerOffsets / deleteProducerOffsets, the calls
// Fluss's Flink sink makes for aggregation-engine tables) against `riverlet serve`: the
// driver of tests/producer-offsets-java/run.sh.
//
//   java -cp <fluss-client classpath> FlussProducerOffsetsProbe.java <bootstrap>
//
// Prints one "ok <check>" or "FAIL <check>: <why>" line per check and exits 1 on any failure.
// The expectations are Fluss 0.9.1's behaviour (run.sh --fluss checks them against a cluster).

import java.util.HashMap;
import java.util.Map;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.ProducerOffsetsResult;
import org.apache.fluss.client.admin.RegisterResult;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.exception.InvalidProducerIdException;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.types.DataTypes;

public final class FlussProducerOffsetsProbe {
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

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: FlussProducerOffsetsProbe <bootstrap>");
      System.exit(2);
    }
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", args[0]);
    String job = "probe-job-" + System.currentTimeMillis();
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      Admin admin = conn.getAdmin();
      admin.createDatabase("po_db", DatabaseDescriptor.EMPTY, true).get();
      TablePath path = TablePath.of("po_db", "agg_" + System.currentTimeMillis());
      TableDescriptor d =
          TableDescriptor.builder()
              .schema(Schema.newBuilder().column("id", DataTypes.INT()).build())
              .distributedBy(2)
              .build();
      admin.createTable(path, d, false).get();
      long tableId = admin.getTableInfo(path).get().getTableId();

      check(
          "an unknown producer has no offsets",
          admin.getProducerOffsets(job).get() == null,
          "got offsets");
      Map<TableBucket, Long> offsets = new HashMap<>();
      offsets.put(new TableBucket(tableId, 0), 10L);
      offsets.put(new TableBucket(tableId, 1), 20L);
      long before = System.currentTimeMillis();
      RegisterResult r = admin.registerProducerOffsets(job, offsets).get();
      check("register creates", r == RegisterResult.CREATED, r);
      Map<TableBucket, Long> other = new HashMap<>();
      other.put(new TableBucket(tableId, 0), 99L);
      r = admin.registerProducerOffsets(job, other).get();
      check("registering again keeps the first", r == RegisterResult.ALREADY_EXISTS, r);

      ProducerOffsetsResult got = admin.getProducerOffsets(job).get();
      check("get finds the producer", got != null && job.equals(got.getProducerId()), got);
      if (got != null) {
        Map<Long, Map<TableBucket, Long>> expected = new HashMap<>();
        expected.put(tableId, offsets);
        check("get answers the first offsets", expected.equals(got.getTableOffsets()), got);
        long ttl = 24L * 3600 * 1000;
        check(
            "the registration expires after the default TTL of 24 h",
            got.getExpirationTime() >= before + ttl
                && got.getExpirationTime() <= System.currentTimeMillis() + ttl,
            got.getExpirationTime());
      }

      admin.deleteProducerOffsets(job).get();
      check("delete removes them", admin.getProducerOffsets(job).get() == null, "still there");
      admin.deleteProducerOffsets(job).get();
      check("deleting again is fine", true, "");
      r = admin.registerProducerOffsets(job, other).get();
      check("a deleted producer registers anew", r == RegisterResult.CREATED, r);
      admin.deleteProducerOffsets(job).get();

      try {
        admin.registerProducerOffsets("bad/job", offsets).get();
        check("an invalid producer id is refused", false, "no exception");
      } catch (Exception e) {
        Throwable c = rootOf(e);
        check(
            "an invalid producer id is refused",
            c instanceof InvalidProducerIdException
                && String.valueOf(c.getMessage()).contains("bad/job"),
            c);
      }
      try {
        admin.getProducerOffsets("").get();
        check("an empty producer id is refused", false, "no exception");
      } catch (Exception e) {
        Throwable c = rootOf(e);
        check("an empty producer id is refused", c instanceof InvalidProducerIdException, c);
      }
      admin.dropTable(path, false).get();
    }
    System.out.println(failures == 0 ? "all checks passed" : failures + " check(s) failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
