package io.riverlet;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** Helpers shared by the tests: servers, schemas, batches, reading a reader into rows. */
final class TestSupport {
  private static final AtomicInteger COUNTER = new AtomicInteger();

  private TestSupport() {}

  /** A database name unique in this JVM run. */
  static String uniqueName(String prefix) {
    return prefix + "_" + ProcessHandle.current().pid() + "_" + COUNTER.incrementAndGet();
  }

  static Field field(String name, ArrowType type, boolean nullable) {
    return new Field(name, new FieldType(nullable, type, null), null);
  }

  /** (id BIGINT NOT NULL, name STRING, region STRING) */
  static Schema idNameRegion() {
    return new Schema(
        List.of(
            field("id", new ArrowType.Int(64, true), false),
            field("name", ArrowType.Utf8.INSTANCE, true),
            field("region", ArrowType.Utf8.INSTANCE, true)));
  }

  /** A batch of (id, name, region) rows; a null name or region stays null. */
  static VectorSchemaRoot rows(BufferAllocator alloc, Object[]... rows) {
    boolean nullId = Arrays.stream(rows).anyMatch(r -> r[0] == null);
    Schema schema = idNameRegion();
    if (nullId) {
      // A null key needs a nullable field to be representable at all.
      List<Field> fields = new ArrayList<>(schema.getFields());
      fields.set(0, field("id", new ArrowType.Int(64, true), true));
      schema = new Schema(fields);
    }
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
    root.allocateNew();
    BigIntVector id = (BigIntVector) root.getVector("id");
    VarCharVector name = (VarCharVector) root.getVector("name");
    VarCharVector region = (VarCharVector) root.getVector("region");
    for (int i = 0; i < rows.length; i++) {
      if (rows[i][0] == null) {
        id.setNull(i);
      } else {
        id.setSafe(i, ((Number) rows[i][0]).longValue());
      }
      setString(name, i, (String) rows[i][1]);
      setString(region, i, (String) rows[i][2]);
    }
    root.setRowCount(rows.length);
    return root;
  }

  static void setString(VarCharVector v, int i, String s) {
    if (s == null) {
      v.setNull(i);
    } else {
      v.setSafe(i, s.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A batch of one BIGINT column. */
  static VectorSchemaRoot longs(BufferAllocator alloc, String column, long... values) {
    Schema s = new Schema(List.of(field(column, new ArrowType.Int(64, true), false)));
    VectorSchemaRoot root = VectorSchemaRoot.create(s, alloc);
    BigIntVector v = (BigIntVector) root.getVector(column);
    v.allocateNew(values.length);
    for (int i = 0; i < values.length; i++) {
      v.set(i, values[i]);
    }
    root.setRowCount(values.length);
    return root;
  }

  /** Every row of a root as a list of Java values (Arrow Java's getObject, strings as String). */
  static List<List<Object>> values(VectorSchemaRoot root) {
    List<List<Object>> out = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      List<Object> row = new ArrayList<>();
      for (FieldVector v : root.getFieldVectors()) {
        Object o = v.getObject(r);
        row.add(o instanceof org.apache.arrow.vector.util.Text ? o.toString() : o);
      }
      out.add(row);
    }
    return out;
  }

  /** Reads a reader to its end (and closes it). */
  static List<List<Object>> readAll(ArrowReader reader) throws IOException {
    try (ArrowReader r = reader) {
      List<List<Object>> out = new ArrayList<>();
      while (r.loadNextBatch()) {
        out.addAll(values(r.getVectorSchemaRoot()));
      }
      return out;
    }
  }

  /** The values of one column of every row, in read order. */
  static List<Object> column(List<List<Object>> rows, int index) {
    List<Object> out = new ArrayList<>();
    for (List<Object> r : rows) {
      out.add(r.get(index));
    }
    return out;
  }

  static List<Object> sortedLongs(List<Object> values) {
    List<Object> copy = new ArrayList<>(values);
    copy.sort((a, b) -> Long.compare(((Number) a).longValue(), ((Number) b).longValue()));
    return copy;
  }

  static List<Object> list(Object... values) {
    return Arrays.asList(values);
  }

  static IntVector intVector(VectorSchemaRoot root, String name) {
    return (IntVector) root.getVector(name);
  }

  /** The riverlet CLI binary the build made (surefire passes its path). */
  static Path cliBinary() {
    String p = System.getProperty("riverlet.test.cli");
    if (p == null || !Files.isExecutable(Path.of(p))) {
      throw new IllegalStateException(
          "the riverlet CLI binary is missing (" + p + "); build it with cargo build -p riverlet-cli");
    }
    return Path.of(p);
  }

  /** A `riverlet serve --data-dir D --port 0` child process and the address it printed. */
  static final class ServeProcess implements AutoCloseable {
    final Process process;
    final String bootstrap;

    ServeProcess(Path dataDir) throws IOException {
      ProcessBuilder pb =
          new ProcessBuilder(
                  cliBinary().toString(), "serve", "--data-dir", dataDir.toString(), "--port", "0")
              .redirectErrorStream(true);
      process = pb.start();
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      Pattern addr = Pattern.compile("bootstrap: (\\S+)");
      String found = null;
      String line;
      StringBuilder seen = new StringBuilder();
      while (found == null && (line = out.readLine()) != null) {
        seen.append(line).append('\n');
        Matcher m = addr.matcher(line);
        if (m.find()) {
          found = m.group(1);
        }
      }
      if (found == null) {
        process.destroyForcibly();
        throw new IOException("riverlet serve printed no address:\n" + seen);
      }
      bootstrap = found;
      // Keep draining its output so it never blocks on a full pipe.
      Thread drain =
          new Thread(
              () -> {
                try {
                  while (out.readLine() != null) {
                    // discard
                  }
                } catch (IOException ignored) {
                  // the process ended
                }
              },
              "serve-output");
      drain.setDaemon(true);
      drain.start();
    }

    void kill() throws InterruptedException {
      process.destroyForcibly();
      process.waitFor(60, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          kill();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
