package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Producer offsets (Fluss's Register/Get/DeleteProducerOffsets) through the Java admin API
 * against an embedded server: registered offsets read back, a second registration keeps the
 * first, delete, expiry by the request's TTL and by the server's {@code
 * coordinator.producer-offsets.ttl}, and bad input as typed errors naming the value.
 */
class ProducerOffsetsTest {
  @TempDir Path dataDir;

  private static long table(Connection conn) {
    conn.admin().createDatabase("d", true);
    conn.admin().createTable("d.t", TableDescriptor.builder(TestSupport.idNameRegion())
        .bucketCount(2).build(), true);
    return conn.admin().getTableInfo("d.t").tableId();
  }

  @Test
  void registerGetDelete() {
    try (LocalServer server = LocalServer.start(dataDir, 0);
        Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of())) {
      long t = table(conn);
      Admin a = conn.admin();
      assertNull(a.getProducerOffsets("job"));
      long before = System.currentTimeMillis();
      Map<ProducerBucket, Long> offsets =
          Map.of(ProducerBucket.of(t, 0), 5L, ProducerBucket.of(t, 1), 7L);
      assertTrue(a.registerProducerOffsets("job", offsets, null));
      ProducerOffsets got = a.getProducerOffsets("job");
      assertNotNull(got);
      assertEquals("job", got.producerId());
      assertEquals(offsets, got.offsets());
      // The server's default TTL is Fluss's 24 h.
      long day = 24L * 3600 * 1000;
      assertTrue(got.expirationTimeMs() >= before + day, got.toString());
      assertTrue(got.expirationTimeMs() <= System.currentTimeMillis() + day, got.toString());
      // A live registration is kept.
      assertFalse(a.registerProducerOffsets("job", Map.of(ProducerBucket.of(t, 0), 99L), null));
      assertEquals(offsets, a.getProducerOffsets("job").offsets());
      a.deleteProducerOffsets("job");
      assertNull(a.getProducerOffsets("job"));
      a.deleteProducerOffsets("job");
      // A zero TTL expires at once.
      assertTrue(a.registerProducerOffsets("job0", offsets, Duration.ZERO));
      assertNull(a.getProducerOffsets("job0"));
    }
  }

  @Test
  void theServerTtlOptionExpiresRegistrations() throws InterruptedException {
    try (LocalServer server = LocalServer.start(dataDir, "127.0.0.1", 0, null,
            Map.of("coordinator.producer-offsets.ttl", "1 s"));
        Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of())) {
      long t = table(conn);
      Admin a = conn.admin();
      assertTrue(a.registerProducerOffsets("job", Map.of(ProducerBucket.of(t, 0), 1L), null));
      ProducerOffsets got = a.getProducerOffsets("job");
      assertNotNull(got);
      while (System.currentTimeMillis() <= got.expirationTimeMs()) {
        Thread.sleep(100);
      }
      assertNull(a.getProducerOffsets("job"));
    }
  }

  @Test
  void badInputIsATypedErrorNamingIt() {
    try (LocalServer server = LocalServer.start(dataDir, 0);
        Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of())) {
      long t = table(conn);
      Admin a = conn.admin();
      Map<ProducerBucket, Long> offsets = Map.of(ProducerBucket.of(t, 0), 1L);
      for (String bad : new String[] {"", "job/1", "x".repeat(201)}) {
        for (Runnable call : new Runnable[] {
            () -> a.registerProducerOffsets(bad, offsets, null),
            () -> a.getProducerOffsets(bad),
            () -> a.deleteProducerOffsets(bad)}) {
          RiverletException e = assertThrows(RiverletException.class, call::run);
          assertEquals("INVALID_PRODUCER_ID_EXCEPTION", e.flussCodeName(), e.getMessage());
          assertTrue(e.getMessage().contains("Invalid producer ID '" + bad + "'"), e.getMessage());
        }
      }
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> a.registerProducerOffsets("neg", offsets, Duration.ofMillis(-5)));
      assertTrue(e.getMessage().contains("-5"), e.getMessage());
      assertNull(a.getProducerOffsets("neg"));
    }
  }
}
