package io.riverlet;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The program {@code ChildJvmIT} runs in a child JVM with {@code -Xcheck:jni}: the API from
 * several threads at once, async lookups completed on runtime threads, and a server and a
 * connection deliberately left open. {@code main} then returns without {@code System.exit}: the
 * JVM must exit by itself (no non-daemon thread of Riverlet's keeps it alive).
 */
public final class ChildJvmMain {
  private ChildJvmMain() {}

  /**
   * Entry point.
   *
   * @param args the data directory
   * @throws Exception on failure (the exit code is then non-zero)
   */
  public static void main(String[] args) throws Exception {
    Path dir = Files.createDirectories(Path.of(args[0]));
    LocalServer server = LocalServer.start(dir, 0);
    Connection conn = Riverlet.connect(server.bootstrapServers(), Map.of());
    conn.admin().createDatabase("d", false);
    conn.admin().createTable("d.pk", TableDescriptor.builder(TestSupport.idNameRegion())
        .primaryKey("id").bucketCount(3).build(), false);
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int w = 0; w < 4; w++) {
      final int worker = w;
      Thread th = new Thread(() -> {
        try (Table t = conn.table("d.pk")) {
          for (int i = 0; i < 5; i++) {
            long id = worker * 100L + i;
            try (VectorSchemaRoot r = TestSupport.rows(conn.allocator(),
                new Object[] {id, "w" + worker, "eu"})) {
              t.upsert(r);
            }
            t.flush();
            try (ArrowReader reader = t.scan()) {
              while (reader.loadNextBatch()) {
                reader.getVectorSchemaRoot().getRowCount();
              }
            }
            try (VectorSchemaRoot k = TestSupport.longs(conn.allocator(), "id", id);
                VectorSchemaRoot found = t.lookupAsync(k).get(60, TimeUnit.SECONDS)) {
              if (found.getRowCount() != 1) {
                throw new IllegalStateException("lookup of " + id + " found "
                    + found.getRowCount() + " rows");
              }
            }
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }, "worker-" + w);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    if (!failures.isEmpty()) {
      failures.get(0).printStackTrace();
      throw new IllegalStateException(failures.size() + " worker(s) failed");
    }
    try (Table t = conn.table("d.pk")) {
      long n = t.count();
      if (n != 20) {
        throw new IllegalStateException("expected 20 rows, counted " + n);
      }
    }
    System.out.println("main done; left open: " + server + " and " + conn);
  }
}
