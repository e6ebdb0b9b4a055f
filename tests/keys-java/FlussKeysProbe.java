// Fluss's own Java client (fluss-client 0.9.1 from Maven Central) as the referee of key
// encoding and bucketing across clients: the Java side of tests/keys-java/run.sh.
//
//   java -cp <fluss-client classpath> FlussKeysProbe.java <bootstrap> <database> create
//   java -cp ... FlussKeysProbe.java <bootstrap> <database> write
//   java -cp ... FlussKeysProbe.java <bootstrap> <database> check <writers> [--verbose]
//
// `create` makes one primary-key table per key shape (Keys.SHAPES: INT, BIGINT, STRING, a
// composite key, a bucket key that is a prefix of the key) and bucket count (3, 4, 7); `write`
// upserts the keys the Java client owns (Keys.writer); `check` looks up every key of every
// writer named in <writers> (comma separated: java, riverlet, pyfluss), prefix-looks up every
// prefix of the prefix-keyed tables, and reads each table's changelog to check that every row
// sits in the bucket Fluss's own bucketing function (FlussBucketingFunction over the
// KeyEncoder's bytes of the bucket key) gives it: a row a client put in another bucket is
// named with its key bytes, its bucket and Fluss's. Rows written by pyfluss are reported, not
// failed (its known tail-byte bug, tests/README.md); `--verbose` prints every row's bucket.
//
// Prints "ok <check>" or "FAIL <check>: <why>" lines and exits 1 on any failure. The keys are
// those of keys.py (same formulas), so the expected rows come from the formulas, not from any
// client's output.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.apache.fluss.bucketing.BucketingFunction;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.lookup.LookupResult;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.encode.KeyEncoder;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;

public final class FlussKeysProbe {
  /** Keys per writer and table; key index i belongs to writer i % 3 (Keys.WRITERS). */
  static final int PER_WRITER = 120;

  static final int[] BUCKETS = {3, 4, 7};
  static final String[] SHAPES = {"int", "bigint", "string", "composite", "prefix"};
  static final String[] WRITERS = {"java", "riverlet", "pyfluss"};

  private static int failures = 0;

  private static void check(String name, boolean ok, Object why) {
    if (ok) {
      System.out.println("ok " + name);
    } else {
      failures++;
      System.out.println("FAIL " + name + ": " + why);
    }
  }

  // ---- the keys: the same formulas as keys.py --------------------------------------------

  static String writer(int i) {
    return WRITERS[i % 3];
  }

  // Magnitudes from 1 to 5 varint bytes and negative values (5 bytes as INT, 10 as BIGINT), so
  // the encoded keys have every length mod 4 and tail bytes >= 0x80.
  static int intKey(int i) {
    return (i % 2 == 0 ? 1 : -1) * i * i * 37;
  }

  static long bigintKey(int i) {
    return (i % 2 == 0 ? 1L : -1L) * (long) i * i * i * 1009L;
  }

  // Lengths 2 to ~16 bytes, with two- and three-byte UTF-8 characters.
  static String stringKey(int i) {
    return "k" + i + "\u00e9".repeat(i % 4) + (i % 5 == 0 ? "\u9375" : "");
  }

  static int compositeA(int i) {
    return i % 37 - 18;
  }

  static String compositeB(int i) {
    return "b" + i + "\u00df";
  }

  static long prefixA(int i) {
    return (i / 4) * 100003L - 7;
  }

  static String prefixB(int i) {
    return "p" + i;
  }

  static Schema schema(String shape) {
    Schema.Builder b = Schema.newBuilder();
    switch (shape) {
      case "int":
        b.column("k", DataTypes.INT()).primaryKey("k");
        break;
      case "bigint":
        b.column("k", DataTypes.BIGINT()).primaryKey("k");
        break;
      case "string":
        b.column("k", DataTypes.STRING()).primaryKey("k");
        break;
      case "composite":
        b.column("a", DataTypes.INT()).column("b", DataTypes.STRING()).primaryKey("a", "b");
        break;
      case "prefix":
        b.column("a", DataTypes.BIGINT()).column("b", DataTypes.STRING()).primaryKey("a", "b");
        break;
      default:
        throw new IllegalArgumentException("unknown shape " + shape);
    }
    return b.column("v", DataTypes.STRING()).build();
  }

  /** The key columns' values of key i, in primary-key order. */
  static Object[] key(String shape, int i) {
    switch (shape) {
      case "int":
        return new Object[] {intKey(i)};
      case "bigint":
        return new Object[] {bigintKey(i)};
      case "string":
        return new Object[] {BinaryString.fromString(stringKey(i))};
      case "composite":
        return new Object[] {compositeA(i), BinaryString.fromString(compositeB(i))};
      default:
        return new Object[] {prefixA(i), BinaryString.fromString(prefixB(i))};
    }
  }

  static String keyText(Object[] k) {
    return Arrays.toString(k);
  }

  static String tableName(String shape, int buckets) {
    return shape + "_" + buckets;
  }

  // ---- phases -----------------------------------------------------------------------------

  static void create(Admin admin, String db) throws Exception {
    admin.createDatabase(db, DatabaseDescriptor.EMPTY, true).get();
    for (String shape : SHAPES) {
      for (int n : BUCKETS) {
        TableDescriptor.Builder d = TableDescriptor.builder().schema(schema(shape));
        d = shape.equals("prefix") ? d.distributedBy(n, "a") : d.distributedBy(n);
        TablePath path = TablePath.of(db, tableName(shape, n));
        createAndAwaitLeaders(admin, path, d.build(), n);
      }
    }
    System.out.println("ok created " + SHAPES.length * BUCKETS.length + " tables in " + db);
  }

  // Apache Fluss 0.9.1's create-table race (tests/README.md): a new table may never get
  // leaders; such a table is dropped and created again, as the other suites' helpers do.
  static void createAndAwaitLeaders(Admin admin, TablePath path, TableDescriptor d, int n)
      throws Exception {
    List<Integer> buckets = new ArrayList<>();
    for (int b = 0; b < n; b++) {
      buckets.add(b);
    }
    for (int attempt = 0; attempt < 3; attempt++) {
      admin.createTable(path, d, false).get();
      long deadline = System.currentTimeMillis() + 20_000;
      while (System.currentTimeMillis() < deadline) {
        try {
          admin.listOffsets(path, buckets, new OffsetSpec.EarliestSpec()).all().get();
          return;
        } catch (Exception e) {
          Thread.sleep(300);
        }
      }
      System.out.println("table " + path + " got no leaders within 20 s: re-creating it");
      admin.dropTable(path, false).get();
    }
    throw new IllegalStateException("table " + path + " never got leaders");
  }

  static void write(Connection conn, String db) throws Exception {
    int rows = 0;
    for (String shape : SHAPES) {
      for (int n : BUCKETS) {
        try (Table t = conn.getTable(TablePath.of(db, tableName(shape, n)))) {
          UpsertWriter w = t.newUpsert().createWriter();
          List<CompletableFuture<?>> acks = new ArrayList<>();
          for (int i = 0; i < 3 * PER_WRITER; i++) {
            if (writer(i).equals("java")) {
              Object[] k = key(shape, i);
              Object[] row = Arrays.copyOf(k, k.length + 1);
              row[k.length] = BinaryString.fromString("java");
              acks.add(w.upsert(GenericRow.of(row)));
              rows++;
            }
          }
          w.flush();
          CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])).get();
        }
      }
    }
    System.out.println("ok the Java client upserted " + rows + " rows");
  }

  static void checkAll(Connection conn, String db, Set<String> writers, boolean verbose)
      throws Exception {
    for (String shape : SHAPES) {
      for (int n : BUCKETS) {
        try (Table t = conn.getTable(TablePath.of(db, tableName(shape, n)))) {
          checkLookups(t, shape, writers);
          if (shape.equals("prefix")) {
            checkPrefixLookups(t, writers);
          }
          checkPlacement(t, shape, writers, verbose);
        }
      }
    }
  }

  static void checkLookups(Table t, String shape, Set<String> writers) throws Exception {
    Lookuper lk = t.newLookup().createLookuper();
    Map<String, List<String>> missed = new HashMap<>();
    Map<String, Integer> asked = new HashMap<>();
    List<String> wrong = new ArrayList<>();
    // All lookups in flight at once: the client batches them per bucket.
    List<CompletableFuture<LookupResult>> answers = new ArrayList<>();
    for (int i = 0; i < 3 * PER_WRITER; i++) {
      answers.add(lk.lookup(GenericRow.of(key(shape, i))));
    }
    for (int i = 0; i < 3 * PER_WRITER; i++) {
      Object[] k = key(shape, i);
      InternalRow row = answers.get(i).get().getSingletonRow();
      String w = writer(i);
      boolean expected = writers.contains(w);
      asked.merge(w, 1, Integer::sum);
      if (expected && row == null) {
        missed.computeIfAbsent(w, x -> new ArrayList<>()).add(keyText(k));
      } else if (!expected && row != null) {
        wrong.add(keyText(k) + " found but " + w + " did not write");
      } else if (row != null && !row.getString(k.length).toString().equals(w)) {
        wrong.add(keyText(k) + " has v=" + row.getString(k.length) + ", expected " + w);
      }
    }
    for (String w : writers) {
      List<String> m = missed.getOrDefault(w, List.of());
      String name =
          "Java finds every row " + w + " wrote in " + t.getTableInfo().getTablePath().getTableName();
      String why = m.size() + " of " + asked.get(w) + " missed, e.g. " + m.subList(0, Math.min(5, m.size()));
      if (w.equals("pyfluss")) {
        report(name, m.isEmpty(), why);
      } else {
        check(name, m.isEmpty(), why);
      }
    }
    check("lookups in " + t.getTableInfo().getTablePath().getTableName() + " answer the right rows",
        wrong.isEmpty(), wrong);
  }

  static void checkPrefixLookups(Table t, Set<String> writers) throws Exception {
    Lookuper pl = t.newLookup().lookupBy("a").createLookuper();
    List<String> wrong = new ArrayList<>();
    List<CompletableFuture<LookupResult>> answers = new ArrayList<>();
    for (int q = 0; q < 3 * PER_WRITER / 4; q++) {
      answers.add(pl.lookup(GenericRow.of(prefixA(4 * q))));
    }
    for (int q = 0; q < 3 * PER_WRITER / 4; q++) {
      long a = prefixA(4 * q);
      Set<String> expected = new TreeSet<>();
      for (int i = 4 * q; i < 4 * q + 4; i++) {
        if (writers.contains(writer(i)) && !writer(i).equals("pyfluss")) {
          expected.add(prefixB(i));
        }
      }
      Set<String> got = new TreeSet<>();
      for (InternalRow r : answers.get(q).get().getRowList()) {
        if (!r.getString(2).toString().equals("pyfluss")) {
          got.add(r.getString(1).toString());
        }
      }
      if (!expected.equals(got)) {
        wrong.add("a=" + a + ": " + got + ", expected " + expected);
      }
    }
    check("Java prefix lookups in " + t.getTableInfo().getTablePath().getTableName()
        + " find every row (all writers but pyfluss)", wrong.isEmpty(),
        wrong.size() + " prefixes wrong, e.g. " + wrong.subList(0, Math.min(5, wrong.size())));
  }

  /** Every row of the changelog sits in the bucket Fluss's own function gives its bucket key. */
  static void checkPlacement(Table t, String shape, Set<String> writers, boolean verbose)
      throws Exception {
    TableInfo info = t.getTableInfo();
    int n = info.getNumBuckets();
    KeyEncoder enc = KeyEncoder.ofBucketKeyEncoder(info.getRowType(), info.getBucketKeys(), null);
    BucketingFunction fn = BucketingFunction.of(null);
    List<Integer> buckets = new ArrayList<>();
    for (int b = 0; b < n; b++) {
      buckets.add(b);
    }
    Map<Integer, Long> latest;
    List<String> misplaced = new ArrayList<>();
    Map<String, int[]> perWriter = new HashMap<>();
    try (LogScanner s = t.newScan().createLogScanner()) {
      Map<Integer, Long> reached = new HashMap<>();
      for (int b = 0; b < n; b++) {
        s.subscribeFromBeginning(b);
        reached.put(b, 0L);
      }
      // The end of each bucket's changelog (LATEST), read up to below.
      latest = ADMIN.listOffsets(info.getTablePath(), buckets, new OffsetSpec.LatestSpec()).all().get();
      long deadline = System.currentTimeMillis() + 60_000;
      while (!reachedAll(reached, latest)) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("changelog of " + info.getTablePath()
              + " not read to " + latest + " within 60 s (reached " + reached + ")");
        }
        ScanRecords recs = s.poll(Duration.ofMillis(500));
        for (TableBucket tb : recs.buckets()) {
          for (ScanRecord r : recs.records(tb)) {
            reached.put(tb.getBucket(), r.logOffset() + 1);
            InternalRow row = r.getRow();
            String w = row.getString(info.getRowType().getFieldCount() - 1).toString();
            byte[] kb = enc.encodeKey(row);
            int want = fn.bucketing(kb, n);
            int[] c = perWriter.computeIfAbsent(w, x -> new int[2]);
            c[0]++;
            String line = w + " " + rowKey(row, shape) + " bytes " + hex(kb) + " in bucket "
                + tb.getBucket() + ", Fluss's bucket " + want;
            if (verbose) {
              System.out.println("  " + info.getTablePath().getTableName() + ": " + line);
            }
            if (want != tb.getBucket()) {
              c[1]++;
              if (!w.equals("pyfluss")) {
                misplaced.add(line);
              }
            }
          }
        }
      }
    }
    String table = info.getTablePath().getTableName();
    for (String w : writers) {
      int[] c = perWriter.getOrDefault(w, new int[2]);
      String name = "rows " + w + " wrote in " + table + " sit in Fluss's buckets";
      String why = c[1] + " of " + c[0] + " rows in another bucket";
      if (w.equals("pyfluss")) {
        report(name, c[1] == 0, why);
      } else {
        check(name, c[1] == 0 && c[0] == PER_WRITER,
            why + "; " + c[0] + " rows read, " + PER_WRITER + " written; e.g. "
                + misplaced.subList(0, Math.min(5, misplaced.size())));
      }
    }
  }

  static boolean reachedAll(Map<Integer, Long> reached, Map<Integer, Long> latest) {
    for (Map.Entry<Integer, Long> e : latest.entrySet()) {
      if (reached.getOrDefault(e.getKey(), 0L) < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  static String rowKey(InternalRow row, String shape) {
    switch (shape) {
      case "int":
        return "[" + row.getInt(0) + "]";
      case "bigint":
        return "[" + row.getLong(0) + "]";
      case "string":
        return "[" + row.getString(0) + "]";
      case "composite":
        return "[" + row.getInt(0) + ", " + row.getString(1) + "]";
      default:
        return "[" + row.getLong(0) + ", " + row.getString(1) + "]";
    }
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }

  /** A peer client's result: printed, never a failure of this probe. */
  static void report(String name, boolean ok, Object why) {
    System.out.println((ok ? "ok " : "PEER BUG ") + name + (ok ? "" : ": " + why));
  }

  static Admin ADMIN;

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: FlussKeysProbe <bootstrap> <database> create|write|check <writers> [--verbose]");
      System.exit(2);
    }
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", args[0]);
    String db = args[1];
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      ADMIN = conn.getAdmin();
      switch (args[2]) {
        case "create":
          create(ADMIN, db);
          break;
        case "write":
          write(conn, db);
          break;
        case "check":
          Set<String> writers = new HashSet<>(Arrays.asList(args[3].split(",")));
          boolean verbose = args.length > 4 && args[4].equals("--verbose");
          checkAll(conn, db, writers, verbose);
          break;
        default:
          System.err.println("unknown phase " + args[2]);
          System.exit(2);
      }
    }
    System.out.println(failures == 0 ? "all checks passed" : failures + " check(s) failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
