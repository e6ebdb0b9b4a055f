// The Flink side of benches/flink/run.py (issue 16's benchmark, not a test): runs the same three
// jobs with whichever Flink 1.20 connector for 'fluss' is on the class path (Fluss's own
// fluss-flink-1.20 or Riverlet's riverlet-flink-1.20 JAR), in a local MiniCluster, against one
// server, and prints one JSON line per measured job:
//
//   upsert  INSERT INTO a 4-bucket primary-key table N rows from a bounded datagen source
//           (the rows are a function of a sequence id, so both connectors write the same rows);
//   append  the same N rows into a 4-bucket log table (the data of the read below);
//   read    a read of the whole log table from `scan.startup.mode = 'earliest'`, timed until
//           the N-th row reached the sink. Streaming mode for both: Fluss 0.9.1 refuses a batch
//           SELECT of a whole table, so a bounded read there has to stop at the row count;
//   lookup  M probe rows (random keys in 0..N-1, bounded datagen) joined FOR SYSTEM_TIME AS OF
//           the primary-key table (the connector's default lookup: asynchronous, no cache),
//           into a blackhole sink.
//
//   java -cp <classes>:<connector + Flink> FlinkBench <bootstrap> <database> <N> <M> <runs> [<K>]
//
// With K (> 0), run 0 (the warm-up, which run.py leaves out of the medians) runs the same jobs
// with K rows and K/10 probe rows (keys in 0..K-1) instead of N and M; later runs use N and M.
// Every job runs with parallelism 2 (the machine's cores). Wall time from submitting the job
// to its end (or, for the read, to its N-th row), so job start-up is included for both.

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

public final class FlinkBench {
  static final AtomicLong SEEN = new AtomicLong();
  // datagen throttles to 10,000 rows/s unless told otherwise.
  private static final long UNTHROTTLED = 1_000_000_000L;

  private FlinkBench() {}

  /** Counts the rows of the read in this JVM (the MiniCluster runs in it). */
  public static final class CountingSink implements SinkFunction<Row> {
    private static final long serialVersionUID = 1L;

    @Override
    public void invoke(Row value, Context context) {
      SEEN.incrementAndGet();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 5 && args.length != 6) {
      System.err.println("usage: FlinkBench <bootstrap> <database> <N> <M> <runs> [<K>]");
      System.exit(2);
    }
    String bootstrap = args[0];
    String db = args[1];
    long fullN = Long.parseLong(args[2]);
    long fullM = Long.parseLong(args[3]);
    int runs = Integer.parseInt(args[4]);
    long warmupRows = args.length == 6 ? Long.parseLong(args[5]) : 0;

    StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment();
    see.setParallelism(2);
    StreamTableEnvironment env =
        StreamTableEnvironment.create(see, EnvironmentSettings.newInstance().inStreamingMode().build());
    env.executeSql("CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '"
        + bootstrap + "')");
    env.executeSql("CREATE DATABASE IF NOT EXISTS fluss_catalog." + db);
    env.executeSql("CREATE TEMPORARY TABLE sink_blackhole (k BIGINT, name STRING, amount DOUBLE) "
        + "WITH ('connector' = 'blackhole')");
    String rows =
        "SELECT seq AS id, CAST(MOD(seq * 7919, 100000) AS INT) AS user_id, "
            + "CONCAT('user-', CAST(MOD(seq, 1000) AS STRING)) AS name, "
            + "CAST(MOD(seq, 10000) AS DOUBLE) * 0.25 AS amount, "
            + "TO_TIMESTAMP_LTZ(1767225600000 + seq, 3) AS ts FROM gen";
    String columns = "(id BIGINT, user_id INT, name STRING, amount DOUBLE, ts TIMESTAMP_LTZ(3)";

    for (int run = 0; run < runs; run++) {
      boolean smallWarmup = run == 0 && warmupRows > 0;
      long n = smallWarmup ? warmupRows : fullN;
      long m = smallWarmup ? Math.max(1, warmupRows / 10) : fullM;
      createGenerators(env, n, m);
      String pk = "fluss_catalog." + db + ".pk_" + run;
      String logTable = "fluss_catalog." + db + ".log_" + run;
      env.executeSql("CREATE TABLE " + pk + " " + columns
          + ", PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')");
      env.executeSql("CREATE TABLE " + logTable + " " + columns + ") WITH ('bucket.num' = '4')");

      long t0 = System.nanoTime();
      env.executeSql("INSERT INTO " + pk + " " + rows).await();
      report("upsert", run, n, t0);

      t0 = System.nanoTime();
      env.executeSql("INSERT INTO " + logTable + " " + rows).await();
      report("append", run, n, t0);

      SEEN.set(0);
      Table read = env.sqlQuery("SELECT * FROM " + logTable
          + " /*+ OPTIONS('scan.startup.mode' = 'earliest') */");
      t0 = System.nanoTime();
      env.toDataStream(read).addSink(new CountingSink());
      JobClient job = see.executeAsync("read " + logTable);
      // Completes when the job ends by itself (a failure): the per-job MiniCluster shuts down
      // with it, so there is then nothing left to cancel and no point in waiting for rows.
      CompletableFuture<JobExecutionResult> ended = job.getJobExecutionResult();
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      while (SEEN.get() < n && !ended.isDone() && System.nanoTime() < deadline) {
        Thread.sleep(2);
      }
      long got = SEEN.get();
      report("read", run, got, t0);
      if (!ended.isDone()) {
        try {
          job.cancel().get();
        } catch (Exception e) {
          if (!ended.isDone()) {
            throw e;
          }
        }
      }
      if (got != n) {
        Throwable cause = null;
        if (ended.isDone()) {
          try {
            ended.get();
          } catch (ExecutionException e) {
            cause = e.getCause();
          }
        }
        throw new IllegalStateException("read " + got + " rows of " + logTable + ", expected " + n,
            cause);
      }

      t0 = System.nanoTime();
      env.executeSql("INSERT INTO sink_blackhole SELECT p.k, d.name, d.amount FROM probe AS p "
          + "JOIN " + pk + " FOR SYSTEM_TIME AS OF p.pt AS d ON p.k = d.id").await();
      report("lookup", run, m, t0);
    }
    System.exit(0);
  }

  /**
   * The generators (in Flink's default in-memory catalog; the Fluss tables are in fluss_catalog):
   * `gen`, the sequence 0..n-1 the upsert and append write, and `probe`, m random keys in 0..n-1.
   */
  private static void createGenerators(StreamTableEnvironment env, long n, long m) {
    env.executeSql("DROP TEMPORARY TABLE IF EXISTS gen");
    env.executeSql("DROP TEMPORARY TABLE IF EXISTS probe");
    env.executeSql("CREATE TEMPORARY TABLE gen (seq BIGINT) WITH ('connector' = 'datagen', "
        + "'number-of-rows' = '" + n + "', 'rows-per-second' = '" + UNTHROTTLED + "', "
        + "'fields.seq.kind' = 'sequence', "
        + "'fields.seq.start' = '0', 'fields.seq.end' = '" + (n - 1) + "')");
    env.executeSql("CREATE TEMPORARY TABLE probe (k BIGINT, pt AS PROCTIME()) WITH ("
        + "'connector' = 'datagen', 'number-of-rows' = '" + m + "', 'rows-per-second' = '"
        + UNTHROTTLED + "', 'fields.k.kind' = 'random', 'fields.k.min' = '0', "
        + "'fields.k.max' = '" + (n - 1) + "')");
  }

  private static void report(String job, int run, long rows, long t0) {
    System.out.printf("{\"job\": \"%s\", \"run\": %d, \"rows\": %d, \"seconds\": %.6f}%n",
        job, run, rows, (System.nanoTime() - t0) / 1e9);
    System.out.flush();
  }
}
