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

  private StreamingQuery start(String table, String sink, Path checkpoint) throws Exception {
    return spark().readStream().table("fluss_catalog." + db + "." + table)
        .writeStream()
        .format("memory")
        .queryName(sink)
        .option("checkpointLocation", checkpoint.toString())
        .outputMode("append")
        .start();
  }

  /**
   * Micro-batches resume each bucket at an offset: skipped (not failed) while the native
   * library cannot subscribe from a position.
   */
  private void assumePositionSubscriptions(String table) {
    try (io.riverlet.Table t = connection().table(db + "." + table);
        io.riverlet.Subscription s = t.subscribe(io.riverlet.SubscribeOptions.fromPosition(
            new io.riverlet.SubscriptionPosition(
                List.of(new io.riverlet.BucketOffset(null, 0, 0L)))).buckets(0).build())) {
      s.schema();
    } catch (io.riverlet.UnsupportedException e) {
      org.junit.jupiter.api.Assumptions.assumeTrue(false, e.getMessage());
    }
  }

  @Test
  void latestThenRestartFromCheckpoint() throws Exception {
    sql("CREATE TABLE events (id BIGINT, what STRING) TBLPROPERTIES ('bucket.num' = '2')");
    assumePositionSubscriptions("events");
    sql("INSERT INTO events VALUES (1, 'before the query')");
    sql("SET spark.sql.fluss.scan.startup.mode=latest");
    Path checkpoint = Files.createTempDirectory("riverlet-stream-ckpt");
    StreamingQuery q = start("events", "events_sink_1", checkpoint);
    try {
      q.processAllAvailable();
      sql("INSERT INTO events VALUES (2, 'b'), (3, 'c')");
      q.processAllAvailable();
      assertEquals(List.of("[2,b]", "[3,c]"), rows("SELECT * FROM events_sink_1 ORDER BY id"));
    } finally {
      q.stop();
    }
    sql("INSERT INTO events VALUES (4, 'while stopped')");
    StreamingQuery again = start("events", "events_sink_2", checkpoint);
    try {
      again.processAllAvailable();
      sql("INSERT INTO events VALUES (5, 'e')");
      again.processAllAvailable();
      assertEquals(List.of("[4,while stopped]", "[5,e]"),
          rows("SELECT * FROM events_sink_2 ORDER BY id"));
    } finally {
      again.stop();
    }
  }

  @Test
  void fullModeIsRejectedForStreaming() {
    sql("CREATE TABLE events_full (id BIGINT)");
    sql("SET spark.sql.fluss.scan.startup.mode=full");
    Exception e = assertThrows(Exception.class, () -> {
      StreamingQuery q = start("events_full", "events_full_sink",
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
