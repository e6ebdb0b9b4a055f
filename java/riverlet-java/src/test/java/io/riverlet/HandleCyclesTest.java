package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** 1000 open/scan/close cycles leave no native object behind and do not grow the process. */
class HandleCyclesTest {

  private static long rssKb() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  @Test
  void thousandCyclesReturnTheHandleCountToWhereItWas(@TempDir Path dir) throws Exception {
    try (LocalServer server = LocalServer.start(dir, 0)) {
      long baseline = Riverlet.nativeHandleCount();
      try (Connection c = Riverlet.connect(server.bootstrapServers(), Map.of())) {
        c.admin().createDatabase("d", false);
        c.admin().createTable("d.t", TableDescriptor.builder(TestSupport.idNameRegion())
            .bucketCount(2).build(), false);
        try (Table t = c.table("d.t");
            VectorSchemaRoot r = TestSupport.rows(c.allocator(), new Object[] {1L, "a", "eu"},
                new Object[] {2L, "b", "us"})) {
          t.append(r);
          t.flush();
        }
      }
      assertEquals(baseline, Riverlet.nativeHandleCount());
      long rssAfterWarmup = 0;
      for (int i = 0; i < 1000; i++) {
        try (Connection c = Riverlet.connect(server.bootstrapServers(), Map.of());
            Table t = c.table("d.t");
            ArrowReader reader = t.scan()) {
          assertTrue(Riverlet.nativeHandleCount() >= baseline + 3);
          int rows = 0;
          while (reader.loadNextBatch()) {
            rows += reader.getVectorSchemaRoot().getRowCount();
          }
          assertEquals(2, rows);
        }
        assertEquals(baseline, Riverlet.nativeHandleCount(), "after cycle " + i);
        if (i == 199) {
          rssAfterWarmup = rssKb();
        }
      }
      long growthKb = rssKb() - rssAfterWarmup;
      // Flat RSS: 800 more cycles may not keep what they allocated (a leak of even one 4 KiB
      // page per cycle would show as 3+ MiB; the bound leaves room for the JVM's own heap).
      assertTrue(growthKb < 96 * 1024, "RSS grew by " + growthKb + " KiB over 800 cycles");
    }
  }
}
