// Fluss's own Java client (fluss-client 0.9.1-incubating from Maven Central) on the tables of
// core/tests/lake_bucketing_cluster.rs: primary-key and log tables whose table.datalake.format
// is paimon or iceberg, so Fluss buckets (and, for primary keys, encodes) their keys as the lake
// does. The Rust test runs it to write rows Riverlet must find and to look up rows Riverlet wrote.
//
//   java -cp <classpath of pom.xml> FlussLakeKeysPeer.java <command> <bootstrap> <db.table> <from> <to> [tag]
//   java -cp <classpath of pom.xml> FlussLakeKeysPeer.java serve <bootstrap>
//
// `serve` keeps one JVM and one connection for many commands (the test's way: a JVM start and a
// connection per command cost ~3 s each on 2 cores): it reads lines `<command> <db.table> <from>
// <to> [tag]` from stdin, answers each with the command's lines and then `end`, or with
// `error <exception>` and `end`, and exits at the end of its input.
//
// Tables: `id` (INT or BIGINT, NOT NULL), optionally `sub` (INT NOT NULL), then `name` STRING.
// With `sub` the primary key is (id, sub) and the bucket key `id`; otherwise the key is `id`.
// Commands, for every id in [from, to) (and sub in {0, 1} when the table has `sub`):
//   upsert  writes (id, [sub,] "<tag>-<id>[-<sub>]") with an UpsertWriter; prints "done"
//   append  appends (id, "<tag>-<id>") to a log table with an AppendWriter; prints "done"
//   lookup  prints "row <id> [<sub>] <name>" per row found, "miss <id>" per key without one
//           (a prefix lookup by id when the table has `sub`)
//   buckets prints "bucket <id> <bucket>": the bucket Fluss's own KeyEncoder and
//           BucketingFunction give the id, for the table's lake format
//   info    prints "format <table.datalake.format or none>" and "kv-version <v or none>"
// Exits non-zero with the exception on stderr when anything fails.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.fluss.bucketing.BucketingFunction;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.lookup.LookupResult;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DataLakeFormat;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.encode.KeyEncoder;
import org.apache.fluss.types.DataTypeRoot;

public final class FlussLakeKeysPeer {
  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("serve")) {
      serve(args[1]);
      return;
    }
    if (args.length < 5) {
      System.err.println("usage: FlussLakeKeysPeer <upsert|append|lookup|buckets|info> <bootstrap> <db.table> <from> <to> [tag]"
          + " | FlussLakeKeysPeer serve <bootstrap>");
      System.exit(2);
    }
    try (Connection conn = connect(args[1])) {
      List<String> out = run(conn, args[0], args[2], Integer.parseInt(args[3]),
          Integer.parseInt(args[4]), args.length > 5 ? args[5] : "java");
      out.forEach(System.out::println);
    }
  }

  static Connection connect(String bootstrap) {
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", bootstrap);
    return ConnectionFactory.createConnection(conf);
  }

  static void serve(String bootstrap) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (Connection conn = connect(bootstrap)) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] a = line.trim().split(" ");
        try {
          if (a.length < 4) {
            throw new IllegalArgumentException("expected <command> <db.table> <from> <to> [tag], got: " + line);
          }
          List<String> out = run(conn, a[0], a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]),
              a.length > 4 ? a[4] : "java");
          out.forEach(System.out::println);
        } catch (Exception e) {
          System.out.println("error " + String.valueOf(e).replace('\n', ' '));
        }
        System.out.println("end");
        System.out.flush();
      }
    }
  }

  /** Runs one command on a table and returns the lines it prints. */
  static List<String> run(Connection conn, String cmd, String tableName, int from, int to, String tag)
      throws Exception {
    String[] name = tableName.split("\\.", 2);
    List<String> out = new ArrayList<>();
    try (Table table = conn.getTable(TablePath.of(name[0], name[1]))) {
      TableInfo info = table.getTableInfo();
      boolean bigint = info.getRowType().getTypeAt(0).getTypeRoot() == DataTypeRoot.BIGINT;
      boolean hasSub = info.getRowType().getFieldNames().contains("sub");
      int subs = hasSub ? 2 : 1;
      switch (cmd) {
        case "upsert": {
          UpsertWriter w = table.newUpsert().createWriter();
          List<CompletableFuture<?>> acks = new ArrayList<>();
          for (int id = from; id < to; id++) {
            for (int s = 0; s < subs; s++) {
              String v = tag + "-" + id + (hasSub ? "-" + s : "");
              acks.add(w.upsert(row(bigint, id, hasSub ? s : null, v)));
            }
          }
          w.flush();
          for (CompletableFuture<?> f : acks) f.get();
          out.add("done");
          break;
        }
        case "append": {
          AppendWriter w = table.newAppend().createWriter();
          List<CompletableFuture<?>> acks = new ArrayList<>();
          for (int id = from; id < to; id++) {
            acks.add(w.append(row(bigint, id, null, tag + "-" + id)));
          }
          w.flush();
          for (CompletableFuture<?> f : acks) f.get();
          out.add("done");
          break;
        }
        case "lookup": {
          Lookuper l = hasSub
              ? table.newLookup().lookupBy("id").createLookuper()
              : table.newLookup().createLookuper();
          for (int id = from; id < to; id++) {
            InternalRow key = bigint ? GenericRow.of((long) id) : GenericRow.of(id);
            LookupResult r = l.lookup(key).get();
            List<InternalRow> rows = r.getRowList();
            if (rows.isEmpty()) {
              out.add("miss " + id);
            }
            for (InternalRow row : rows) {
              long got = bigint ? row.getLong(0) : row.getInt(0);
              String sub = hasSub ? " " + row.getInt(1) : "";
              out.add("row " + got + sub + " " + row.getString(hasSub ? 2 : 1));
            }
          }
          break;
        }
        case "buckets": {
          DataLakeFormat format = info.getTableConfig().getDataLakeFormat().orElse(null);
          KeyEncoder enc = KeyEncoder.ofBucketKeyEncoder(info.getRowType(), info.getBucketKeys(), format);
          BucketingFunction f = BucketingFunction.of(format);
          for (int id = from; id < to; id++) {
            byte[] key = enc.encodeKey(row(bigint, id, hasSub ? 0 : null, ""));
            out.add("bucket " + id + " " + f.bucketing(key, info.getNumBuckets()));
          }
          break;
        }
        case "info": {
          out.add("format " + info.getTableConfig().getDataLakeFormat().map(Object::toString).orElse("none"));
          out.add("kv-version " + info.getTableConfig().getKvFormatVersion().map(Object::toString).orElse("none"));
          break;
        }
        default:
          throw new IllegalArgumentException("unknown command " + cmd);
      }
    }
    return out;
  }

  static GenericRow row(boolean bigint, int id, Integer sub, String name) {
    Object k = bigint ? (Object) (long) id : (Object) id;
    BinaryString n = BinaryString.fromString(name);
    return sub == null ? GenericRow.of(k, n) : GenericRow.of(k, sub, n);
  }
}
