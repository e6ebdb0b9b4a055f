package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.riverlet.Connection;
import io.riverlet.LocalServer;
import io.riverlet.Riverlet;
import io.riverlet.Table;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.junit.jupiter.api.Test;

/**
 * A cancelled sink does not wait for its unacknowledged writes: a streaming job writes to a
 * server that then goes away, and its cancel ends the job at once. (Flushing them in
 * {@code close()} would hold the cancel for the writer's delivery timeout, 120 s, and in a real
 * cluster Flink's task.cancellation.timeout would then kill the TaskManager.) The server is one
 * of the test's own, in this JVM, so the test can stop it; against an external cluster too.
 */
class SinkCancelIT extends FlinkTestBase {

    private static long count(String bootstrap, String table) {
        try (Connection c = Riverlet.connect(bootstrap, Map.of()); Table t = c.table(table)) {
            return t.count();
        }
    }

    @Test
    void cancelDoesNotWaitForWritesToAServerThatIsGone() throws Exception {
        Path dir = Files.createTempDirectory("riverlet-sink-cancel");
        LocalServer own = LocalServer.start(dir, 0);
        String bootstrap = own.bootstrapServers();
        try {
            StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment();
            see.setParallelism(1);
            StreamTableEnvironment env = forTests(StreamTableEnvironment.create(
                    see, EnvironmentSettings.newInstance().inStreamingMode().build()));
            env.executeSql("CREATE CATALOG `cancel_catalog` WITH ('type' = 'fluss',"
                    + " 'bootstrap.servers' = '" + bootstrap + "')");
            env.executeSql("CREATE DATABASE `cancel_catalog`.`cancel_db`");
            env.executeSql("CREATE TABLE `cancel_catalog`.`cancel_db`.`t` (id BIGINT, v STRING)"
                    + " WITH ('bucket.num' = '1')");
            // Unbounded and fast: the sink always has a batch on its way.
            env.executeSql("CREATE TEMPORARY TABLE gen (id BIGINT, v STRING) WITH ("
                    + " 'connector' = 'datagen', 'rows-per-second' = '20000')");
            JobClient job = env.executeSql("INSERT INTO `cancel_catalog`.`cancel_db`.`t`"
                    + " SELECT id, v FROM gen").getJobClient().orElseThrow();
            waitUntil("the job to write rows", () -> count(bootstrap, "cancel_db.t") > 0);

            own.close();
            job.cancel().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            // A liveness bound, not a timing assertion: a sink that flushed on cancel would
            // keep the job CANCELLING until its writes time out (120 s).
            long deadline = System.nanoTime() + JOB_END_WAIT.toNanos();
            JobStatus status = job.getJobStatus().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            while (!status.isGloballyTerminalState() && System.nanoTime() < deadline) {
                Thread.sleep(50);
                status = job.getJobStatus().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
            assertEquals(JobStatus.CANCELED, status, () -> "the job " + JOB_END_WAIT.toSeconds()
                    + " s after its cancel, with the server gone" + threadStacks());
        } finally {
            own.close();
        }
    }
}
