package io.riverlet;

import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Typed exceptions at the boundary: never a crash, never an untyped error. */
class ErrorsTest extends ServerTestBase {

  @Test
  void unknownTableAndDatabase() {
    String db = newDatabase();
    TableNotFoundException e =
        assertThrows(TableNotFoundException.class, () -> conn.table(db + ".nope"));
    assertTrue(e.getMessage().contains("nope"), e.getMessage());
    assertEquals(ErrorKind.NOT_FOUND, e.kind());
    assertTrue(e.hasFlussCode());
    assertEquals("TABLE_NOT_EXIST", e.flussCodeName());
    assertThrows(DatabaseNotFoundException.class, () -> admin.listTables("no_such_db_xyz"));
  }

  @Test
  void nullPrimaryKeyIsInvalidArgumentNamingTheColumn() {
    String db = newDatabase();
    String name = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").build());
    try (Table t = conn.table(name);
        VectorSchemaRoot r = rows(alloc(), new Object[] {null, "a", "eu"})) {
      // The schema says id is NOT NULL: build the batch with a nullable id to get a null in.
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> {
        t.upsert(r);
        t.flush();
      });
      assertTrue(e.getMessage().contains("id"), e.getMessage());
    }
  }

  @Test
  void missingColumnAndBadFilterAndBadColumn() {
    String db = newDatabase();
    String name = createTable(db, "log", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    try (Table t = conn.table(name)) {
      InvalidArgumentException col = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().columns("id", "nope").build()));
      assertTrue(col.getMessage().contains("nope"), col.getMessage());
      InvalidArgumentException filter = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().filter("id >>> 3").build()));
      assertTrue(filter.getMessage().contains(">>>"), filter.getMessage());
      try (VectorSchemaRoot keys = TestSupport.longs(alloc(), "other", 1)) {
        assertThrows(InvalidArgumentException.class, () -> t.append(keys));
      }
    }
  }

  @Test
  void closedHandlesThrowClosedException() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "log", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    try (LocalServer own = LocalServer.start(dataDir.resolve("closed-" + db), 0)) {
      Connection c = Riverlet.connect(own.bootstrapServers(), Map.of());
      Admin a = c.admin();
      a.createDatabase("d", false);
      a.createTable("d.t", TableDescriptor.builder(TestSupport.idNameRegion()).build(), false);
      Table t = c.table("d.t");
      Table t2 = c.table("d.t");
      t2.close();
      t2.close();
      assertThrows(ClosedException.class, () -> t2.scan());
      assertFalse(t.isClosed());
      c.close();
      c.close();
      assertTrue(c.isClosed());
      assertTrue(t.isClosed(), "closing the connection closes its tables");
      ClosedException e = assertThrows(ClosedException.class, t::count);
      assertTrue(e.getMessage().contains("d.t"), e.getMessage());
      assertThrows(ClosedException.class, () -> a.listDatabases());
      assertThrows(ClosedException.class, () -> c.table("d.t"));
      assertThrows(ClosedException.class, c::admin);
    }
    assertFalse(conn.isClosed());
    try (Table t = conn.table(name)) {
      assertEquals(0, t.count());
    }
  }

  @Test
  void nothingListeningIsANetworkError() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    NetworkException e = assertThrows(NetworkException.class,
        () -> Riverlet.connect("127.0.0.1:" + port, Map.of("client.connect-timeout", "2s")));
    assertTrue(e.getMessage().contains(Integer.toString(port)), e.getMessage());
  }

  @Test
  void unknownOptionIsInvalidArgument() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> Riverlet.connect(server.bootstrapServers(), Map.of("client.no-such-option", "1")));
    assertTrue(e.getMessage().contains("client.no-such-option"), e.getMessage());
  }

  @Test
  void serverGoneMidSession(@TempDir Path dir) throws Exception {
    LocalServer own = LocalServer.start(dir, 0);
    try (Connection c = Riverlet.connect(own.bootstrapServers(), Map.of())) {
      Admin a = c.admin();
      a.createDatabase("d", false);
      a.createTable("d.t", TableDescriptor.builder(TestSupport.idNameRegion()).build(), false);
      try (Table t = c.table("d.t")) {
        own.close();
        assertFalse(own.isRunning());
        RiverletException e = assertThrows(RiverletException.class, () -> {
          try (ArrowReader r = t.scan()) {
            while (r.loadNextBatch()) {
              // drain
            }
          }
        });
        assertTrue(
            e.kind() == ErrorKind.NETWORK || e.kind() == ErrorKind.TIMEOUT,
            e.kind() + ": " + e.getMessage());
      }
    } finally {
      own.close();
    }
  }

  @Test
  void authenticationFailureIsTyped(@TempDir Path dir) {
    try (LocalServer secured = LocalServer.start(dir, "127.0.0.1", 0, Map.of("alice", "s3cret"))) {
      Map<String, String> good = Map.of(
          "client.security.protocol", "SASL",
          "client.security.sasl.mechanism", "PLAIN",
          "client.security.sasl.username", "alice",
          "client.security.sasl.password", "s3cret");
      try (Connection c = Riverlet.connect(secured.bootstrapServers(), good)) {
        assertTrue(c.admin().listDatabases().contains("fluss"));
      }
      Map<String, String> bad = new java.util.HashMap<>(good);
      bad.put("client.security.sasl.password", "wrong");
      assertThrows(AuthenticationException.class, () -> {
        try (Connection c = Riverlet.connect(secured.bootstrapServers(), bad)) {
          c.admin().listDatabases();
        }
      });
    }
  }
}
