package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JAR loaded through an isolated URLClassLoader (as Spark and Flink load connector JARs,
 * child-first): a table is read on a thread Riverlet's runtime created.
 */
class IsolatedClassLoaderIT {

  static List<URL> isolatedUrls() throws Exception {
    List<URL> urls = new ArrayList<>();
    urls.add(Path.of(System.getProperty("riverlet.test.jar")).toUri().toURL());
    urls.add(Path.of(System.getProperty("riverlet.test.classes")).toUri().toURL());
    for (String entry : System.getProperty("riverlet.test.classpath").split(File.pathSeparator)) {
      if (!entry.isBlank()) {
        urls.add(Path.of(entry).toUri().toURL());
      }
    }
    return urls;
  }

  @Test
  @SuppressWarnings("unchecked")
  void readsATableFromARuntimeThreadUnderAnIsolatedLoader(@TempDir Path dir) throws Exception {
    try (LocalServer server = LocalServer.start(dir, 0);
        URLClassLoader isolated = new URLClassLoader("riverlet-isolated",
            isolatedUrls().toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
      Class<?> probeClass = Class.forName("io.riverlet.IsolatedProbe", true, isolated);
      assertNotSame(IsolatedProbe.class, probeClass);
      assertNotSame(Table.class, Class.forName("io.riverlet.Table", false, isolated));
      Callable<String> probe = (Callable<String>) probeClass.getConstructor(String.class)
          .newInstance(server.bootstrapServers());
      String result = probe.call();
      assertTrue(result.contains("thread=riverlet-worker"), result);
      assertTrue(result.contains("daemon=true"), result);
      assertTrue(result.contains("loader=true"), result);
      assertTrue(result.contains("rows=[[2, b, us], [1, a, eu]]"), result);
      assertTrue(result.contains("blocking-call-on-runtime-thread=refused"), result);
      // The isolated loader cannot share the library the test's loader loaded, so it loads the
      // copy inside the JAR; that copy's file is gone once loaded (nothing left in the temp
      // directory when the JVM is killed, no copy per job in a long-lived JVM).
      assertTrue(result.contains("native-source=extracted"), result);
      assertTrue(result.contains("extracted-copy-left=false"), result);
    }
  }

  /** The packaged JAR carries the native library the loader extracts (no library path). */
  @Test
  void theJarCarriesTheNativeLibrary() throws Exception {
    try (java.util.jar.JarFile jar =
        new java.util.jar.JarFile(System.getProperty("riverlet.test.jar"))) {
      java.util.jar.JarEntry lib = jar.getJarEntry("native/linux-x86_64/libriverlet_jni.so");
      assertNotNull(lib, "native library entry in " + jar.getName());
      assertTrue(lib.getSize() > 0, "empty native library in " + jar.getName());
    }
  }
}
