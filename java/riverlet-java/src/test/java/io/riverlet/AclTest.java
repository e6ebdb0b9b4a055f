package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ACLs through the Java API against an embedded server with {@code authorizer.enabled}: a refusal
 * is an {@link AuthorizationException} naming principal, operation and resource; grants, lists and
 * drops go through the core.
 */
class AclTest {
  @TempDir Path dataDir;

  private static Connection login(LocalServer server, String user) {
    return Riverlet.connect(server.bootstrapServers(), Map.of(
        "client.security.protocol", "SASL",
        "client.security.sasl.username", user,
        "client.security.sasl.password", user + "-pw"));
  }

  private static void assertDenied(RuntimeException e, String user, String op, String resource) {
    AuthorizationException a = assertInstanceOf(AuthorizationException.class, e);
    assertInstanceOf(AuthenticationException.class, a);
    assertEquals("AUTHORIZATION_EXCEPTION", a.flussCodeName());
    String m = a.getMessage();
    assertTrue(m.contains("name='" + user + "'") && m.contains(" " + op + " ")
        && m.contains(resource), m);
  }

  @Test
  void refusalsGrantsListsAndDrops() {
    try (LocalServer server = LocalServer.start(dataDir, "127.0.0.1", 0,
            Map.of("admin", "admin-pw", "alice", "alice-pw"),
            Map.of("authorizer.enabled", "true", "super.users", "User:admin"));
        Connection admin = login(server, "admin");
        Connection alice = login(server, "alice")) {
      admin.admin().createDatabase("shop", false);
      admin.admin().createTable("shop.orders",
          TableDescriptor.builder(TestSupport.idNameRegion()).build(), false);

      assertDenied(assertThrows(RuntimeException.class,
          () -> alice.admin().createDatabase("mine", false)),
          "alice", "CREATE", "Resource{type=CLUSTER, name='fluss-cluster'}");
      assertEquals(List.of(), alice.admin().listTables("shop"));
      assertDenied(assertThrows(RuntimeException.class,
          () -> alice.admin().getTableInfo("shop.orders")),
          "alice", "DESCRIBE", "Resource{type=TABLE, name='shop.orders'}");

      AclEntry read = AclEntry.allow("cluster.shop.orders", "User:alice", "READ");
      admin.admin().createAcls(List.of(read));
      assertEquals(List.of("orders"), alice.admin().listTables("shop"));
      assertEquals("orders", alice.admin().getTableInfo("shop.orders").tableName());
      assertDenied(assertThrows(RuntimeException.class,
          () -> alice.admin().createAcls(List.of(AclEntry.allow("cluster.shop", "User:alice", "ALL")))),
          "alice", "ALTER", "Resource{type=DATABASE, name='shop'}");

      assertEquals(List.of(read), admin.admin().listAcls(null, "User:alice", null, null, null));
      assertEquals(List.of(), admin.admin().listAcls(null, null, "WRITE", null, null));
      assertEquals(List.of(read), admin.admin().dropAcls("cluster.shop.orders", null, null, null, null));
      assertEquals(List.of(), admin.admin().listAcls(null, null, null, null, null));
      assertEquals(List.of(), alice.admin().listTables("shop"));

      InvalidArgumentException bad = assertThrows(InvalidArgumentException.class,
          () -> admin.admin().createAcls(List.of(AclEntry.allow("shop", "User:alice", "READ"))));
      assertTrue(bad.getMessage().contains("'shop'"), bad.getMessage());
    }
  }
}
