// Fluss's own Java client (fluss-client from Maven Central) appending one row at a time from
// several threads, each waiting for its row's acknowledgement before the next: the peer side of
// tests/reliability/freeze_peer.py, which runs Riverlet the same way in the same cluster cycle.
//
//   java -cp <fluss-client jar> FlussAppendProbe.java <bootstrap> <db.table> <threads> <seconds>
//
// The table is (w INT, seq BIGINT, payload STRING). Prints one line per finished append,
//   ack <w> <seq> <start epoch ms> <end epoch ms>
//   err <w> <seq> <start epoch ms> <end epoch ms> <exception class>: <message>
// then "done" once every thread has stopped. Runs until <seconds> have passed (or stdin
// closes), so the harness decides when the faults happen.

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;

public final class FlussAppendProbe {
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: FlussAppendProbe <bootstrap> <db.table> <threads> <seconds>");
      System.exit(2);
    }
    String[] name = args[1].split("\\.", 2);
    int threads = Integer.parseInt(args[2]);
    long until = System.currentTimeMillis() + (long) (Double.parseDouble(args[3]) * 1000);
    Configuration conf = new Configuration();
    conf.setString("bootstrap.servers", args[0]);
    // As on Riverlet's side: every thread's appends go to every bucket in turn, so a frozen
    // leader's buckets are hit by each thread (sticky assignment would keep a thread on one).
    conf.setString("client.writer.bucket.no-key-assigner", "round_robin");
    PrintStream out = System.out;
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Table table = conn.getTable(TablePath.of(name[0], name[1]))) {
      AppendWriter writer = table.newAppend().createWriter();
      List<Thread> workers = new ArrayList<>();
      for (int w = 0; w < threads; w++) {
        final int id = w;
        Thread t =
            new Thread(
                () -> {
                  for (long seq = 0; System.currentTimeMillis() < until; seq++) {
                    long start = System.currentTimeMillis();
                    GenericRow row =
                        GenericRow.of(id, seq, BinaryString.fromString("fluss-" + id + "-" + seq));
                    try {
                      writer.append(row).get();
                      long end = System.currentTimeMillis();
                      synchronized (out) {
                        out.println("ack " + id + " " + seq + " " + start + " " + end);
                      }
                    } catch (InterruptedException e) {
                      return;
                    } catch (ExecutionException | RuntimeException e) {
                      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                      long end = System.currentTimeMillis();
                      String what = (cause.getClass().getName() + ": " + cause.getMessage())
                          .replace('\n', ' ');
                      synchronized (out) {
                        out.println("err " + id + " " + seq + " " + start + " " + end + " " + what);
                      }
                    }
                  }
                },
                "probe-" + w);
        t.start();
        workers.add(t);
      }
      for (Thread t : workers) {
        t.join();
      }
      writer.flush();
    }
    out.println("done");
    out.flush();
    // The client's netty threads need not hold up the exit.
    System.exit(0);
  }
}
