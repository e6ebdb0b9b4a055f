package io.riverlet.engines;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Plans a SQL script and submits its INSERT statements, as one job, to a running Flink session
 * cluster through its REST endpoint ({@code execution.target: remote}); the connector JAR given
 * on the command line goes with the job ({@code pipeline.jars}) and must also be on this JVM's
 * class path (the catalog and table factories are used while planning).
 *
 * <p>Usage: {@code SqlSubmit SCRIPT [key=value]...}. A {@code key=value} whose key starts with
 * {@code var.} replaces {@code ${NAME}} in the script (e.g. {@code var.BOOTSTRAP=host:port});
 * every other one is a Flink option of the job (rest.address, rest.port, pipeline.jars,
 * execution.checkpointing.interval, ...). Statements end with a line ending in ';'. Every
 * statement but INSERT runs here as it comes; the INSERTs form one statement set, submitted last.
 * Prints {@code JOB_ID=<id>} on stdout and exits without waiting for the job (a script without
 * INSERT only runs its statements).
 */
public final class SqlSubmit {
  private SqlSubmit() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: SqlSubmit SCRIPT [key=value]...");
      System.exit(2);
    }
    String script = Files.readString(Path.of(args[0]), StandardCharsets.UTF_8);
    Configuration conf = new Configuration();
    Map<String, String> vars = new TreeMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("not key=value: " + args[i]);
      }
      String key = args[i].substring(0, eq);
      String value = args[i].substring(eq + 1);
      if (key.startsWith("var.")) {
        vars.put(key.substring(4), value);
      } else {
        conf.setString(key, value);
      }
    }
    for (Map.Entry<String, String> v : vars.entrySet()) {
      script = script.replace("${" + v.getKey() + "}", v.getValue());
    }
    if (script.contains("${")) {
      throw new IllegalArgumentException("a ${...} in the script has no var.NAME=value");
    }

    TableEnvironment tEnv =
        TableEnvironment.create(
            EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
    StatementSet inserts = tEnv.createStatementSet();
    int count = 0;
    for (String statement : statements(script)) {
      if (statement.regionMatches(true, 0, "INSERT", 0, 6)) {
        inserts.addInsertSql(statement);
        count++;
      } else {
        System.err.println("SqlSubmit: " + firstLine(statement));
        tEnv.executeSql(statement).await();
      }
    }
    if (count == 0) {
      System.err.println("SqlSubmit: no INSERT statement, nothing submitted");
      System.exit(0);
    }
    TableResult result = inserts.execute();
    String jobId =
        result
            .getJobClient()
            .orElseThrow(() -> new IllegalStateException("the statement set gave no job"))
            .getJobID()
            .toString();
    System.err.println("SqlSubmit: submitted " + count + " INSERT statements as job " + jobId);
    System.out.println("JOB_ID=" + jobId);
    System.out.flush();
    // The job runs on the cluster; nothing of it lives in this JVM.
    System.exit(0);
  }

  private static List<String> statements(String script) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : script.split("\n", -1)) {
      String trimmed = line.strip();
      if (trimmed.startsWith("--") || (trimmed.isEmpty() && current.length() == 0)) {
        continue;
      }
      current.append(line).append('\n');
      if (trimmed.endsWith(";")) {
        String s = current.toString().strip();
        out.add(s.substring(0, s.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) {
      out.add(current.toString().strip());
    }
    return out;
  }

  private static String firstLine(String statement) {
    int nl = statement.indexOf('\n');
    return nl < 0 ? statement : statement.substring(0, nl) + " ...";
  }
}
