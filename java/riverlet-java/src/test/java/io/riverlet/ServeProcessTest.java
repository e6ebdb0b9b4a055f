package io.riverlet;

import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The binding against `riverlet serve` in another process, and that process going away. */
class ServeProcessTest {

  @Test
  void roundTripThenServerDown(@TempDir Path dir) throws Exception {
    try (TestSupport.ServeProcess serve = new TestSupport.ServeProcess(dir);
        Connection c = Riverlet.connect(serve.bootstrap,
            Map.of("client.request-timeout", "5s", "client.connect-timeout", "2s"))) {
      Admin a = c.admin();
      a.createDatabase("d", false);
      a.createTable("d.pk",
          TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").build(), false);
      try (Table t = c.table("d.pk")) {
        try (VectorSchemaRoot r = rows(c.allocator(), new Object[] {1L, "a", "eu"},
            new Object[] {2L, "b", "us"})) {
          t.upsert(r);
        }
        t.flush();
        assertEquals(2, readAll(t.scan()).size());
        assertEquals(2, t.count());
        try (VectorSchemaRoot k = TestSupport.longs(c.allocator(), "id", 2);
            VectorSchemaRoot found = t.lookup(k)) {
          assertEquals(List.of(List.of(2L, "b", "us")), TestSupport.values(found));
        }
        serve.kill();
        RiverletException e = assertThrows(RiverletException.class, t::count);
        assertTrue(e.kind() == ErrorKind.NETWORK || e.kind() == ErrorKind.TIMEOUT,
            e.kind() + ": " + e.getMessage());
        assertThrows(NetworkException.class,
            () -> Riverlet.connect(serve.bootstrap, Map.of("client.connect-timeout", "1s")));
      }
    }
  }
}
