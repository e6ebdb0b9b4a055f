package io.riverlet;

import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * {@link Table#bucketLeaders()} and routing: writes, reads, lookups and a subscription on tables
 * with more buckets than servers, then which server leads each bucket. Against the embedded
 * server every bucket is led by server 0 at the bootstrap address; against a cluster
 * (run-interop.sh: 3 tablet servers, {@code FLUSS_TABLETS=0=host:port,...} in the environment)
 * every tablet server leads at least one bucket of each table, at the address the cluster was
 * configured with.
 */
@org.junit.jupiter.api.Tag(ServerTestBase.INTEROP_TAG)
class RoutingTest extends ServerTestBase {
  private static final int LOG_BUCKETS = 9;
  private static final int PK_BUCKETS = 6;

  /** The tablet servers by id: FLUSS_TABLETS against a cluster, {0: bootstrap} embedded. */
  private static Map<Integer, String> tabletServers() {
    Map<Integer, String> out = new TreeMap<>();
    if (EXTERNAL_BOOTSTRAP == null) {
      out.put(0, server.bootstrapServers());
      return out;
    }
    String tablets = System.getenv("FLUSS_TABLETS");
    if (tablets == null || tablets.isBlank()) {
      return null; // a cluster whose servers the test is not told: leaders are only checked set
    }
    for (String item : tablets.split(",")) {
      String[] idAddress = item.split("=", 2);
      out.put(Integer.parseInt(idAddress[0].trim()), idAddress[1].trim());
    }
    return out;
  }

  /** Asserts the leaders of a table without partitions: buckets in order, each led, by whom. */
  private static void assertLeaders(List<BucketLeader> leaders, int buckets, String what) {
    assertEquals(buckets, leaders.size(), what + ": " + leaders);
    Map<Integer, List<Integer>> led = new TreeMap<>();
    for (int b = 0; b < buckets; b++) {
      BucketLeader l = leaders.get(b);
      assertEquals(b, l.bucket(), what + ": " + leaders);
      assertNull(l.partitionId(), what);
      assertNull(l.partitionName(), what);
      assertNotNull(l.leaderId(), what + ": bucket without a leader: " + l);
      led.computeIfAbsent(l.leaderId(), k -> new ArrayList<>()).add(b);
    }
    Map<Integer, String> servers = tabletServers();
    if (servers == null) {
      return;
    }
    for (BucketLeader l : leaders) {
      assertEquals(servers.get(l.leaderId()), l.leaderAddress(), what + ": " + l);
    }
    assertEquals(servers.keySet(), led.keySet(),
        what + ": buckets led per server " + led + "; every server should lead some");
    System.out.println("RoutingTest: " + what + ": buckets led per server " + led);
  }

  private static List<List<Object>> sortedById(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort(Comparator.comparingLong(r -> (Long) r.get(0)));
    return copy;
  }

  @Test
  void everyServerLeadsBucketsThatServeWritesReadsLookupsAndSubscriptions() throws Exception {
    String db = newDatabase();

    // A log table whose rows spread over its buckets by a bucket key.
    String logName = createTable(db, "events", TableDescriptor.builder(TestSupport.idNameRegion())
        .bucketKeys("id").bucketCount(LOG_BUCKETS).build());
    int logRows = 270;
    Object[][] logData = new Object[logRows][];
    List<List<Object>> logExpected = new ArrayList<>();
    for (int i = 0; i < logRows; i++) {
      String region = i % 3 == 0 ? "eu" : "us";
      logData[i] = new Object[] {(long) i, "n" + i, region};
      logExpected.add(TestSupport.list((long) i, "n" + i, region));
    }
    try (Table t = conn.table(logName)) {
      List<BucketLeader> before = t.bucketLeaders();
      assertLeaders(before, LOG_BUCKETS, "log table");
      try (VectorSchemaRoot r = rows(alloc(), logData)) {
        t.append(r);
      }
      t.flush();
      assertEquals(logExpected, sortedById(readAll(t.scan())));
      // Each bucket read from its leader alone: every bucket holds rows, together all of them.
      int total = 0;
      for (int b = 0; b < LOG_BUCKETS; b++) {
        int n = readAll(t.scan(ReadOptions.builder().buckets(b).build())).size();
        assertTrue(n > 0, "270 keys leave bucket " + b + " empty");
        total += n;
      }
      assertEquals(logRows, total);

      try (Subscription s = t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).build())) {
        List<Object> ids = new ArrayList<>();
        for (int i = 0; i < 600 && ids.size() < logRows; i++) {
          for (ChangeBatch b : s.poll(Duration.ofMillis(100))) {
            try (b) {
              for (List<Object> row : TestSupport.values(b.root())) {
                ids.add(row.get(3));
              }
            }
          }
        }
        assertEquals(TestSupport.column(logExpected, 0), TestSupport.sortedLongs(ids));
        SubscriptionPosition pos = s.position();
        long offsets = 0;
        for (int b = 0; b < LOG_BUCKETS; b++) {
          offsets += pos.offset(null, b);
        }
        assertEquals(logRows, offsets, pos.toString());
      }
      // The leaders did not move meanwhile: the routing checked above is the one used.
      assertEquals(before, t.bucketLeaders());
    }

    // A primary-key table: upserts, a second version of some keys, lookups of every key.
    String pkName = createTable(db, "accounts", TableDescriptor.builder(TestSupport.idNameRegion())
        .primaryKey("id").bucketCount(PK_BUCKETS).build());
    int pkRows = 120;
    Map<Long, List<Object>> expected = new TreeMap<>();
    Object[][] first = new Object[pkRows][];
    for (int i = 0; i < pkRows; i++) {
      first[i] = new Object[] {(long) i, "v" + i, "eu"};
      expected.put((long) i, TestSupport.list((long) i, "v" + i, "eu"));
    }
    Object[][] second = new Object[pkRows / 4][];
    for (int i = 0; i < second.length; i++) {
      long id = 4L * i;
      second[i] = new Object[] {id, "w" + id, "us"};
      expected.put(id, TestSupport.list(id, "w" + id, "us"));
    }
    try (Table t = conn.table(pkName)) {
      List<BucketLeader> before = t.bucketLeaders();
      assertLeaders(before, PK_BUCKETS, "primary-key table");
      try (VectorSchemaRoot r = rows(alloc(), first)) {
        t.upsert(r);
      }
      try (VectorSchemaRoot r = rows(alloc(), second)) {
        t.upsert(r);
      }
      t.flush();
      List<List<Object>> want = new ArrayList<>(expected.values());
      assertEquals(want, sortedById(readAll(t.scan())));
      long[] keys = new long[pkRows + 2];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = i; // the last two have no row
      }
      try (VectorSchemaRoot k = TestSupport.longs(alloc(), "id", keys);
          VectorSchemaRoot found = t.lookupMany(k)) {
        // _key_index first: the row of the keys batch each answer belongs to.
        List<List<Object>> rowsFound = new ArrayList<>();
        for (List<Object> row : TestSupport.values(found)) {
          assertEquals(keys[(Integer) row.get(0)], row.get(1), row.toString());
          rowsFound.add(row.subList(1, row.size()));
        }
        assertEquals(want, sortedById(rowsFound));
      }
      try (VectorSchemaRoot k = TestSupport.longs(alloc(), "id", 8, 9, pkRows + 7);
          VectorSchemaRoot found = t.lookup(k)) {
        assertEquals(List.of(expected.get(8L), expected.get(9L)),
            sortedById(TestSupport.values(found)));
      }
      assertEquals(before, t.bucketLeaders());
    }
  }

  @Test
  void partitionedTablesListLeadersByPartitionNameThenBucket() throws Exception {
    String db = newDatabase();
    String name = db + ".by_day";
    admin.createTable(name, TableDescriptor.builder(TestSupport.idNameRegion())
        .partitionKeys("region").bucketCount(2).build(), false);
    try (Table t = conn.table(name)) {
      assertEquals(List.of(), t.bucketLeaders(), "no partition, no bucket");
      admin.createPartition(name, Map.of("region", "us"), false);
      admin.createPartition(name, Map.of("region", "eu"), false);
      Map<String, Long> ids = new TreeMap<>();
      for (PartitionInfo p : admin.listPartitions(name)) {
        ids.put(p.name(), p.id());
      }
      // A new partition's leaders are elected a moment after it is created.
      List<BucketLeader> leaders = t.bucketLeaders();
      for (int i = 0; i < 100 && leaders.stream().anyMatch(l -> l.leaderId() == null); i++) {
        Thread.sleep(200);
        leaders = t.bucketLeaders();
      }
      assertEquals(List.of("eu/0", "eu/1", "us/0", "us/1"), leaders.stream()
          .map(l -> l.partitionName() + "/" + l.bucket()).collect(Collectors.toList()));
      for (BucketLeader l : leaders) {
        assertEquals(ids.get(l.partitionName()), l.partitionId(), l.toString());
        assertNotNull(l.leaderId(), l.toString());
        assertNotNull(l.leaderAddress(), l.toString());
      }
      Map<Integer, String> servers = tabletServers();
      if (servers != null) {
        assertTrue(new TreeSet<>(servers.keySet()).containsAll(leaders.stream()
            .map(BucketLeader::leaderId).collect(Collectors.toSet())), leaders.toString());
      }
    }
  }

  @Test
  void aClosedTableOrADroppedOneIsATypedError() {
    String db = newDatabase();
    String name = createTable(db, "gone",
        TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(2).build());
    Table t = conn.table(name);
    assertEquals(2, t.bucketLeaders().size());
    admin.dropTable(name, false);
    // The coordinator drops the table at once and tells the tablet servers afterwards, and a
    // metadata request may reach a tablet server that still lists it: the typed error comes
    // once the drop has reached the server asked, within seconds.
    TableNotFoundException e = null;
    for (int attempt = 0; e == null && attempt < 300; attempt++) {
      try {
        t.bucketLeaders();
        Thread.sleep(100);
      } catch (TableNotFoundException gone) {
        e = gone;
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    assertNotNull(e, "the dropped table " + name + " still had bucket leaders after 30 s");
    assertTrue(e.getMessage().contains(name), e.getMessage());
    t.close();
    assertThrows(ClosedException.class, t::bucketLeaders);
  }
}
