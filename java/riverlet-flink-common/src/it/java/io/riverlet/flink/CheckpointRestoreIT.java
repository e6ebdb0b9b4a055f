package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.riverlet.Connection;
import io.riverlet.Riverlet;
import io.riverlet.Table;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.junit.jupiter.api.Test;

/**
 * A streaming copy job (Fluss log table to Fluss log table) is stopped with a savepoint in the
 * middle of its input, more rows are written, and the job is restored: the target holds every
 * source row exactly once, so the source's checkpointed offsets lose and repeat nothing and the
 * sink flushes everything before the savepoint.
 */
class CheckpointRestoreIT extends FlinkTestBase {

    private static StreamTableEnvironment checkpointedEnv(String restorePath) {
        StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment();
        see.setParallelism(2);
        see.enableCheckpointing(500);
        StreamTableEnvironment env = StreamTableEnvironment.create(
                see, EnvironmentSettings.newInstance().inStreamingMode().build());
        if (restorePath != null) {
            env.getConfig().getConfiguration().setString("execution.state-recovery.path", restorePath);
        }
        env.executeSql("CREATE CATALOG `fluss_catalog` WITH ('type' = 'fluss', 'bootstrap.servers' = '"
                + bootstrap() + "')");
        env.executeSql("USE CATALOG `fluss_catalog`");
        return env;
    }

    private static void insertRange(TableEnvironment batch, int from, int to) {
        StringBuilder sql = new StringBuilder("INSERT INTO ckpt_db.src VALUES ");
        for (int i = from; i < to; i++) {
            sql.append(i == from ? "" : ", ").append("(").append(i).append(", 'v").append(i).append("')");
        }
        run(batch, sql.toString());
    }

    private static long count(String table) {
        try (Connection c = Riverlet.connect(bootstrap(), java.util.Collections.emptyMap());
                Table t = c.table(table)) {
            return t.count();
        }
    }

    @Test
    void stopAndRestoreLosesAndRepeatsNothing() throws Exception {
        TableEnvironment batch = batchEnv();
        run(batch, "CREATE DATABASE IF NOT EXISTS ckpt_db");
        run(batch, "CREATE TABLE ckpt_db.src (id INT, v STRING) WITH ('bucket.num' = '3')");
        run(batch, "CREATE TABLE ckpt_db.dst (id INT, v STRING) WITH ('bucket.num' = '2')");
        for (int chunk = 0; chunk < 10; chunk++) {
            insertRange(batch, chunk * 100, chunk * 100 + 100);
        }
        String copy = "INSERT INTO ckpt_db.dst SELECT * FROM ckpt_db.src"
                + " /*+ OPTIONS('scan.startup.mode' = 'earliest') */";

        TableResult first = checkpointedEnv(null).executeSql(copy);
        JobClient job = first.getJobClient().orElseThrow();
        waitUntil("the copy job to copy some rows", () -> count("ckpt_db.dst") > 0);
        Path savepoints = Files.createTempDirectory("riverlet-savepoints");
        String savepoint = job.stopWithSavepoint(false, savepoints.toUri().toString(),
                SavepointFormatType.CANONICAL).get(120, TimeUnit.SECONDS);

        // Rows written while the job is down, then the job restored from its savepoint.
        insertRange(batch, 1000, 1500);
        TableResult second = checkpointedEnv(savepoint).executeSql(copy);
        waitUntil("the restored job to copy every row", () -> count("ckpt_db.dst") >= 1500);
        List<String> copied = rows(batch, "SELECT id FROM ckpt_db.dst");
        second.getJobClient().orElseThrow().cancel().get(60, TimeUnit.SECONDS);

        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            expected.add("+I[" + i + "]");
        }
        assertEquals(sorted(expected), copied);
    }
}
