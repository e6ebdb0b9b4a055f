package io.riverlet;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Runs inside an isolated class loader (see {@code IsolatedClassLoaderIT}): writes a table,
 * then reads it from a thread of Riverlet's runtime (the completion of {@link
 * Table#lookupAsync}), where only class references resolved in {@code JNI_OnLoad} and this
 * loader's classes are usable.
 */
public final class IsolatedProbe implements Callable<String> {
  private final String bootstrap;

  /**
   * A probe of the server at {@code bootstrap}.
   *
   * @param bootstrap host:port
   */
  public IsolatedProbe(String bootstrap) {
    this.bootstrap = bootstrap;
  }

  @Override
  public String call() throws Exception {
    try (Connection c = Riverlet.connect(bootstrap, Map.of())) {
      Admin a = c.admin();
      a.createDatabase("iso", true);
      a.createTable("iso.t",
          TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").build(), true);
      try (Table t = c.table("iso.t")) {
        try (VectorSchemaRoot r = TestSupport.rows(c.allocator(), new Object[] {1L, "a", "eu"},
            new Object[] {2L, "b", "us"})) {
          t.upsert(r);
        }
        t.flush();
        String seen;
        try (VectorSchemaRoot keys = TestSupport.longs(c.allocator(), "id", 2, 1)) {
          seen = t.lookupAsync(keys).thenApply(found -> {
            try (found) {
              Thread th = Thread.currentThread();
              // Runs on the runtime thread: classes of this loader and the imported data.
              List<List<Object>> rows = TestSupport.values(found);
              return "thread=" + th.getName() + " daemon=" + th.isDaemon()
                  + " loader=" + (Table.class.getClassLoader() == IsolatedProbe.class.getClassLoader())
                  + " rows=" + rows;
            }
          }).get(60, TimeUnit.SECONDS);
        }
        // A blocking call made from a runtime thread is refused with a typed error, not a hang.
        String refused;
        try (VectorSchemaRoot keys = TestSupport.longs(c.allocator(), "id", 1)) {
          refused = t.lookupAsync(keys).thenApply(found -> {
            found.close();
            try {
              t.count();
              return "not refused";
            } catch (UnsupportedException e) {
              return "refused";
            }
          }).get(60, TimeUnit.SECONDS);
        }
        return seen + " blocking-call-on-runtime-thread=" + refused;
      }
    }
  }
}
