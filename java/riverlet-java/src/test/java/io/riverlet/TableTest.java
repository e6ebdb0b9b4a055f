package io.riverlet;

import static io.riverlet.TestSupport.list;
import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Tag(ServerTestBase.INTEROP_TAG)
class TableTest extends ServerTestBase {

  private static List<List<Object>> sortedById(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0)));
    return copy;
  }

  @Test
  void appendAndScanALogTable() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "log",
        TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(2).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"},
          new Object[] {2L, null, "us"}, new Object[] {3L, "c", null})) {
        t.append(r);
      }
      t.flush();
      assertEquals(
          List.of(list(1L, "a", "eu"), list(2L, null, "us"), list(3L, "c", null)),
          sortedById(readAll(t.scan())));
      assertEquals(3, t.count());

      // Projection keeps the order asked for.
      List<List<Object>> proj =
          readAll(t.scan(ReadOptions.builder().columns("region", "id").build()));
      assertEquals(3, proj.size());
      assertTrue(proj.contains(list("eu", 1L)), proj.toString());
      // Filter.
      assertEquals(List.of(list(2L, null, "us")),
          readAll(t.scan(ReadOptions.builder().filter("region = 'us'").build())));
      assertEquals(1, t.count(ReadOptions.builder().filter("id >= 3").build()));
      // Limit.
      assertEquals(2, readAll(t.scan(ReadOptions.builder().limit(2).build())).size());
      // The changelog form puts the change columns first.
      try (ArrowReader cl = t.scan(ReadOptions.builder().changelog(true).build())) {
        assertEquals(
            List.of("_change_type", "_log_offset", "_commit_timestamp", "id", "name", "region"),
            cl.getVectorSchemaRoot().getSchema().getFields().stream()
                .map(f -> f.getName()).collect(java.util.stream.Collectors.toList()));
        int n = 0;
        while (cl.loadNextBatch()) {
          for (List<Object> row : TestSupport.values(cl.getVectorSchemaRoot())) {
            assertEquals("insert", row.get(0));
            n++;
          }
        }
        assertEquals(3, n);
      }
    }
  }

  @Test
  void bucketSubsetsPartitionTheTableAndBatchSizeBoundsBatches() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "pk4",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(4).build());
    try (Table t = conn.table(name)) {
      Object[][] data = new Object[40][];
      for (int i = 0; i < 40; i++) {
        data[i] = new Object[] {(long) i, "n" + i, i % 2 == 0 ? "eu" : "us"};
      }
      try (VectorSchemaRoot r = rows(alloc(), data)) {
        t.upsert(r);
      }
      t.flush();
      // One read per bucket, as Spark and Flink splits do: together every row exactly once.
      List<Object> all = new ArrayList<>();
      int nonEmpty = 0;
      for (int b = 0; b < 4; b++) {
        List<Object> ids = TestSupport.column(
            readAll(t.scan(ReadOptions.builder().buckets(b).build())), 0);
        assertEquals(ids.size(), t.count(ReadOptions.builder().buckets(b).build()));
        nonEmpty += ids.isEmpty() ? 0 : 1;
        all.addAll(ids);
      }
      assertTrue(nonEmpty > 1, "40 keys hash to more than one of 4 buckets");
      assertEquals(TestSupport.column(sortedById(readAll(t.scan())), 0),
          TestSupport.sortedLongs(all));
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().buckets(9).build()));
      assertTrue(e.getMessage().contains("9"), e.getMessage());

      try (ArrowReader r = t.scan(ReadOptions.builder().batchSize(7).build())) {
        int total = 0;
        while (r.loadNextBatch()) {
          int n = r.getVectorSchemaRoot().getRowCount();
          assertTrue(n <= 7, "batch of " + n);
          total += n;
        }
        assertEquals(40, total);
      }
      assertThrows(InvalidArgumentException.class, () -> ReadOptions.builder().limit(-1));
    }
  }

  /**
   * Batches cut out of a log batch (a scan's {@code batchSize}, a subscription resumed inside a
   * batch) start inside the batch's buffers; they still arrive in Java with the right values
   * (Arrow Java's C Data import takes no non-zero offsets, so the binding hands such batches
   * over as their own buffers).
   */
  @Test
  void batchesCutOutOfALogBatchKeepTheirValues() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "cut",
        TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(1).build());
    try (Table t = conn.table(name)) {
      Object[][] data = new Object[40][];
      List<List<Object>> expected = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        // strings of different lengths, and nulls, so a wrong start shows in the values
        String n = i % 5 == 0 ? null : "name-" + "x".repeat(i % 7) + i;
        data[i] = new Object[] {(long) i, n, i % 2 == 0 ? "eu" : "us"};
        expected.add(list((long) i, n, i % 2 == 0 ? "eu" : "us"));
      }
      try (VectorSchemaRoot r = rows(alloc(), data)) {
        t.append(r);
      }
      t.flush();
      assertEquals(expected, readAll(t.scan(ReadOptions.builder().batchSize(7).build())));
      // From offset 13, inside the one batch: rows 13.. in order.
      SubscriptionPosition at13 = SubscriptionPosition.parse("0@13");
      try (Subscription s = t.subscribe(SubscribeOptions.fromPosition(at13).build())) {
        List<List<Object>> got = new ArrayList<>();
        for (int tries = 0; tries < 100 && got.size() < 27; tries++) {
          for (ChangeBatch b : s.poll(java.time.Duration.ofMillis(100))) {
            try (ChangeBatch c = b) {
              List<List<Object>> rows = TestSupport.values(c.root());
              for (int r = 0; r < c.rowCount(); r++) {
                // after the change type, offset and timestamp columns; row i is at offset i
                assertEquals(rows.get(r).get(3), c.offset(r));
                got.add(rows.get(r).subList(3, rows.get(r).size()));
              }
            }
          }
        }
        assertEquals(expected.subList(13, 40), got);
      }
    }
  }

  @Test
  void appendAnArrowReader() throws Exception {
    String db = newDatabase();
    String src = createTable(db, "src", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    String dst = createTable(db, "dst", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    try (Table a = conn.table(src); Table b = conn.table(dst)) {
      for (int i = 0; i < 3; i++) {
        try (VectorSchemaRoot r = rows(alloc(), new Object[] {(long) i, "n" + i, "eu"})) {
          a.append(r);
        }
      }
      a.flush();
      try (ArrowReader reader = a.scan()) {
        b.append(reader);
      }
      b.flush();
      assertEquals(sortedById(readAll(a.scan())), sortedById(readAll(b.scan())));
    }
  }

  @Test
  void upsertPartialUpdateDeleteAndLookups() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(2).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"},
          new Object[] {2L, "b", "eu"}, new Object[] {3L, "c", "us"})) {
        t.upsert(r);
      }
      t.flush();
      // Partial update of `name` only: region keeps its value.
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {2L, "B", null})) {
        t.upsert(r, List.of("id", "name"));
      }
      // Full upsert of 3 replaces every column.
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {3L, "C", null})) {
        t.upsert(r);
      }
      try (VectorSchemaRoot k = TestSupport.longs(alloc(), "id", 1)) {
        t.delete(k);
      }
      t.flush();
      assertEquals(List.of(list(2L, "B", "eu"), list(3L, "C", null)),
          sortedById(readAll(t.scan())));
      assertEquals(2, t.count());

      try (VectorSchemaRoot keys = TestSupport.longs(alloc(), "id", 3, 1, 2);
          VectorSchemaRoot found = t.lookup(keys)) {
        // Key order, the deleted key contributes nothing.
        assertEquals(List.of(list(3L, "C", null), list(2L, "B", "eu")),
            TestSupport.values(found));
      }
      try (VectorSchemaRoot keys = TestSupport.longs(alloc(), "id", 7, 2, 1, 3);
          VectorSchemaRoot found = t.lookupMany(keys)) {
        assertEquals("_key_index", found.getSchema().getFields().get(0).getName());
        assertEquals(List.of(list(1, 2L, "B", "eu"), list(3, 3L, "C", null)),
            TestSupport.values(found));
      }
      try (VectorSchemaRoot keys = TestSupport.longs(alloc(), "id", 2);
          VectorSchemaRoot found = t.lookupAsync(keys).get(60, TimeUnit.SECONDS)) {
        assertEquals(List.of(list(2L, "B", "eu")), TestSupport.values(found));
      }
      // Bucketed by the whole key: a prefix lookup is refused with a typed error.
      try (VectorSchemaRoot keys = TestSupport.longs(alloc(), "id", 3)) {
        InvalidArgumentException e =
            assertThrows(InvalidArgumentException.class, () -> t.prefixLookup(keys));
        assertTrue(e.getMessage().contains("prefix"), e.getMessage());
      }
      // Read-optimized reads the snapshot only; on a fresh table it is still a valid read.
      readAll(t.scan(ReadOptions.builder().readOptimized(true).build()));
    }
  }

  /**
   * Rows from an allocator of the caller's own, not the connection's (the usual case in an
   * application): every write and lookup takes them, and the caller's allocator closes without
   * a leak afterwards (closing throws when a buffer is still held). Exporting them with the
   * connection's allocator failed with "A buffer can only be associated between two allocators
   * that share the same root" and leaked (found by tests/reliability/failover.py --client java).
   */
  @Test
  void writesAndLookupsTakeRowsOfTheCallersOwnAllocator() throws Exception {
    String db = newDatabase();
    String log = createTable(db, "log", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    String pk = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(2).build());
    try (org.apache.arrow.memory.BufferAllocator own =
            new org.apache.arrow.memory.RootAllocator();
        Table l = conn.table(log);
        Table t = conn.table(pk)) {
      try (VectorSchemaRoot r = rows(own, new Object[] {1L, "a", "eu"},
          new Object[] {2L, null, "us"})) {
        l.append(r);
        t.upsert(r);
      }
      try (VectorSchemaRoot r = rows(own, new Object[] {2L, "b", null})) {
        t.upsert(r, List.of("id", "name"));
      }
      try (VectorSchemaRoot k = TestSupport.longs(own, "id", 1)) {
        t.delete(k);
      }
      l.flush();
      t.flush();
      assertEquals(List.of(list(1L, "a", "eu"), list(2L, null, "us")),
          sortedById(readAll(l.scan())));
      try (VectorSchemaRoot keys = TestSupport.longs(own, "id", 2, 1);
          VectorSchemaRoot found = t.lookup(keys)) {
        assertEquals(List.of(list(2L, "b", "us")), TestSupport.values(found));
      }
      try (VectorSchemaRoot keys = TestSupport.longs(own, "id", 1, 2);
          VectorSchemaRoot found = t.lookupMany(keys)) {
        assertEquals(List.of(list(1, 2L, "b", "us")), TestSupport.values(found));
      }
      try (VectorSchemaRoot keys = TestSupport.longs(own, "id", 2);
          VectorSchemaRoot found = t.lookupAsync(keys).get(60, TimeUnit.SECONDS)) {
        assertEquals(List.of(list(2L, "b", "us")), TestSupport.values(found));
      }
    }
  }

  /**
   * Closing a connection (with its own allocator) while lookupAsync calls are in flight: close()
   * waits until every call settled, so it neither reports their buffers as a leak ("Memory was
   * leaked by query", what made Flink kill its TaskManager on cancel) nor closes the allocator
   * under a result being imported. Every future is done when close() returns, each with rows or
   * with a Riverlet error.
   */
  @Test
  void closingAConnectionWaitsForItsLookupsInFlight() throws Exception {
    String db = newDatabase();
    String pk = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(2).build());
    try (Table t = conn.table(pk);
        VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"})) {
      t.upsert(r);
      t.flush();
    }
    Connection own = Riverlet.connect(conn.bootstrapServers(), java.util.Map.of());
    List<java.util.concurrent.CompletableFuture<Long>> found = new ArrayList<>();
    try (org.apache.arrow.memory.BufferAllocator keysAlloc =
        new org.apache.arrow.memory.RootAllocator()) {
      Table t = own.table(pk);
      for (int i = 0; i < 50; i++) {
        try (VectorSchemaRoot keys = TestSupport.longs(keysAlloc, "id", 1)) {
          // The caller closes each result in a stage chained at once, as an application would.
          found.add(t.lookupAsync(keys).thenApply(root -> {
            long n = root.getRowCount();
            root.close();
            return n;
          }));
        }
      }
      own.close();
    }
    for (java.util.concurrent.CompletableFuture<Long> f : found) {
      assertTrue(f.isDone(), "a lookup still pending after close()");
      try {
        assertEquals(1L, f.get());
      } catch (java.util.concurrent.ExecutionException e) {
        assertTrue(e.getCause() instanceof RiverletException, e.toString());
      }
    }
  }

  @Test
  void prefixLookupByBucketKey() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "pk2",
        TableDescriptor.builder(TestSupport.idNameRegion())
            .primaryKey("region", "id").bucketKeys("region").bucketCount(2).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"},
          new Object[] {2L, "b", "eu"}, new Object[] {3L, "c", "us"})) {
        t.upsert(r);
      }
      t.flush();
      assertEquals(List.of("region"), t.prefixLookupColumns());
      try (VectorSchemaRoot prefixes = rows(alloc(), new Object[] {0L, null, "eu"});
          VectorSchemaRoot found = t.prefixLookup(prefixes)) {
        assertEquals(List.of(list(1L, "a", "eu"), list(2L, "b", "eu")),
            sortedById(TestSupport.values(found)));
      }
    }
  }

  @Test
  void writesOfTheWrongKindAreTypedErrors() {
    String db = newDatabase();
    String log = createTable(db, "log", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    String pk = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").build());
    try (Table l = conn.table(log); Table p = conn.table(pk);
        VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"})) {
      assertThrows(RiverletException.class, () -> l.upsert(r));
      assertThrows(RiverletException.class, () -> p.append(r));
      InvalidArgumentException e =
          assertThrows(InvalidArgumentException.class, () -> l.lookup(r));
      assertTrue(e.getMessage().contains("primary key"), e.getMessage());
    }
  }
}
