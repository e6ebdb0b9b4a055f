package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Structured Streaming reads with {@code scan.startup.mode=latest}: only rows committed after the
 * query starts, and a restart from the checkpoint continues where it stopped.
 */
class SparkStreamingTest extends SparkTestBase {

  @AfterEach
  void unsetMode() {
    spark().conf().unset("spark.sql.fluss.scan.startup.mode");
  }

  /** Streams the table into Parquet files under {@code out} (a sink that can restart). */
  private StreamingQuery start(String table, Path out, Path checkpoint) throws Exception {
    return spark().readStream().table("fluss_catalog." + db + "." + table)
        .writeStream()
        .format("parquet")
        .option("path", out.toString())
        .option("checkpointLocation", checkpoint.toString())
        .outputMode("append")
        .start();
  }

  private static List<String> written(Path out) {
    return rows(spark().read().parquet(out.toString()).orderBy("id"));
  }

  @Test
  void latestThenRestartFromCheckpoint() throws Exception {
    sql("CREATE TABLE events (id BIGINT, what STRING) TBLPROPERTIES ('bucket.num' = '2')");
    sql("INSERT INTO events VALUES (1, 'before the query')");
    sql("SET spark.sql.fluss.scan.startup.mode=latest");
    Path checkpoint = Files.createTempDirectory("riverlet-stream-ckpt");
    Path out = Files.createTempDirectory("riverlet-stream-out");
    StreamingQuery q = start("events", out, checkpoint);
    try {
      q.processAllAvailable();
      sql("INSERT INTO events VALUES (2, 'b'), (3, 'c')");
      q.processAllAvailable();
      assertEquals(List.of("[2,b]", "[3,c]"), written(out));
    } finally {
      q.stop();
    }
    sql("INSERT INTO events VALUES (4, 'while stopped')");
    StreamingQuery again = start("events", out, checkpoint);
    try {
      again.processAllAvailable();
      sql("INSERT INTO events VALUES (5, 'e')");
      again.processAllAvailable();
      // Restarted from the checkpoint: nothing lost, nothing read twice.
      assertEquals(List.of("[2,b]", "[3,c]", "[4,while stopped]", "[5,e]"), written(out));
    } finally {
      again.stop();
    }
  }

  @Test
  void fullModeIsRejectedForStreaming() {
    sql("CREATE TABLE events_full (id BIGINT)");
    sql("SET spark.sql.fluss.scan.startup.mode=full");
    Exception e = assertThrows(Exception.class, () -> {
      StreamingQuery q = start("events_full", Files.createTempDirectory("riverlet-stream-out"),
          Files.createTempDirectory("riverlet-stream-ckpt"));
      try {
        q.processAllAvailable();
      } finally {
        q.stop();
      }
    });
    assertTrue(e.toString().contains("latest"), e.toString());
  }
}
