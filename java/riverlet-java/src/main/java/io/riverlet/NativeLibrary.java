package io.riverlet;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads {@code libriverlet_jni} once per class loader: first {@code System.loadLibrary} (for a
 * library installed on {@code java.library.path}), then the copy inside the JAR at {@code
 * /native/<os>-<arch>/}, extracted to a temporary file. A platform without a library gets a clear
 * {@link UnsupportedException} naming the platform and the JAR, on every call (never a {@code
 * NoClassDefFoundError} from a failed static initializer).
 */
final class NativeLibrary {
  /** The library's base name ({@code libriverlet_jni.so} on Linux). */
  static final String NAME = "riverlet_jni";

  private static final Object LOCK = new Object();
  private static boolean loaded;
  private static String source;
  private static RiverletException failure;

  private NativeLibrary() {}

  /**
   * The platform directory of the running JVM, e.g. {@code linux-x86_64}.
   *
   * @return the directory name under {@code /native/} in the JAR
   */
  static String platform() {
    String os = System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "unknown").toLowerCase(Locale.ROOT);
    String osName;
    if (os.contains("linux")) {
      osName = "linux";
    } else if (os.contains("mac") || os.contains("darwin")) {
      osName = "macos";
    } else if (os.contains("windows")) {
      osName = "windows";
    } else {
      osName = os.replaceAll("[^a-z0-9]", "");
    }
    String archName;
    switch (arch) {
      case "amd64":
      case "x86_64":
        archName = "x86_64";
        break;
      case "aarch64":
      case "arm64":
        archName = "aarch64";
        break;
      default:
        archName = arch.replaceAll("[^a-z0-9_]", "");
    }
    return osName + "-" + archName;
  }

  /**
   * Where the library was loaded from (a path, or {@code java.library.path}); a copy extracted
   * from the JAR is deleted once loaded, so the path may no longer exist.
   *
   * @return the source, or null before loading
   */
  static String source() {
    synchronized (LOCK) {
      return source;
    }
  }

  /** Loads the library if this class loader has not yet; throws the same clear error each time. */
  static void ensureLoaded() {
    synchronized (LOCK) {
      if (loaded) {
        return;
      }
      if (failure != null) {
        throw new UnsupportedException(failure.getMessage());
      }
      try {
        load();
        loaded = true;
      } catch (RiverletException e) {
        failure = e;
        throw e;
      }
    }
  }

  private static void load() {
    if (!Boolean.getBoolean("riverlet.native.skipSystemLibrary")) {
      try {
        System.loadLibrary(NAME);
        source = "java.library.path";
        return;
      } catch (UnsatisfiedLinkError notInstalled) {
        // Not installed on this machine: use the copy inside the JAR.
      }
    }
    String platform = platform();
    String file = System.mapLibraryName(NAME);
    String resource = "/native/" + platform + "/" + file;
    URL url = NativeLibrary.class.getResource(resource);
    if (url == null) {
      throw new UnsupportedException(
          "Riverlet has no native library for platform "
              + platform
              + ": "
              + resource
              + " is not in "
              + jarLocation()
              + " (this JAR was built for linux-x86_64); build the JAR on this platform"
              + " (make jar) or put "
              + file
              + " on java.library.path");
    }
    try {
      Path tmp = Files.createTempFile("riverlet_jni-", "-" + file);
      tmp.toFile().deleteOnExit();
      try (InputStream in = url.openStream()) {
        Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      }
      System.load(tmp.toAbsolutePath().toString());
      source = tmp.toString();
      // Loaded: the copy is not needed any more where the OS keeps a loaded library mapped after
      // its file is deleted (Linux, macOS). Deleting it now, not at exit, leaves nothing behind
      // when the JVM is killed, and a long-lived JVM that loads it once per class loader (a
      // Flink TaskManager, one per job) does not pile up a copy per job. Where the file cannot
      // be deleted while loaded (Windows), it stays until exit.
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException stillInUse) {
        // deleteOnExit above
      }
    } catch (IOException | UnsatisfiedLinkError e) {
      throw new RiverletException(
          ErrorKind.IO,
          "cannot load Riverlet's native library " + resource + " from " + jarLocation() + ": " + e,
          e);
    }
  }

  private static String jarLocation() {
    try {
      return String.valueOf(
          NativeLibrary.class.getProtectionDomain().getCodeSource().getLocation());
    } catch (SecurityException | NullPointerException e) {
      return "the Riverlet JAR";
    }
  }
}
