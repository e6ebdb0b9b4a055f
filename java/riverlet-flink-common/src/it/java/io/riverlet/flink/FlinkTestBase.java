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
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.riverlet.Admin;
import io.riverlet.Connection;
import io.riverlet.LocalServer;
import io.riverlet.OffsetSpec;
import io.riverlet.Riverlet;
import io.riverlet.RiverletException;
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

    /**
     * Runs a statement to its end (INSERT jobs included); after a {@code CREATE TABLE} of the
     * {@code fluss} catalog on an external server, waits for the table's leaders
     * ({@link #awaitLeaders}).
     */
    protected static void run(TableEnvironment env, String sql) {
        runToEnd(env, sql);
        Matcher m = CREATE_TABLE.matcher(sql);
        if (EXTERNAL_BOOTSTRAP != null && m.find()) {
            String[] parts = runNames(m.group(1)).replace("`", "").split("\\.");
            String catalog = parts.length == 3 ? parts[0] : env.getCurrentCatalog();
            if (catalog.equals("fluss_catalog")) {
                String table = parts.length == 1
                        ? env.getCurrentDatabase() + "." + parts[0]
                        : parts[parts.length - 2] + "." + parts[parts.length - 1];
                awaitLeaders(table, () -> runToEnd(env, sql));
            }
        }
    }

    private static void runToEnd(TableEnvironment env, String sql) {
        TableResult r = env.executeSql(sql);
        try {
            r.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError("statement failed: " + sql + causes(e), e);
        }
    }

    /**
     * The messages of {@code e}'s cause chain, one per line, so that the one-line failure
     * summary of a CI log already names the root cause (a job failure wraps it several times).
     */
    static String causes(Throwable e) {
        StringBuilder b = new StringBuilder();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
            b.append("\n  caused by ").append(t.getClass().getName()).append(": ").append(t.getMessage());
        }
        return b.toString();
    }

    /** A {@code CREATE TABLE} (not TEMPORARY); group 1 is the table's (possibly qualified) name. */
    private static final Pattern CREATE_TABLE = Pattern.compile(
            "^\\s*CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?([`\\w.]+)",
            Pattern.CASE_INSENSITIVE);

    /**
     * The Fluss error codes of a new table that is not ready yet: LEADER_NOT_AVAILABLE (44) until the
     * coordinator elects leaders, then for a moment UNKNOWN_TABLE_OR_BUCKET (21) or
     * NOT_LEADER_OR_FOLLOWER (12) while the tablet server creates the replicas.
     */
    private static boolean notReadyYet(RiverletException e) {
        return e.hasFlussCode()
                && (e.flussCode() == 44 || e.flussCode() == 21 || e.flussCode() == 12);
    }

    /** How long one attempt waits for a new table's leaders. */
    private static final long LEADER_WAIT_MS = 20_000;

    /**
     * Against an external server, waits until every bucket of the new table {@code dbDotTable}
     * has a leader (a ListOffsets of every bucket answers). Apache Fluss 0.9.1's coordinator
     * sometimes never assigns buckets to a just-created table (the create-table race of
     * tests/README.md), so after {@link #LEADER_WAIT_MS} without leaders the table is dropped
     * and {@code recreate} runs, up to three attempts. Partitioned tables are not probed: their
     * buckets come with partitions.
     */
    protected static void awaitLeaders(String dbDotTable, Runnable recreate) {
        try (Connection conn = Riverlet.connect(bootstrap(), Map.of());
                Admin admin = conn.admin()) {
            if (!admin.getTableInfo(dbDotTable).partitionKeys().isEmpty()) {
                return;
            }
            for (int attempt = 1; ; attempt++) {
                long deadline = System.nanoTime() + LEADER_WAIT_MS * 1_000_000L;
                while (true) {
                    try {
                        admin.listOffsets(dbDotTable, null, OffsetSpec.latest());
                        return;
                    } catch (RiverletException e) {
                        if (!notReadyYet(e)) {
                            throw e;
                        }
                        if (System.nanoTime() > deadline) {
                            if (attempt == 3) {
                                throw e;
                            }
                            break;
                        }
                    }
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted", e);
                    }
                }
                System.out.println("table " + dbDotTable + " got no leader within " + LEADER_WAIT_MS
                        + " ms (Apache Fluss's create-table race, tests/README.md): re-creating it");
                admin.dropTable(dbDotTable, false);
                recreate.run();
            }
        }
    }

    /**
     * Calls {@code body} while a background thread runs {@code insertOf(i)} for i in
     * [{@code from}, {@code to}), one INSERT job after another (batch mode), then stops that
     * thread between two jobs and waits for the job in progress. It is never interrupted inside
     * a job: an interrupted await leaves the job running, holding task slots into the next test.
     * A failed INSERT fails the test.
     */
    protected static <T> T whileInserting(int from, int to, IntFunction<String> insertOf, Callable<T> body)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                for (int i = from; i < to && !stop.get(); i++) {
                    run(batchEnv(), insertOf.apply(i));
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "it-background-inserts");
        writer.setDaemon(true);
        writer.start();
        T result;
        try {
            result = body.call();
        } finally {
            stop.set(true);
            writer.join(WAIT.toMillis());
        }
        if (failure.get() != null) {
            throw new AssertionError("a background INSERT failed", failure.get());
        }
        return result;
    }

    /** Every row of a bounded query, sorted. */
    protected static List<String> rows(TableEnvironment env, String sql) {
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
            while (it.hasNext()) {
                out.add(it.next().toString());
            }
        } catch (Exception e) {
            throw new AssertionError("query failed: " + sql + causes(e), e);
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
            throw new AssertionError("query failed: " + sql + causes(e), e);
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
