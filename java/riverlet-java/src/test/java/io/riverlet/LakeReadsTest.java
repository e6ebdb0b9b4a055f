package io.riverlet;

import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Lake reads against an embedded server tiering to Iceberg and to Paimon: {@code t$lake} (the
 * lake only), {@code t$lake$snapshots} (one row per commit) and the union read of {@code t},
 * each compared with the rows written.
 */
class LakeReadsTest {
  @TempDir Path dir;

  private static Object[][] events(long first, long last) {
    List<Object[]> out = new ArrayList<>();
    for (long i = first; i <= last; i++) {
      out.add(new Object[] {i, "n" + i, i % 2 == 0 ? "eu" : "us"});
    }
    return out.toArray(new Object[0][]);
  }

  private static List<List<Object>> sorted(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0)));
    return copy;
  }

  private static List<List<Object>> expected(Object[][] rows) {
    List<List<Object>> out = new ArrayList<>();
    for (Object[] r : rows) {
      out.add(List.of(r));
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"iceberg", "paimon"})
  void lakeViewsAndUnionRead(String format) throws Exception {
    Map<String, String> options = Map.of("datalake.format", format,
        "datalake." + format + ".warehouse", dir.resolve("wh").toString());
    try (LocalServer server = LocalServer.start(dir.resolve("data"), "127.0.0.1", 0, Map.of(),
            options);
        Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of())) {
      Admin admin = conn.admin();
      admin.createDatabase("lake", false);
      admin.createTable("lake.events", TableDescriptor.builder(TestSupport.idNameRegion())
          .bucketCount(2)
          .property("table.datalake.enabled", "true")
          .property("table.datalake.freshness", "1h")
          .build(), false);
      Object[][] first = events(1, 6);
      Object[][] second = events(7, 9);
      try (Table t = conn.table("lake.events")) {
        try (VectorSchemaRoot r = rows(conn.allocator(), first)) {
          t.append(r);
        }
        t.flush();
        assertNull(admin.lakeSnapshot("lake.events"));
        assertNull(admin.readableLakeSnapshot("lake.events"));
        server.commitLake();
        // The commit's snapshot: each bucket's offset is where its log stood (one record per
        // row here), so together they count the rows tiered.
        LakeSnapshot tiered = admin.lakeSnapshot("lake.events");
        assertEquals(t.info().tableId(), tiered.tableId());
        assertEquals(first.length,
            tiered.bucketOffsets().stream().mapToLong(BucketOffset::offset).sum());
        assertTrue(tiered.bucketOffsets().stream().allMatch(b -> b.partitionId() == null));
        assertEquals(tiered, admin.readableLakeSnapshot("lake.events"));
        assertEquals(tiered, admin.lakeSnapshot("lake.events", tiered.snapshotId()));
        assertNull(admin.lakeSnapshot("lake.events", tiered.snapshotId() + 12345));
        assertThrows(NotFoundException.class, () -> admin.lakeSnapshot("lake.nope"));
        try (VectorSchemaRoot r = rows(conn.allocator(), second)) {
          t.append(r);
        }
        t.flush();

        ReadOptions cols = ReadOptions.builder().columns("id", "name", "region").build();
        try (Table lake = conn.table("lake.events$lake")) {
          assertEquals(expected(first), sorted(readAll(lake.scan(cols))));
          try (VectorSchemaRoot r = rows(conn.allocator(), second)) {
            assertThrows(UnsupportedException.class, () -> lake.append(r));
          }
        }
        try (Table snaps = conn.table("lake.events$lake$snapshots")) {
          List<List<Object>> s = readAll(snaps.scan());
          assertEquals(1, s.size());
        }
        List<List<Object>> all = new ArrayList<>(expected(first));
        all.addAll(expected(second));
        assertEquals(all, sorted(readAll(t.scan())));
      }
      admin.createTable("lake.plain", TableDescriptor.builder(TestSupport.idNameRegion()).build(),
          false);
      // The view of a table that is not lake-enabled does not exist: opening it fails.
      NotFoundException e =
          assertThrows(NotFoundException.class, () -> conn.table("lake.plain$lake"));
      assertTrue(e.getMessage().contains("not lake-enabled"), e.getMessage());
    }
  }
}
