package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster administration through the Java admin API against an embedded server: server options
 * with their source, a dynamic option changed, persisted across a restart and deleted, other
 * options refused by name, and a database's comment and properties changed and persisted.
 */
class ClusterAdminTest {
  @TempDir Path dataDir;

  private static ConfigEntry option(Admin a, String key) {
    return a.describeClusterConfigs().stream().filter(c -> c.key().equals(key)).findFirst()
        .orElse(null);
  }

  private static LocalServer server(Path dir) {
    return LocalServer.start(dir, "127.0.0.1", 0, Map.of(), Map.of("log.segment.file-size", "1mb"));
  }

  @Test
  void dynamicOptionsPersistAndOthersAreRefusedByName() {
    try (LocalServer s = server(dataDir);
        Connection conn = Riverlet.connect(s.bootstrapServers(), Map.of())) {
      Admin a = conn.admin();
      assertEquals(new ConfigEntry("log.segment.file-size", "1mb", "INITIAL_SERVER_CONFIG"),
          option(a, "log.segment.file-size"));
      assertNull(option(a, "kv.snapshot.interval"));
      a.alterClusterConfigs(Map.of("kv.snapshot.interval", "10 min"), null);
      assertEquals(new ConfigEntry("kv.snapshot.interval", "10 min", "DYNAMIC_SERVER_CONFIG"),
          option(a, "kv.snapshot.interval"));
      RiverletException e = assertThrows(RiverletException.class,
          () -> a.alterClusterConfigs(Map.of("log.segment.file-size", "2mb"), null));
      assertTrue(e.getMessage().contains("log.segment.file-size"), e.getMessage());
      assertTrue(e.getMessage().contains("not allowed to be changed dynamically"), e.getMessage());
      e = assertThrows(RiverletException.class,
          () -> a.alterClusterConfigs(Map.of("kv.snapshot.interval", "soon"), null));
      assertTrue(e.getMessage().contains("soon"), e.getMessage());
    }
    try (LocalServer s = server(dataDir);
        Connection conn = Riverlet.connect(s.bootstrapServers(), Map.of())) {
      Admin a = conn.admin();
      assertEquals("10 min", option(a, "kv.snapshot.interval").value());
      a.alterClusterConfigs(null, List.of("kv.snapshot.interval"));
      assertNull(option(a, "kv.snapshot.interval"));
    }
  }

  @Test
  void alterDatabasePersists() {
    try (LocalServer s = LocalServer.start(dataDir, 0);
        Connection conn = Riverlet.connect(s.bootstrapServers(), Map.of())) {
      Admin a = conn.admin();
      a.createDatabase("shop", false);
      a.alterDatabase("shop", Map.of("owner", "ops", "tier", "gold"), null, "orders", false);
    }
    try (LocalServer s = LocalServer.start(dataDir, 0);
        Connection conn = Riverlet.connect(s.bootstrapServers(), Map.of())) {
      Admin a = conn.admin();
      DatabaseInfo info = a.databaseInfo("shop");
      assertEquals("orders", info.comment());
      assertEquals(Map.of("owner", "ops", "tier", "gold"), info.customProperties());
      assertTrue(info.modifiedTimeMs() >= info.createdTimeMs(), info.toString());
      a.alterDatabase("shop", null, List.of("tier"), "", false);
      info = a.databaseInfo("shop");
      assertNull(info.comment());
      assertEquals(Map.of("owner", "ops"), info.customProperties());
      DatabaseNotFoundException missing = assertThrows(DatabaseNotFoundException.class,
          () -> a.alterDatabase("nowhere", Map.of("a", "b"), null, null, false));
      assertTrue(missing.getMessage().contains("nowhere"), missing.getMessage());
      a.alterDatabase("nowhere", Map.of("a", "b"), null, null, true);
      assertThrows(NullPointerException.class,
          () -> a.alterClusterConfigs(java.util.Collections.singletonMap("k", null), null));
    }
  }
}
