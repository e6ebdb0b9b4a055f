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
        // The callback runs on the thread that completes the future: a runtime thread, unless
        // the lookup was done before thenApply registered it (then retry).
        String seen = null;
        String refused = null;
        for (int attempt = 0; attempt < 50 && (seen == null || refused == null); attempt++) {
          try (VectorSchemaRoot keys = TestSupport.longs(c.allocator(), "id", 2, 1)) {
            String r = t.lookupAsync(keys).thenApply(found -> {
              try (found) {
                Thread th = Thread.currentThread();
                if (!th.getName().startsWith("riverlet-")) {
                  return null;
                }
                // On the runtime thread: this loader's classes and the imported data.
                List<List<Object>> rows = TestSupport.values(found);
                String blocking;
                try {
                  t.count();
                  blocking = "not refused";
                } catch (UnsupportedException e) {
                  blocking = "refused";
                }
                return "thread=" + th.getName() + " daemon=" + th.isDaemon() + " loader="
                    + (Table.class.getClassLoader() == IsolatedProbe.class.getClassLoader())
                    + " rows=" + rows + " blocking-call-on-runtime-thread=" + blocking;
              }
            }).get(60, TimeUnit.SECONDS);
            if (r != null) {
              seen = r;
              refused = r;
            }
          }
        }
        // Where this loader's copy of the native library came from, and whether its file is
        // still there (a copy extracted from the JAR is deleted once loaded).
        String source = NativeLibrary.source();
        boolean extracted = source != null && !source.equals("java.library.path");
        return seen + " native-source=" + (extracted ? "extracted" : source)
            + " extracted-copy-left=" + (extracted && java.nio.file.Files.exists(
                java.nio.file.Path.of(source)));
      }
    }
  }
}
