package io.riverlet;

import static io.riverlet.TestSupport.list;
import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Table#abort()}: a table's writers stop at once without waiting for the server (what a
 * cancelled stream task wants), acknowledged rows stay, later calls throw {@link
 * ClosedException}.
 */
class WriterAbortTest extends ServerTestBase {

  /**
   * A bound on waits that must end long before it: reaching it fails the test (a liveness check,
   * not a timing assertion). A close would wait for the writer's delivery timeout, 120 s.
   */
  private static final long HANG_SECONDS = 60;

  @TempDir Path ownServerDir;

  private static <T> T within(String what, CompletableFuture<T> f) throws Exception {
    try {
      return f.get(HANG_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      fail(what + " did not return within " + HANG_SECONDS + " s");
      throw e;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception) {
        throw (Exception) e.getCause();
      }
      throw e;
    }
  }

  /** Waits until {@code t} is inside the native flush (bounded; a liveness check). */
  private static void awaitInNativeFlush(Thread t) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_SECONDS);
    while (true) {
      StackTraceElement[] stack = t.getStackTrace();
      if (stack.length > 0 && stack[0].isNativeMethod()
          && stack[0].getClassName().equals(NativeMethods.class.getName())
          && stack[0].getMethodName().equals("flush")) {
        return;
      }
      if (!t.isAlive() || System.nanoTime() > deadline) {
        fail("the flush did not wait for the stopped server (alive: " + t.isAlive() + ")");
      }
      Thread.sleep(10);
    }
  }

  private static List<List<Object>> sortedById(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0)));
    return copy;
  }

  @Test
  void abortReturnsWhileTheServerIsGoneAndLaterCallsFailClosed() throws Exception {
    // A server of this test's own, stopped with writes queued for it.
    LocalServer own = LocalServer.start(ownServerDir, 0);
    try (Connection c = Riverlet.connect(own.bootstrapServers(), Map.of())) {
      c.admin().createDatabase("abort_db", false);
      c.admin().createTable("abort_db.t",
          TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(2).build(), false);
      Table t = c.table("abort_db.t");
      try (VectorSchemaRoot r = rows(c.allocator(), new Object[] {1L, "a", "eu"})) {
        t.append(r);
      }
      t.flush();
      own.close();
      try (VectorSchemaRoot r = rows(c.allocator(), new Object[] {2L, "b", "eu"},
          new Object[] {3L, "c", "us"})) {
        t.append(r);
      }
      // A flush of another thread waits for the server that is gone; the abort answers it.
      CompletableFuture<Throwable> flush = new CompletableFuture<>();
      Thread flusher = new Thread(() -> {
        try {
          t.flush();
          flush.complete(null);
        } catch (RuntimeException e) {
          flush.complete(e);
        }
      }, "flusher");
      flusher.start();
      awaitInNativeFlush(flusher);
      within("abort", CompletableFuture.runAsync(t::abort));
      Throwable flushed = within("the flush beside the abort", flush);
      assertTrue(flushed instanceof ClosedException, String.valueOf(flushed));

      assertTrue(t.isClosed());
      try (VectorSchemaRoot r = rows(c.allocator(), new Object[] {4L, "d", "eu"})) {
        assertThrows(ClosedException.class, () -> t.append(r));
      }
      assertThrows(ClosedException.class, t::flush);
      assertThrows(ClosedException.class, t::count);
      // Idempotent, and a close after it does nothing.
      t.abort();
      t.close();
    } finally {
      own.close();
    }
  }

  @Test
  void abortKeepsAcknowledgedRowsAndTheTableIsWrittenAgain() throws Exception {
    String db = newDatabase();
    for (boolean pk : new boolean[] {false, true}) {
      TableDescriptor.Builder d =
          TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(2);
      String name = createTable(db, pk ? "kv" : "log", (pk ? d.primaryKey("id") : d).build());
      Table t = conn.table(name);
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"},
          new Object[] {2L, "b", "us"})) {
        if (pk) {
          t.upsert(r);
        } else {
          t.append(r);
        }
      }
      t.flush();
      within("abort", CompletableFuture.runAsync(t::abort));
      assertThrows(ClosedException.class, t::flush);

      try (Table again = conn.table(name)) {
        assertEquals(List.of(list(1L, "a", "eu"), list(2L, "b", "us")),
            sortedById(readAll(again.scan())), name);
        try (VectorSchemaRoot r = rows(alloc(), new Object[] {3L, "c", "eu"})) {
          if (pk) {
            again.upsert(r);
          } else {
            again.append(r);
          }
        }
        again.flush();
        assertEquals(
            List.of(list(1L, "a", "eu"), list(2L, "b", "us"), list(3L, "c", "eu")),
            sortedById(readAll(again.scan())), name);
      }
    }
  }
}
