package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

import io.riverlet.LocalServer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One embedded Riverlet server and one Flink MiniCluster (1 TaskManager, 4 slots) per test
 * class; table environments with the {@code fluss} catalog registered under the name the
 * Flink pages use. Results are compared as exact, sorted row strings ({@code +I[1, a]}).
 *
 * <p>With the environment variable {@code RIVERLET_TEST_BOOTSTRAP} set (the real-Fluss interop
 * run), the tests use that server instead. The statements name the databases of the Flink pages
 * ({@code my_db}, {@code finance}, ...); against an external server the environments of
 * {@link #streamEnv()} / {@link #batchEnv()} ({@link #withRunNames}) give each of those names a
 * suffix unique to the test JVM ({@link #db(String)}), so the suites of both Flink versions can
 * run one after the other, or again, on the same cluster. What cannot apply to Apache Fluss is
 * adapted there and printed ({@link #notApplicable(String)}).
 */
// CloseableIterator.close() declares Exception; the iterators here are closed on purpose.
@SuppressWarnings("try")
public abstract class FlinkTestBase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder()
                    .setNumberTaskManagers(1)
                    .setNumberSlotsPerTaskManager(4)
                    .setConfiguration(clusterConfig())
                    .build());

    /** How long a test waits for rows it expects before it fails (never a timing assertion). */
    protected static final Duration WAIT = Duration.ofSeconds(120);

    protected static LocalServer server;
    protected static Path dataDir;

    /** The external server's bootstrap address, or null for the embedded one. */
    protected static final String EXTERNAL_BOOTSTRAP = externalBootstrap();

    private static String externalBootstrap() {
        String b = System.getenv("RIVERLET_TEST_BOOTSTRAP");
        return b == null || b.isBlank() ? null : b;
    }

    /** The databases the statements name (those of the Flink pages, and the suites' own). */
    private static final List<String> STATEMENT_DATABASES = List.of(
            "my_db", "finance", "cat_db", "other_db", "ckpt_db", "writes_log", "writes_pk",
            "writes_rules");

    /** The suffix of those database names on an external server (empty on the embedded one). */
    protected static final String RUN_SUFFIX =
            EXTERNAL_BOOTSTRAP == null ? "" : "_" + Long.toString(System.nanoTime() & 0xffffffL, 36);

    private static final Pattern DATABASE_NAME = Pattern.compile(
            "(?<![A-Za-z0-9_$])(" + String.join("|", STATEMENT_DATABASES) + ")(?![A-Za-z0-9_$])");

    /** The name database {@code name} of a statement has on the test server. */
    protected static String db(String name) {
        return name + RUN_SUFFIX;
    }

    /** {@code sql} with every database name of {@link #STATEMENT_DATABASES} mapped by {@link #db}. */
    static String runNames(String sql) {
        return RUN_SUFFIX.isEmpty() ? sql : DATABASE_NAME.matcher(sql).replaceAll("$1" + RUN_SUFFIX);
    }

    /**
     * {@code env} with the SQL text of {@code executeSql}, {@code sqlQuery} and
     * {@code explainSql} passed through {@link #runNames} (a no-op on the embedded server).
     */
    protected static StreamTableEnvironment withRunNames(StreamTableEnvironment env) {
        if (RUN_SUFFIX.isEmpty()) {
            return env;
        }
        InvocationHandler h = (proxy, method, args) -> {
            String m = method.getName();
            if (args != null && args.length > 0 && args[0] instanceof String
                    && (m.equals("executeSql") || m.equals("sqlQuery") || m.equals("explainSql"))) {
                args[0] = runNames((String) args[0]);
            }
            try {
                return method.invoke(env, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (StreamTableEnvironment) Proxy.newProxyInstance(
                FlinkTestBase.class.getClassLoader(), new Class<?>[] {StreamTableEnvironment.class}, h);
    }

    /** Prints why part of a test does not apply to the external (Apache Fluss) server. */
    protected static void notApplicable(String reason) {
        System.out.println("NOT APPLICABLE to the server at " + EXTERNAL_BOOTSTRAP + ": " + reason);
    }


    private static Configuration clusterConfig() {
        Configuration c = new Configuration();
        c.setString("taskmanager.memory.managed.size", "64m");
        c.setString("taskmanager.memory.network.min", "32m");
        c.setString("taskmanager.memory.network.max", "32m");
        return c;
    }

    @BeforeAll
    static void startServer() throws Exception {
        if (EXTERNAL_BOOTSTRAP != null) {
            return;
        }
        dataDir = Files.createTempDirectory("riverlet-flink-it");
        server = LocalServer.start(dataDir, 0);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    protected static String bootstrap() {
        return EXTERNAL_BOOTSTRAP != null ? EXTERNAL_BOOTSTRAP : server.bootstrapServers();
    }

    private static void registerCatalog(TableEnvironment env) {
        env.executeSql("CREATE CATALOG `fluss_catalog` WITH ('type' = 'fluss', 'bootstrap.servers' = '"
                + bootstrap() + "')");
        env.executeSql("USE CATALOG `fluss_catalog`");
    }

    /** A streaming table environment on the shared MiniCluster, parallelism 2. */
    protected static StreamTableEnvironment streamEnv() {
        StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment();
        see.setParallelism(2);
        StreamTableEnvironment env = withRunNames(StreamTableEnvironment.create(
                see, EnvironmentSettings.newInstance().inStreamingMode().build()));
        registerCatalog(env);
        return env;
    }

    /** A batch table environment on the shared MiniCluster, parallelism 2. */
    protected static TableEnvironment batchEnv() {
        StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment();
        see.setParallelism(2);
        StreamTableEnvironment env = withRunNames(StreamTableEnvironment.create(
                see, EnvironmentSettings.newInstance().inBatchMode().build()));
        registerCatalog(env);
        return env;
    }

    /** Runs a statement to its end (INSERT jobs included). */
    protected static void run(TableEnvironment env, String sql) {
        TableResult r = env.executeSql(sql);
        try {
            r.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError("statement failed: " + sql, e);
        }
    }

    /** Every row of a bounded query, sorted. */
    protected static List<String> rows(TableEnvironment env, String sql) {
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
            while (it.hasNext()) {
                out.add(it.next().toString());
            }
        } catch (Exception e) {
            throw new AssertionError("query failed: " + sql, e);
        }
        Collections.sort(out);
        return out;
    }

    /** The first {@code n} rows of an unbounded query (then the job is cancelled), sorted. */
    protected static List<String> firstRows(TableEnvironment env, String sql, int n) {
        return sorted(firstRowsInOrder(env, sql, n));
    }

    /** The first {@code n} rows of an unbounded query, in arrival order. */
    protected static List<String> firstRowsInOrder(TableEnvironment env, String sql, int n) {
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
            while (out.size() < n && it.hasNext()) {
                out.add(it.next().toString());
            }
        } catch (Exception e) {
            throw new AssertionError("query failed: " + sql, e);
        }
        return out;
    }

    protected static List<String> sorted(List<String> rows) {
        List<String> s = new ArrayList<>(rows);
        s.sort(Comparator.naturalOrder());
        return s;
    }

    protected static List<String> list(String... rows) {
        return sorted(java.util.Arrays.asList(rows));
    }

    protected static void assertRows(List<String> expected, List<String> actual) {
        assertEquals(sorted(expected), sorted(actual));
    }

    /** Waits (up to {@link #WAIT}) until {@code condition} holds. */
    protected static void waitUntil(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for " + what);
            }
        }
    }
}
