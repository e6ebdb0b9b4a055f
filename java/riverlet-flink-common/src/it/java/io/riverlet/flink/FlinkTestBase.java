package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.riverlet.Admin;
import io.riverlet.Connection;
import io.riverlet.LocalServer;
import io.riverlet.OffsetSpec;
import io.riverlet.Riverlet;
import io.riverlet.RiverletException;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.messages.webmonitor.ClusterOverview;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
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
 * {@link #streamEnv()} / {@link #batchEnv()} ({@link #forTests}) give each of those names a
 * suffix unique to the test JVM ({@link #db(String)}), so the suites of both Flink versions can
 * run one after the other, or again, on the same cluster. What cannot apply to Apache Fluss is
 * adapted there and printed ({@link #notApplicable(String)}).
 *
 * <p>Jobs: every job a test starts ends before the next test starts. A statement run to its
 * end ({@link #run}) is cancelled when it does not end within {@link #WAIT}; a query read while
 * it runs ({@link #query}, {@link #firstRows}, {@link #rows}) is a {@link RunningQuery} whose
 * waits for rows are bounded by {@link #WAIT} and whose {@code close()} cancels the job and
 * waits for its end; and after each test any job still running is cancelled and awaited
 * ({@link #endJobsLeftRunning}). A job that does not end within {@link #JOB_END_WAIT} of its
 * cancel fails the test with its statement and the stacks of the task threads (a job in
 * CANCELLING keeps its task slots, and the next test would wait for them).
 */
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

    /**
     * How long a job may take to end after its cancel (or after its last row) before the test
     * fails: far more than a healthy cancel needs, and less than Flink's
     * {@code task.cancellation.timeout} (180 s), after which the TaskManager is killed.
     */
    protected static final Duration JOB_END_WAIT = Duration.ofSeconds(60);

    /** The statement of every job started through {@link #forTests} environments, by job. */
    private static final Map<JobID, String> STATEMENTS = new ConcurrentHashMap<>();

    /** Cancels the job of a wait for rows that ran out ({@link RunningQuery}). */
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "it-job-watchdog");
        t.setDaemon(true);
        return t;
    });

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
     * {@code env} as the tests use it: every job one of its {@code executeSql} calls starts is
     * recorded with its statement (so a job that does not end is named by its SQL,
     * {@link #describe}), and against an external server the SQL text of {@code executeSql},
     * {@code sqlQuery} and {@code explainSql} is passed through {@link #runNames}.
     */
    protected static StreamTableEnvironment forTests(StreamTableEnvironment env) {
        InvocationHandler h = (proxy, method, args) -> {
            String m = method.getName();
            boolean sqlCall = args != null && args.length > 0 && args[0] instanceof String
                    && (m.equals("executeSql") || m.equals("sqlQuery") || m.equals("explainSql"));
            if (sqlCall && !RUN_SUFFIX.isEmpty()) {
                args[0] = runNames((String) args[0]);
            }
            Object out;
            try {
                out = method.invoke(env, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (sqlCall && out instanceof TableResult) {
                String sql = (String) args[0];
                ((TableResult) out).getJobClient().ifPresent(c -> STATEMENTS.put(c.getJobID(), sql));
            }
            return out;
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
        StreamTableEnvironment env = forTests(StreamTableEnvironment.create(
                see, EnvironmentSettings.newInstance().inStreamingMode().build()));
        registerCatalog(env);
        return env;
    }

    /** A batch table environment on the shared MiniCluster, parallelism 2. */
    protected static TableEnvironment batchEnv() {
        StreamExecutionEnvironment see = StreamExecutionEnvironment.getExecutionEnvironment();
        see.setParallelism(2);
        StreamTableEnvironment env = forTests(StreamTableEnvironment.create(
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
        } catch (TimeoutException e) {
            r.getJobClient().ifPresent(job -> cancelAndAwaitEnd(job.getJobID(), job::cancel, job::getJobStatus));
            throw new AssertionError("statement did not end within " + WAIT.toSeconds() + " s (its job was"
                    + " cancelled): " + sql, e);
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
     * [{@code from}, {@code to}), one INSERT job after another (batch mode, each run to its end by
     * {@link #run}), then stops that thread between two jobs and waits for the job in progress.
     * It is never interrupted inside a job: an interrupted await leaves the job running, holding
     * task slots into the next test. A failed INSERT, or a writer that does not stop, fails the
     * test.
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
            // run() ends or cancels the job in progress within WAIT + JOB_END_WAIT.
            writer.join(WAIT.plus(JOB_END_WAIT).plusSeconds(10).toMillis());
        }
        if (writer.isAlive()) {
            throw new AssertionError("the background INSERT jobs (" + insertOf.apply(from) + ", ...) did not stop"
                    + threadStacks());
        }
        if (failure.get() != null) {
            throw new AssertionError("a background INSERT failed", failure.get());
        }
        return result;
    }

    /**
     * Starts {@code sql} (a query) and returns its running result; close it (try-with-resources)
     * to cancel its job and wait for the job's end.
     */
    protected static RunningQuery query(TableEnvironment env, String sql) {
        TableResult r;
        try {
            r = env.executeSql(sql);
        } catch (RuntimeException e) {
            throw new AssertionError("query failed: " + sql + causes(e), e);
        }
        return new RunningQuery(sql, r);
    }

    /**
     * The result of a query whose job runs while a test reads it. Every wait for rows is
     * bounded by {@link #WAIT}: when it runs out, the job is cancelled and the test fails naming
     * the statement and the rows read so far. {@link #close()} cancels the job (closing Flink's
     * result iterator does) and waits up to {@link #JOB_END_WAIT} for its end.
     */
    protected static final class RunningQuery implements AutoCloseable {
        private final String sql;
        private final CloseableIterator<Row> rows;
        /** Null for a statement without a job (SHOW, DESCRIBE, ...). */
        private final JobClient job;

        RunningQuery(String sql, TableResult result) {
            this.sql = sql;
            this.job = result.getJobClient().orElse(null);
            this.rows = result.collect();
        }

        /**
         * The next {@code n} rows, in arrival order; fails when the result ends before, or when
         * they do not arrive within {@link #WAIT}.
         *
         * @param n how many rows
         * @return the rows ({@code +I[...]} strings)
         */
        public List<String> take(int n) {
            return strings(read(n));
        }

        /**
         * Every further row, up to the end of the result; fails when the result does not end
         * within {@link #WAIT}, or when its job ends other than FINISHED.
         *
         * @return the rows ({@code +I[...]} strings), in arrival order
         */
        public List<String> toEnd() {
            return strings(toEndAsRows());
        }

        /**
         * {@link #toEnd()} as Flink's rows.
         *
         * @return the rows, in arrival order
         */
        public List<Row> toEndAsRows() {
            List<Row> out = read(-1);
            if (job != null) {
                JobStatus end = awaitEnd(job.getJobID(), job::getJobStatus);
                if (end != JobStatus.FINISHED) {
                    throw new AssertionError("the job of `" + sql + "` ended " + end + ", not FINISHED");
                }
            }
            return out;
        }

        private static List<String> strings(List<Row> rows) {
            List<String> out = new ArrayList<>(rows.size());
            for (Row r : rows) {
                out.add(r.toString());
            }
            return out;
        }

        private List<Row> read(int n) {
            List<Row> out = new ArrayList<>();
            AtomicBoolean timedOut = new AtomicBoolean();
            ScheduledFuture<?> watchdog = job == null ? null : WATCHDOG.schedule(() -> {
                timedOut.set(true);
                job.cancel();
            }, WAIT.toMillis(), TimeUnit.MILLISECONDS);
            RuntimeException failure = null;
            try {
                while ((n < 0 || out.size() < n) && rows.hasNext()) {
                    out.add(rows.next());
                }
            } catch (RuntimeException e) {
                failure = e;
            } finally {
                if (watchdog != null) {
                    watchdog.cancel(false);
                }
            }
            boolean complete = failure == null && (n < 0 || out.size() == n);
            if (!complete && timedOut.get()) {
                throw new AssertionError("waited " + WAIT.toSeconds() + " s for " + (n < 0 ? "the end of the result"
                        : n + " rows") + " of `" + sql + "` (its job was cancelled); got " + out.size() + ": " + out);
            }
            if (failure != null) {
                throw new AssertionError("query failed: " + sql + causes(failure), failure);
            }
            if (!complete) {
                throw new AssertionError("the result of `" + sql + "` ended after " + out.size() + " of " + n
                        + " rows: " + out);
            }
            return out;
        }

        /** Cancels the job unless it ended, and waits for its end ({@link #JOB_END_WAIT}). */
        @Override
        public void close() {
            try {
                rows.close();
            } catch (Exception e) {
                throw new AssertionError("closing the result of `" + sql + "` failed" + causes(e), e);
            }
            if (job != null) {
                cancelAndAwaitEnd(job.getJobID(), job::cancel, job::getJobStatus);
            }
        }
    }

    /**
     * Cancels a job (unless it already ended) and waits up to {@link #JOB_END_WAIT} for it to
     * reach a terminal state; see {@link #awaitEnd}.
     */
    private static JobStatus cancelAndAwaitEnd(
            JobID id, Supplier<CompletableFuture<?>> cancel, Supplier<CompletableFuture<JobStatus>> status) {
        try {
            cancel.get().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // Already ended (or ending): the status below tells.
        }
        return awaitEnd(id, status);
    }

    /**
     * Waits up to {@link #JOB_END_WAIT} for a job to reach a terminal state and returns it. A job
     * that does not end holds its task slots: the test fails naming its statement, with the
     * stacks of the threads that run tasks or Riverlet code (what holds the job up).
     */
    private static JobStatus awaitEnd(JobID id, Supplier<CompletableFuture<JobStatus>> status) {
        long deadline = System.nanoTime() + JOB_END_WAIT.toNanos();
        JobStatus last = null;
        Throwable lastError = null;
        while (true) {
            try {
                last = status.get().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                if (last.isGloballyTerminalState()) {
                    return last;
                }
            } catch (Exception e) {
                lastError = e;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(describe(id, null) + " did not end within " + JOB_END_WAIT.toSeconds()
                        + " s of its end or cancel (status " + last + (lastError == null ? "" : causes(lastError))
                        + "): it keeps its task slots" + threadStacks());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for the end of " + describe(id, null), e);
            }
        }
    }

    /** A job named by the statement that started it (or by Flink's job name). */
    private static String describe(JobID id, String jobName) {
        String sql = STATEMENTS.get(id);
        return "job " + id + (sql != null ? " of `" + sql + "`" : jobName != null ? " (" + jobName + ")" : "");
    }

    /**
     * After each test: cancels every job of the MiniCluster that is still running (a test that
     * failed half-way, a job a test forgot) and waits for its end, then checks that the
     * TaskManager is alive with all its slots free ({@link #awaitAllSlotsFree}), so that no job
     * keeps task slots into the next test. Fails the test when a job does not end
     * ({@link #awaitEnd}) or the slots do not come back.
     */
    @AfterEach
    void endJobsLeftRunning(@InjectMiniCluster MiniCluster cluster) throws Exception {
        List<JobStatusMessage> running = new ArrayList<>();
        for (JobStatusMessage j : cluster.listJobs().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            if (!j.getJobState().isGloballyTerminalState()) {
                running.add(j);
            }
        }
        for (JobStatusMessage j : running) {
            System.out.println("after the test: cancelling " + describe(j.getJobId(), j.getJobName())
                    + ", still " + j.getJobState());
            cancelAndAwaitEnd(j.getJobId(), () -> cluster.cancelJob(j.getJobId()),
                    () -> cluster.getJobStatus(j.getJobId()));
        }
        awaitAllSlotsFree(cluster);
    }

    /**
     * Waits up to {@link #JOB_END_WAIT} until the MiniCluster has its TaskManager with every
     * slot free (a job's slots come back shortly after its end). A TaskManager that is gone was
     * killed by a fatal error of a task (in Flink 2.x, an exception thrown by an operator's
     * {@code close()} after a cancel is one): the test fails saying so, and a new TaskManager
     * is started so that the tests after it still get slots.
     */
    protected static void awaitAllSlotsFree(MiniCluster cluster) throws Exception {
        long deadline = System.nanoTime() + JOB_END_WAIT.toNanos();
        while (true) {
            ClusterOverview o = cluster.requestClusterOverview().get(JOB_END_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            if (o.getNumTaskManagersConnected() == 0) {
                cluster.startTaskManager();
                throw new AssertionError("the MiniCluster lost its TaskManager during this test (a task failed"
                        + " fatally, e.g. an exception thrown by close() after a cancel; see the log):"
                        + " a new one was started for the next tests");
            }
            if (o.getNumSlotsAvailable() == o.getNumSlotsTotal()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(o.getNumSlotsAvailable() + " of " + o.getNumSlotsTotal()
                        + " task slots free " + JOB_END_WAIT.toSeconds() + " s after every job ended: the"
                        + " others are still held" + threadStacks());
            }
            Thread.sleep(50);
        }
    }

    /**
     * The stacks of the threads that run Flink tasks or Riverlet code (as text to append to a
     * failure message), with the lock each waits for and its owner.
     */
    static String threadStacks() {
        StringBuilder b = new StringBuilder("\nthreads running tasks or Riverlet code:");
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            StackTraceElement[] stack = t.getStackTrace();
            boolean relevant = t.getThreadName().startsWith("riverlet");
            for (StackTraceElement e : stack) {
                relevant |= e.getClassName().startsWith("io.riverlet.flink.source")
                        || e.getClassName().startsWith("io.riverlet.flink.lookup")
                        || e.getClassName().startsWith("io.riverlet.flink.sink")
                        || e.getClassName().startsWith("io.riverlet.Native")
                        || e.getClassName().equals("org.apache.flink.runtime.taskmanager.Task");
            }
            if (!relevant) {
                continue;
            }
            b.append("\n\"").append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                b.append(" waiting for ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                b.append(" held by \"").append(t.getLockOwnerName()).append('"');
            }
            for (StackTraceElement e : stack) {
                b.append("\n    at ").append(e);
            }
        }
        return b.toString();
    }

    /** Every row of a query that ends by itself (within {@link #WAIT}), sorted. */
    protected static List<String> rows(TableEnvironment env, String sql) {
        try (RunningQuery q = query(env, sql)) {
            return sorted(q.toEnd());
        }
    }

    /** The first {@code n} rows of an unbounded query (then the job is cancelled), sorted. */
    protected static List<String> firstRows(TableEnvironment env, String sql, int n) {
        return sorted(firstRowsInOrder(env, sql, n));
    }

    /** The first {@code n} rows of an unbounded query, in arrival order (then the job is cancelled). */
    protected static List<String> firstRowsInOrder(TableEnvironment env, String sql, int n) {
        try (RunningQuery q = query(env, sql)) {
            return q.take(n);
        }
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
