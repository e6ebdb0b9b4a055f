package io.riverlet.compare;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs a statement file through whichever Flink connector for {@code 'fluss'} is on the class
 * path, against one server, in one database, and writes each statement's result: its rows
 * (sorted) or {@code ERROR} with the root cause. compare.sh runs it once with Fluss's connector
 * and once with Riverlet's, then diffs the two outputs.
 *
 * <p>Statement file: blocks headed by a directive line, {@code -- exec batch}, {@code -- exec
 * stream} (run to completion), {@code -- query batch} (every row) or {@code -- query stream N}
 * (the first N rows, then the job is cancelled; a query is cancelled after {@value
 * #WAIT_SECONDS} s).
 *
 * <p>Usage: {@code StatementRunner BOOTSTRAP DATABASE STATEMENTS OUT}. With {@code
 * -Drunner.sharedCluster=true} every job runs on one MiniCluster started up front (REST on a free
 * port, so two runners can run side by side) instead of a local cluster started per job, which
 * dominates the time of files with many short jobs.
 */
public final class StatementRunner {
  private static final long WAIT_SECONDS = 60;
  private static final ScheduledExecutorService WATCHDOG =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "watchdog");
        t.setDaemon(true);
        return t;
      });

  /** The shared MiniCluster's REST port, or 0: a local cluster per job. */
  private static int restPort;

  private StatementRunner() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: StatementRunner BOOTSTRAP DATABASE STATEMENTS OUT");
      System.exit(2);
    }
    String bootstrap = args[0];
    String db = args[1];
    List<String[]> blocks = parse(Files.readAllLines(Path.of(args[2]), StandardCharsets.UTF_8));
    if (Boolean.getBoolean("runner.sharedCluster")) {
      Configuration conf = new Configuration();
      conf.set(RestOptions.BIND_PORT, "0");
      MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
          .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(4).build());
      cluster.start();
      restPort = cluster.getRestAddress().get().getPort();
    }
    TableEnvironment batch = env(true, bootstrap, db);
    TableEnvironment stream = env(false, bootstrap, db);
    // Statements run on this thread: the planner keeps per-thread state (Calcite's metadata
    // handlers) from the thread that created the environment.
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(args[3])))) {
      for (String[] b : blocks) {
        String[] d = b[0].trim().split("\\s+");
        String sql = b[1].trim();
        TableEnvironment env = d[1].equals("batch") ? batch : stream;
        out.println("### " + b[0].trim() + ": " + sql.replaceAll("\\s+", " "));
        List<String> result;
        try {
          result = d[0].equals("exec") ? exec(env, sql) : query(env, sql, d);
        } catch (Exception e) {
          System.err.println("statement failed: " + sql);
          e.printStackTrace();
          result = List.of(error(e));
        }
        result.forEach(out::println);
        out.flush();
      }
    }
    WATCHDOG.shutdownNow();
    System.exit(0);
  }

  private static List<String[]> parse(List<String> lines) {
    List<String[]> blocks = new ArrayList<>();
    String directive = null;
    StringBuilder sql = new StringBuilder();
    for (String line : lines) {
      if (line.startsWith("-- exec") || line.startsWith("-- query")) {
        if (directive != null) {
          blocks.add(new String[] {directive, sql.toString()});
        }
        directive = line.substring(3);
        sql.setLength(0);
      } else if (!line.startsWith("--")) {
        sql.append(line).append('\n');
      }
    }
    if (directive != null) {
      blocks.add(new String[] {directive, sql.toString()});
    }
    return blocks;
  }

  private static TableEnvironment env(boolean batch, String bootstrap, String db) {
    StreamExecutionEnvironment see = restPort > 0
        ? StreamExecutionEnvironment.createRemoteEnvironment("127.0.0.1", restPort)
        : StreamExecutionEnvironment.getExecutionEnvironment();
    see.setParallelism(1);
    EnvironmentSettings settings =
        batch
            ? EnvironmentSettings.newInstance().inBatchMode().build()
            : EnvironmentSettings.newInstance().inStreamingMode().build();
    StreamTableEnvironment env = StreamTableEnvironment.create(see, settings);
    env.executeSql("CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '"
        + bootstrap + "')");
    env.executeSql("USE CATALOG fluss_catalog");
    env.executeSql("CREATE DATABASE IF NOT EXISTS " + db);
    env.executeSql("USE " + db);
    return env;
  }

  private static List<String> exec(TableEnvironment env, String sql) throws Exception {
    TableResult r = env.executeSql(sql);
    r.await(WAIT_SECONDS, TimeUnit.SECONDS);
    return List.of("OK");
  }

  private static List<String> query(TableEnvironment env, String sql, String[] d)
      throws Exception {
    int limit = d.length > 2 ? Integer.parseInt(d[2]) : Integer.MAX_VALUE;
    List<String> rows = new ArrayList<>();
    CloseableIterator<Row> it = env.executeSql(sql).collect();
    // A streaming query that never delivers its N rows is cancelled by closing its iterator.
    ScheduledFuture<?> stop = WATCHDOG.schedule(() -> {
      try {
        it.close();
      } catch (Exception e) {
        System.err.println("closing a query: " + e);
      }
    }, WAIT_SECONDS, TimeUnit.SECONDS);
    try {
      while (rows.size() < limit && it.hasNext()) {
        rows.add(it.next().toString());
      }
    } catch (RuntimeException e) {
      if (!stop.isDone()) {
        throw e;
      }
    } finally {
      stop.cancel(false);
      it.close();
    }
    Collections.sort(rows);
    if (rows.size() < limit && limit != Integer.MAX_VALUE) {
      rows.add("(ended after " + rows.size() + " of " + limit + " rows)");
    }
    return rows;
  }

  private static String error(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String msg = String.valueOf(root.getMessage()).split("\n")[0];
    if (msg.length() > 300) {
      msg = msg.substring(0, 300) + "...";
    }
    return "ERROR " + root.getClass().getSimpleName() + ": " + msg;
  }
}
