package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java API's bad-input catalogue (issue 18, item 4): each case hands Riverlet one bad value
 * against a real embedded server and expects a typed {@link RiverletException} subclass whose
 * message names the bad value: never a JVM crash, an untyped exception or a hang.
 */
class BadInputTest extends ServerTestBase {

  /** One bad input: what to run, the exception class expected, the text its message names. */
  private record Case(
      String id, Class<? extends RiverletException> error, String names, ThrowingCall call) {}

  @FunctionalInterface
  private interface ThrowingCall {
    void run() throws Exception;
  }

  private static String db;
  private static String logs;
  private static String pk;
  private static String parts;

  @TempDir static Path scratch;

  @BeforeAll
  static void tables() {
    db = newDatabase();
    logs = createTable(db, "logs", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    pk = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").build());
    parts = createTable(db, "parts",
        TableDescriptor.builder(TestSupport.idNameRegion()).partitionKeys("region").build());
    try (Table t = conn.table(logs);
        VectorSchemaRoot r = TestSupport.rows(alloc(), new Object[] {1L, "a", "eu"})) {
      t.append(r);
      t.flush();
    }
  }

  private static Case c(String id, Class<? extends RiverletException> error, String names,
      ThrowingCall call) {
    return new Case(id, error, names, call);
  }

  /** Reads a whole stream: a bad read may only fail once rows are requested. */
  private static void drain(ArrowReader reader) throws IOException {
    try (reader) {
      while (reader.loadNextBatch()) {
        // every batch is read and dropped
      }
    }
  }

  private static void read(String table, ReadOptions options) throws IOException {
    try (Table t = conn.table(table)) {
      drain(t.scan(options));
    }
  }

  private static Schema oneColumn(String name, ArrowType type) {
    return new Schema(List.of(TestSupport.field(name, type, true)));
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static List<Case> catalogue() throws IOException {
    String deep = "(".repeat(20_000) + "id = 1" + ")".repeat(20_000);
    String nots = "NOT ".repeat(20_000) + "id = 1";
    Path file = Files.createTempFile(scratch, "not-a-dir", ".txt");
    int dead = closedPort();
    List<Case> cases = new ArrayList<>();
    // ---- connecting
    cases.add(c("empty bootstrap", InvalidArgumentException.class, "bootstrap",
        () -> Riverlet.connect("", Map.of()).close()));
    cases.add(c("bootstrap without port", InvalidArgumentException.class, "localhost",
        () -> Riverlet.connect("localhost", Map.of()).close()));
    cases.add(c("bootstrap port not a number", InvalidArgumentException.class, "http",
        () -> Riverlet.connect("localhost:http", Map.of()).close()));
    cases.add(c("bootstrap port out of range", InvalidArgumentException.class, "70000",
        () -> Riverlet.connect("localhost:70000", Map.of()).close()));
    cases.add(c("unknown client option", InvalidArgumentException.class, "client.nonsense",
        () -> Riverlet.connect("localhost:9123", Map.of("client.nonsense", "1")).close()));
    cases.add(c("acks not a number", InvalidArgumentException.class, "maybe",
        () -> Riverlet.connect("localhost:9123", Map.of("client.writer.acks", "maybe")).close()));
    cases.add(c("timeout not a duration", InvalidArgumentException.class, "soon",
        () -> Riverlet.connect("localhost:9123", Map.of("client.request-timeout", "soon"))
            .close()));
    cases.add(c("unknown security protocol", InvalidArgumentException.class, "KERBEROS",
        () -> Riverlet.connect("localhost:9123", Map.of("client.security.protocol", "KERBEROS"))
            .close()));
    cases.add(c("nothing listening", NetworkException.class, String.valueOf(dead), () -> {
      try (Connection x = Riverlet.connect("127.0.0.1:" + dead, Map.of())) {
        x.admin().listDatabases();
      }
    }));
    cases.add(c("runtime of zero threads", InvalidArgumentException.class, "0",
        () -> Riverlet.configureRuntime(0)));
    // ---- the embedded server
    cases.add(c("server data dir is a file", StorageIOException.class, file.toString(),
        () -> LocalServer.start(file, 0).close()));
    cases.add(c("server port out of range", InvalidArgumentException.class, "70000",
        () -> LocalServer.start(scratch.resolve("p"), 70000).close()));
    cases.add(c("server port negative", InvalidArgumentException.class, "-1",
        () -> LocalServer.start(scratch.resolve("n"), -1).close()));
    cases.add(c("unknown server option", InvalidArgumentException.class, "kv.snapshot.intervall",
        () -> LocalServer.start(scratch.resolve("o1"), "127.0.0.1", 0, Map.of(),
            Map.of("kv.snapshot.intervall", "1s")).close()));
    cases.add(c("bad server option value", InvalidArgumentException.class, "soon",
        () -> LocalServer.start(scratch.resolve("o2"), "127.0.0.1", 0, Map.of(),
            Map.of("kv.snapshot.interval", "soon")).close()));
    // ---- admin
    cases.add(c("empty database name", InvalidArgumentException.class, "atabase",
        () -> admin.createDatabase("", false)));
    cases.add(c("database name with a space", InvalidArgumentException.class, "bad name",
        () -> admin.createDatabase("bad name", false)));
    cases.add(c("reserved database prefix", InvalidArgumentException.class, "__sys",
        () -> admin.createDatabase("__sys", false)));
    cases.add(c("database exists", DatabaseAlreadyExistsException.class, db,
        () -> admin.createDatabase(db, false)));
    cases.add(c("drop unknown database", DatabaseNotFoundException.class, "nope_db",
        () -> admin.dropDatabase("nope_db", false, false)));
    cases.add(c("tables of unknown database", DatabaseNotFoundException.class, "nope_db",
        () -> admin.listTables("nope_db")));
    cases.add(c("table name without database", InvalidArgumentException.class, "lonely",
        () -> conn.table("lonely")));
    cases.add(c("table name with two dots", InvalidArgumentException.class, "a.b.c",
        () -> conn.table("a.b.c")));
    cases.add(c("unknown table", TableNotFoundException.class, "nope_table",
        () -> conn.table(db + ".nope_table")));
    cases.add(c("table exists", TableAlreadyExistsException.class, "logs",
        () -> admin.createTable(logs, TableDescriptor.builder(TestSupport.idNameRegion()).build(),
            false)));
    cases.add(c("primary key names unknown column", InvalidArgumentException.class, "nope",
        () -> admin.createTable(db + ".x",
            TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("nope").build(),
            false)));
    cases.add(c("partition key names unknown column", InvalidArgumentException.class, "nope",
        () -> admin.createTable(db + ".x",
            TableDescriptor.builder(TestSupport.idNameRegion()).partitionKeys("nope").build(),
            false)));
    cases.add(c("bucket key names unknown column", InvalidArgumentException.class, "nope",
        () -> admin.createTable(db + ".x",
            TableDescriptor.builder(TestSupport.idNameRegion()).bucketKeys("nope").build(),
            false)));
    cases.add(c("zero buckets", InvalidArgumentException.class, "0",
        () -> admin.createTable(db + ".x",
            TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(0).build(), false)));
    cases.add(c("TTL not a duration", InvalidArgumentException.class, "forever",
        () -> admin.createTable(db + ".x", TableDescriptor.builder(TestSupport.idNameRegion())
            .property("table.log.ttl", "forever").build(), false)));
    cases.add(c("unknown merge engine", InvalidArgumentException.class, "sideways",
        () -> admin.createTable(db + ".x", TableDescriptor.builder(TestSupport.idNameRegion())
            .primaryKey("id").property("table.merge-engine", "sideways").build(), false)));
    cases.add(c("half-precision float column", UnsupportedException.class, "h",
        () -> admin.createTable(db + ".x", TableDescriptor.builder(
            oneColumn("h", new ArrowType.FloatingPoint(FloatingPointPrecision.HALF))).build(),
            false)));
    cases.add(c("create partition with unknown key", InvalidArgumentException.class, "nope",
        () -> admin.createPartition(parts, Map.of("nope", "x"), false)));
    cases.add(c("drop unknown partition", PartitionNotFoundException.class, "mars",
        () -> admin.dropPartition(parts, Map.of("region", "mars"), false)));
    cases.add(c("partition of unpartitioned table", InvalidArgumentException.class, "logs",
        () -> admin.createPartition(logs, Map.of("region", "eu"), false)));
    cases.add(c("offsets of a bucket the table lacks", InvalidArgumentException.class, "99",
        () -> admin.listOffsets(logs, null, List.of(99), OffsetSpec.latest())));
    // ---- writes
    cases.add(c("append a column the table lacks", InvalidArgumentException.class, "other", () -> {
      try (Table t = conn.table(logs);
          VectorSchemaRoot r = TestSupport.longs(alloc(), "other", 1)) {
        t.append(r);
        t.flush();
      }
    }));
    cases.add(c("append text into a BIGINT column", InvalidArgumentException.class, "id", () -> {
      try (Table t = conn.table(logs);
          VectorSchemaRoot r = VectorSchemaRoot.create(oneColumn("id", ArrowType.Utf8.INSTANCE),
              alloc())) {
        r.allocateNew();
        TestSupport.setString((org.apache.arrow.vector.VarCharVector) r.getVector("id"), 0, "x");
        r.setRowCount(1);
        t.append(r);
        t.flush();
      }
    }));
    cases.add(c("upsert into a log table", InvalidArgumentException.class, "logs", () -> {
      try (Table t = conn.table(logs);
          VectorSchemaRoot r = TestSupport.rows(alloc(), new Object[] {1L, "a", "eu"})) {
        t.upsert(r);
        t.flush();
      }
    }));
    cases.add(c("append to a primary-key table", InvalidArgumentException.class, "pk", () -> {
      try (Table t = conn.table(pk);
          VectorSchemaRoot r = TestSupport.rows(alloc(), new Object[] {1L, "a", "eu"})) {
        t.append(r);
        t.flush();
      }
    }));
    cases.add(c("upsert a null key", InvalidArgumentException.class, "id", () -> {
      try (Table t = conn.table(pk);
          VectorSchemaRoot r = TestSupport.rows(alloc(), new Object[] {null, "a", "eu"})) {
        t.upsert(r);
        t.flush();
      }
    }));
    cases.add(c("partial update without the key", InvalidArgumentException.class, "id", () -> {
      try (Table t = conn.table(pk);
          VectorSchemaRoot r = TestSupport.rows(alloc(), new Object[] {1L, "a", "eu"})) {
        t.upsert(r, List.of("name"));
        t.flush();
      }
    }));
    cases.add(c("partial update of unknown column", InvalidArgumentException.class, "nope", () -> {
      try (Table t = conn.table(pk);
          VectorSchemaRoot r = TestSupport.rows(alloc(), new Object[] {1L, "a", "eu"})) {
        t.upsert(r, List.of("id", "nope"));
        t.flush();
      }
    }));
    // ---- reads
    cases.add(c("project an unknown column", InvalidArgumentException.class, "nope",
        () -> read(logs, ReadOptions.builder().columns("nope").build())));
    cases.add(c("filter on unknown column", InvalidArgumentException.class, "nope",
        () -> read(logs, ReadOptions.builder().filter("nope = 1").build())));
    cases.add(c("filter cut short", InvalidArgumentException.class, "id >",
        () -> read(logs, ReadOptions.builder().filter("id >").build())));
    cases.add(c("filter with unknown operator", InvalidArgumentException.class, "~~",
        () -> read(logs, ReadOptions.builder().filter("id ~~ 3").build())));
    cases.add(c("filter value of wrong type", InvalidArgumentException.class, "abc",
        () -> read(logs, ReadOptions.builder().filter("id = 'abc'").build())));
    cases.add(c("filter nested 20000 deep", InvalidArgumentException.class, "deep",
        () -> read(logs, ReadOptions.builder().filter(deep).build())));
    cases.add(c("filter NOT repeated 20000 times", InvalidArgumentException.class, "deep",
        () -> read(logs, ReadOptions.builder().filter(nots).build())));
    cases.add(c("unknown partition", PartitionNotFoundException.class, "mars",
        () -> read(parts, ReadOptions.builder().partitions("mars").build())));
    cases.add(c("partitions of unpartitioned table", InvalidArgumentException.class, "logs",
        () -> read(logs, ReadOptions.builder().partitions("eu").build())));
    cases.add(c("bucket the table lacks", InvalidArgumentException.class, "99",
        () -> read(logs, ReadOptions.builder().buckets(99).build())));
    cases.add(c("negative bucket", InvalidArgumentException.class, "-1",
        () -> read(logs, ReadOptions.builder().buckets(-1).build())));
    cases.add(c("negative limit", InvalidArgumentException.class, "-1",
        () -> read(logs, ReadOptions.builder().limit(-1).build())));
    cases.add(c("window start not a time", InvalidArgumentException.class, "garbage-time",
        () -> read(logs, ReadOptions.builder().start("garbage-time").build())));
    cases.add(c("window start after end", InvalidArgumentException.class, "2024-01-02",
        () -> read(logs, ReadOptions.builder().start("2024-01-02 00:00:00")
            .end("2024-01-01 00:00:00").build())));
    cases.add(c("window with impossible date", InvalidArgumentException.class, "2024-02-30",
        () -> read(logs, ReadOptions.builder().start("2024-02-30 00:00:00").build())));
    cases.add(c("window in unknown zone", InvalidArgumentException.class, "Mars/Olympus_Mons",
        () -> read(logs, ReadOptions.builder().start("2024-01-01 00:00:00")
            .zone("Mars/Olympus_Mons").build())));
    cases.add(c("window end without start", InvalidArgumentException.class, "start",
        () -> read(logs, ReadOptions.builder().end(1000L).build())));
    cases.add(c("read-optimized window", InvalidArgumentException.class, "read",
        () -> read(pk, ReadOptions.builder().start(0L).readOptimized(true).build())));
    cases.add(c("negative batch size", InvalidArgumentException.class, "-1",
        () -> read(logs, ReadOptions.builder().batchSize(-1).build())));
    // ---- lookups
    cases.add(c("lookup on a log table", InvalidArgumentException.class, "logs", () -> {
      try (Table t = conn.table(logs);
          VectorSchemaRoot k = TestSupport.longs(alloc(), "id", 1)) {
        t.lookup(k).close();
      }
    }));
    cases.add(c("lookup without the key column", InvalidArgumentException.class, "id", () -> {
      try (Table t = conn.table(pk);
          VectorSchemaRoot k = TestSupport.longs(alloc(), "nope", 1)) {
        t.lookup(k).close();
      }
    }));
    // ---- subscriptions
    cases.add(c("subscribe to a bucket the table lacks", InvalidArgumentException.class, "99",
        () -> {
          try (Table t = conn.table(logs)) {
            t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).buckets(99).build())
                .close();
          }
        }));
    cases.add(c("subscribe to an unknown partition", PartitionNotFoundException.class, "mars",
        () -> {
          try (Table t = conn.table(parts)) {
            t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).partitions("mars").build())
                .close();
          }
        }));
    cases.add(c("poll with a negative timeout", InvalidArgumentException.class, "-0.001", () -> {
      try (Table t = conn.table(logs);
          Subscription s = t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).build())) {
        s.poll(Duration.ofMillis(-1));
      }
    }));
    // ---- closed handles
    cases.add(c("closed connection", ClosedException.class, "closed", () -> {
      Connection x = Riverlet.connect(conn.bootstrapServers(), Map.of());
      x.close();
      x.admin().listDatabases();
    }));
    cases.add(c("table of a closed connection", ClosedException.class, "closed", () -> {
      Connection x = Riverlet.connect(conn.bootstrapServers(), Map.of());
      Table t = x.table(logs);
      x.close();
      drain(t.scan());
    }));
    cases.add(c("closed table", ClosedException.class, "closed", () -> {
      Table t = conn.table(logs);
      t.close();
      t.count();
    }));
    cases.add(c("closed subscription", ClosedException.class, "closed", () -> {
      try (Table t = conn.table(logs)) {
        Subscription s = t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).build());
        s.close();
        s.poll(Duration.ofMillis(10));
      }
    }));
    return cases;
  }

  @Test
  void theCatalogueHasAtLeastFiftyDistinctCases() throws IOException {
    List<Case> cases = catalogue();
    assertTrue(cases.size() >= 50, cases.size() + " cases");
    assertEquals(cases.size(), cases.stream().map(Case::id).distinct().count());
  }

  @TestFactory
  Stream<DynamicTest> everyBadInputIsATypedErrorNamingIt() throws IOException {
    return catalogue().stream().map(k -> DynamicTest.dynamicTest(k.id(), () -> {
      RiverletException e = assertThrows(k.error(), () -> k.call().run(), k.id());
      String message = String.valueOf(e.getMessage());
      assertTrue(message.toLowerCase(Locale.ROOT).contains(k.names().toLowerCase(Locale.ROOT)),
          k.id() + ": the message does not name '" + k.names() + "': " + message);
      assertFalse(message.contains("panicked"), message);
    }));
  }
}
