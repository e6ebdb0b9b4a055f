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

  /** Creates a table and returns its qualified name (ready for writes, see awaitLeaders). */
  static String createTable(String db, String name, TableDescriptor d) {
    String full = db + "." + name;
    admin.createTable(full, d, false);
    awaitLeaders(full, () -> admin.createTable(full, d, false));
    return full;
  }

  /**
   * The Fluss error codes of a new table that is not ready yet: LEADER_NOT_AVAILABLE (44) until the
   * coordinator elects leaders, then for a moment UNKNOWN_TABLE_OR_BUCKET (21) or
   * NOT_LEADER_OR_FOLLOWER (12) while the tablet server creates the replicas.
   */
  private static boolean notReadyYet(RiverletException e) {
    return e.hasFlussCode()
        && (e.flussCode() == 44 || e.flussCode() == 21 || e.flussCode() == 12);
  }

  /** How long one attempt waits for a new table's leaders. */
  private static final long LEADER_WAIT_MS = 20_000;

  /**
   * Against an external server, waits until every bucket of the new table {@code full} has a
   * leader (a ListOffsets of every bucket answers). Apache Fluss 0.9.1's coordinator sometimes
   * never assigns buckets to a just-created table (the create-table race of tests/README.md), so
   * after {@link #LEADER_WAIT_MS} without leaders the table is dropped and {@code recreate} runs,
   * up to three attempts. Partitioned tables are not probed: their buckets come with partitions.
   * A no-op on the embedded server, which assigns leaders when it creates the table.
   */
  static void awaitLeaders(String full, Runnable recreate) {
    if (EXTERNAL_BOOTSTRAP == null || !admin.getTableInfo(full).partitionKeys().isEmpty()) {
      return;
    }
    for (int attempt = 1; ; attempt++) {
      long deadline = System.nanoTime() + LEADER_WAIT_MS * 1_000_000L;
      while (true) {
        try {
          admin.listOffsets(full, null, OffsetSpec.latest());
          return;
        } catch (RiverletException e) {
          if (!notReadyYet(e)) {
            throw e;
          }
          if (System.nanoTime() > deadline) {
            if (attempt == 3) {
              throw e;
            }
            break;
          }
        }
        sleep(200);
      }
      System.out.println("table " + full + " got no leader within " + LEADER_WAIT_MS
          + " ms (Apache Fluss's create-table race, tests/README.md): re-creating it");
      admin.dropTable(full, false);
      recreate.run();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
