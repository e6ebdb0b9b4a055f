package io.riverlet;

import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * One embedded server ({@link LocalServer}, inside this JVM) and one connection per test class;
 * each test makes its own database. With the system property {@value #BOOTSTRAP_PROPERTY} set
 * (the real-Fluss interop run: tests/fluss-cluster/run-interop.sh), the tests connect to that
 * cluster instead; the classes tagged {@value #INTEROP_TAG} are the ones run there.
 */
abstract class ServerTestBase {
  @TempDir static Path dataDir;

  static LocalServer server;
  static Connection conn;
  static Admin admin;

  /** The bootstrap address of an external Fluss cluster to test against instead. */
  static final String BOOTSTRAP_PROPERTY = "riverlet.test.bootstrap";
  /** The tag of the test classes that the interop run runs against Apache Fluss. */
  static final String INTEROP_TAG = "interop";

  @BeforeAll
  static void startServer() {
    String external = System.getProperty(BOOTSTRAP_PROPERTY, "");
    if (external.isBlank()) {
      server = LocalServer.start(dataDir, 0);
      conn = Riverlet.connect(server.bootstrapServers(), Map.of());
    } else {
      conn = Riverlet.connect(external, Map.of());
    }
    admin = conn.admin();
  }

  @AfterAll
  static void stopServer() {
    if (conn != null) {
      conn.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static BufferAllocator alloc() {
    return conn.allocator();
  }

  /** A new database for one test. */
  static String newDatabase() {
    String db = TestSupport.uniqueName("db");
    admin.createDatabase(db, false);
    return db;
  }

  /** Creates a table and returns its qualified name. */
  static String createTable(String db, String name, TableDescriptor d) {
    String full = db + "." + name;
    admin.createTable(full, d, false);
    return full;
  }
}
