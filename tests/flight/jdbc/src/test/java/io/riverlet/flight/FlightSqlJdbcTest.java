package io.riverlet.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Arrow Flight SQL JDBC driver (what BI tools use) against {@code riverlet serve
 * --flight-port}: queries, a commit-time window, metadata and a bad statement.
 */
class FlightSqlJdbcTest {
  private static final String RIVERLET = System.getProperty("riverlet.bin", "target/debug/riverlet");

  @TempDir static Path dataDir;
  private static Process serve;
  private static String bootstrap;
  private static String jdbcUrl;

  @BeforeAll
  static void start() throws Exception {
    serve =
        new ProcessBuilder(
                RIVERLET, "serve", "--data-dir", dataDir.toString(), "--port", "0",
                "--flight-port", "0")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
    bootstrap = valueAfter(out.readLine(), "bootstrap: ");
    String flight = valueAfter(out.readLine(), "flight: grpc://");
    jdbcUrl = "jdbc:arrow-flight-sql://" + flight + "/?useEncryption=false";
    cli("create-table", "fluss.orders", "--schema", "order_id BIGINT, item STRING, amount INT",
        "--buckets", "2");
    cli("write", "fluss.orders", "[[1, \"apple\", 10], [2, \"pear\", 20], [3, \"plum\", 30]]");
  }

  @AfterAll
  static void stop() throws Exception {
    if (serve != null) {
      serve.destroy();
      if (!serve.waitFor(30, TimeUnit.SECONDS)) {
        serve.destroyForcibly();
      }
    }
  }

  private static String valueAfter(String line, String prefix) {
    if (line == null || !line.startsWith(prefix)) {
      throw new IllegalStateException("riverlet serve printed " + line + ", expected " + prefix);
    }
    return line.substring(prefix.length()).trim();
  }

  private static void cli(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(RIVERLET));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--bootstrap", bootstrap));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", cmd) + ": " + output);
  }

  @Test
  void queryReturnsTheRows() throws SQLException {
    try (Connection conn = DriverManager.getConnection(jdbcUrl);
        Statement st = conn.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT order_id, item, amount FROM orders WHERE amount >= 20 ORDER BY order_id")) {
      List<String> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getLong("order_id") + "," + rs.getString("item") + "," + rs.getInt("amount"));
      }
      assertEquals(List.of("2,pear,20", "3,plum,30"), rows);
    }
  }

  @Test
  void timeWindowReadsOnlyTheRowsCommittedInIt() throws Exception {
    long start = System.currentTimeMillis();
    Thread.sleep(20);
    cli("write", "fluss.orders", "[[10, \"fig\", 1], [11, \"kiwi\", 2]]");
    Thread.sleep(20);
    long end = System.currentTimeMillis();
    try (Connection conn = DriverManager.getConnection(jdbcUrl);
        Statement st = conn.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT order_id FROM fluss_incremental_between_timestamp('orders', "
                    + start + ", " + end + ") ORDER BY order_id")) {
      List<Long> ids = new ArrayList<>();
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
      assertEquals(List.of(10L, 11L), ids);
    }
  }

  @Test
  void metadataListsTheTable() throws SQLException {
    try (Connection conn = DriverManager.getConnection(jdbcUrl);
        ResultSet rs = conn.getMetaData().getTables("fluss", "fluss", "orders", null)) {
      assertTrue(rs.next(), "orders is listed");
      assertEquals("orders", rs.getString("TABLE_NAME"));
    }
    try (Connection conn = DriverManager.getConnection(jdbcUrl)) {
      DatabaseMetaData md = conn.getMetaData();
      try (ResultSet schemas = md.getSchemas()) {
        List<String> names = new ArrayList<>();
        while (schemas.next()) {
          names.add(schemas.getString("TABLE_SCHEM"));
        }
        assertTrue(names.contains("fluss"), names.toString());
      }
    }
  }

  @Test
  void aBadStatementIsAnSqlExceptionNamingTheTable() throws SQLException {
    try (Connection conn = DriverManager.getConnection(jdbcUrl);
        Statement st = conn.createStatement()) {
      SQLException e =
          assertThrows(SQLException.class, () -> st.executeQuery("SELECT * FROM no_such_table"));
      assertTrue(String.valueOf(e.getMessage()).contains("no_such_table"), e.getMessage());
    }
  }
}
