package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Server options passed by their Apache Fluss names take effect in the embedded server. */
class ServerOptionsTest {
  @TempDir Path dataDir;

  @Test
  void defaultBucketNumberAppliesToTablesCreatedWithoutABucketCount() {
    try (LocalServer server =
            LocalServer.start(dataDir, "127.0.0.1", 0, Map.of(),
                Map.of("default.bucket.number", "3"));
        Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of())) {
      Admin admin = conn.admin();
      admin.createDatabase("opts", false);
      admin.createTable("opts.t", TableDescriptor.builder(TestSupport.idNameRegion()).build(),
          false);
      assertEquals(3, admin.getTableInfo("opts.t").bucketCount());
    }
  }
}
