// The writers of tests/reliability/failover.py through Riverlet's Java binding (riverlet-java,
// JNI), for `failover.py --client java`: the harness decides every call and checks the tables;
// this process only makes the calls and says how each ended.
//
//   java -Djava.library.path=target/debug -cp <riverlet-java JAR + Arrow> \
//     RiverletJavaWriters.java <bootstrap> <log table> <pk table> [key=value ...]
//
// The key=value arguments are Fluss client options of every connection. Commands, one per line
// on stdin, each for writer <w> (each writer has its own connection and thread, so writers'
// calls run at once, and one writer's calls run in order):
//   <w> append <seq>,<seq>,...          rows (w, seq) appended to the log table
//   <w> upsert <value> <k>,<k>,...      rows (k, w, value) upserted into the primary-key table
//   <w> delete <k>,<k>,...              keys deleted from the primary-key table
// Replies on stdout, one per command, in each writer's order:
//   <w> ok
//   <w> err <ErrorKind> <Fluss code name or -> <exception class>: <message on one line>
// A writer's connection opens with its first command (a failure to connect is that command's
// err). stdin closing ends the process after the calls in flight.

import io.riverlet.Connection;
import io.riverlet.Riverlet;
import io.riverlet.RiverletException;
import io.riverlet.Table;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

public final class RiverletJavaWriters {
  private static final PrintStream OUT = System.out;

  /** One writer: its connection (opened by its first command) and its thread. */
  private static final class Writer {
    final int id;
    final ExecutorService thread = Executors.newSingleThreadExecutor();
    Connection conn;
    Table log;
    Table pk;

    Writer(int id) {
      this.id = id;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println(
          "usage: RiverletJavaWriters <bootstrap> <log table> <pk table> [key=value ...]");
      System.exit(2);
    }
    String bootstrap = args[0];
    String logName = args[1];
    String pkName = args[2];
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 3; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        System.err.println("not key=value: " + args[i]);
        System.exit(2);
      }
      options.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    BufferAllocator allocator = new RootAllocator();
    Map<Integer, Writer> writers = new HashMap<>();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] parts = line.trim().split(" ");
      if (parts.length < 3) {
        continue;
      }
      int w = Integer.parseInt(parts[0]);
      Writer writer = writers.computeIfAbsent(w, Writer::new);
      writer.thread.execute(
          () -> {
            try {
              if (writer.conn == null) {
                writer.conn = Riverlet.connect(bootstrap, options);
                writer.log = writer.conn.table(logName);
                writer.pk = writer.conn.table(pkName);
              }
              call(writer, parts, allocator);
              reply(w + " ok");
            } catch (RiverletException e) {
              String code = e.hasFlussCode() ? e.flussCodeName() : "-";
              reply(w + " err " + e.kind() + " " + code + " " + oneLine(e));
            } catch (RuntimeException e) {
              reply(w + " err INTERNAL - " + oneLine(e));
            }
          });
    }
    for (Writer writer : writers.values()) {
      writer.thread.shutdown();
      writer.thread.awaitTermination(10, TimeUnit.MINUTES);
      if (writer.conn != null) {
        writer.conn.close();
      }
    }
    allocator.close();
  }

  private static void call(Writer writer, String[] parts, BufferAllocator allocator) {
    switch (parts[1]) {
      case "append":
        {
          List<Long> seqs = longs(parts[2]);
          try (VectorSchemaRoot root = VectorSchemaRoot.create(writer.log.schema(), allocator)) {
            IntVector w = (IntVector) root.getVector("w");
            BigIntVector seq = (BigIntVector) root.getVector("seq");
            for (int i = 0; i < seqs.size(); i++) {
              w.setSafe(i, writer.id);
              seq.setSafe(i, seqs.get(i));
            }
            root.setRowCount(seqs.size());
            writer.log.append(root);
          }
          // append() queues; the call is acknowledged when flush() returns (as the Python
          // binding's append returns only once acknowledged).
          writer.log.flush();
          break;
        }
      case "upsert":
        {
          long value = Long.parseLong(parts[2]);
          List<Long> keys = longs(parts[3]);
          try (VectorSchemaRoot root = VectorSchemaRoot.create(writer.pk.schema(), allocator)) {
            IntVector k = (IntVector) root.getVector("k");
            IntVector w = (IntVector) root.getVector("w");
            BigIntVector seq = (BigIntVector) root.getVector("seq");
            for (int i = 0; i < keys.size(); i++) {
              k.setSafe(i, keys.get(i).intValue());
              w.setSafe(i, writer.id);
              seq.setSafe(i, value);
            }
            root.setRowCount(keys.size());
            writer.pk.upsert(root);
          }
          writer.pk.flush();
          break;
        }
      case "delete":
        {
          List<Long> keys = longs(parts[2]);
          Schema keyOnly = new Schema(List.of(writer.pk.schema().findField("k")));
          try (VectorSchemaRoot root = VectorSchemaRoot.create(keyOnly, allocator)) {
            IntVector k = (IntVector) root.getVector("k");
            for (int i = 0; i < keys.size(); i++) {
              k.setSafe(i, keys.get(i).intValue());
            }
            root.setRowCount(keys.size());
            writer.pk.delete(root);
          }
          writer.pk.flush();
          break;
        }
      default:
        throw new IllegalArgumentException("unknown command: " + String.join(" ", parts));
    }
  }

  private static List<Long> longs(String csv) {
    List<Long> out = new ArrayList<>();
    for (String s : csv.split(",")) {
      out.add(Long.parseLong(s));
    }
    return out;
  }

  private static String oneLine(Throwable e) {
    return (e.getClass().getSimpleName() + ": " + e.getMessage()).replaceAll("\\s+", " ");
  }

  private static void reply(String line) {
    synchronized (OUT) {
      OUT.println(line);
      OUT.flush();
    }
  }
}
