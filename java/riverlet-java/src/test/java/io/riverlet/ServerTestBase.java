package io.riverlet;

import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * One server and one connection per test class; each test makes its own database. The server is
 * the embedded one ({@link LocalServer}, inside this JVM) unless the environment variable
 * {@code RIVERLET_TEST_BOOTSTRAP} names another (the real-Fluss interop run sets it to an
 * Apache Fluss cluster).
 */
abstract class ServerTestBase {
  @TempDir static Path dataDir;

  static LocalServer server;
  static Connection conn;
  static Admin admin;

  /** The tag of the test classes that also pass against Apache Fluss (see run-interop.sh). */
  static final String INTEROP_TAG = "interop";

  /** The external server's bootstrap address, or null for the embedded one. */
  static final String EXTERNAL_BOOTSTRAP = externalBootstrap();

  private static String externalBootstrap() {
    String b = System.getenv("RIVERLET_TEST_BOOTSTRAP");
    return b == null || b.isBlank() ? null : b;
  }

  @BeforeAll
  static void startServer() {
    String bootstrap;
    if (EXTERNAL_BOOTSTRAP != null) {
      bootstrap = EXTERNAL_BOOTSTRAP;
    } else {
      server = LocalServer.start(dataDir, 0);
      bootstrap = server.bootstrapServers();
    }
    conn = Riverlet.connect(bootstrap, Map.of());
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
