package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A child JVM with -Xcheck:jni uses the API from several threads and exits by itself. */
class ChildJvmIT {

  @Test
  void childJvmWithCheckJniExitsAfterMain(@TempDir Path dir) throws Exception {
    StringBuilder cp = new StringBuilder();
    cp.append(System.getProperty("riverlet.test.jar"));
    cp.append(File.pathSeparator).append(System.getProperty("riverlet.test.classes"));
    cp.append(File.pathSeparator).append(System.getProperty("riverlet.test.classpath"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xcheck:jni",
        "--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED",
        "-cp", cp.toString(), "io.riverlet.ChildJvmMain", dir.resolve("data").toString()));
    Path log = dir.resolve("child.log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    // Generous: the point is that it ends at all; a JVM kept alive by a native thread never does.
    boolean exited = p.waitFor(240, TimeUnit.SECONDS);
    String out = Files.readString(log, StandardCharsets.UTF_8);
    if (!exited) {
      p.destroyForcibly();
    }
    assertTrue(exited, "the child JVM did not exit after main returned:\n" + out);
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("main done"), out);
    assertFalse(out.contains("FATAL ERROR in native method"), out);
    // arrow-c-data's own JNI library passes "Lpkg/Class;" descriptors to FindClass (a warning
    // of -Xcheck:jni that is not ours); any other JNI warning fails the test.
    for (String line : out.split("\n")) {
      if (line.contains("WARNING in native method")) {
        assertTrue(line.contains("JNI FindClass received a bad class descriptor")
            && !line.contains("io/riverlet"), line);
      }
    }
  }
}
