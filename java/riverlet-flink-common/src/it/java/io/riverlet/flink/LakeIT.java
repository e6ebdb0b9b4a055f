package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.riverlet.LocalServer;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lake part of the Ververica quickstart (fluss-quickstart-ververica.txt) in batch mode,
 * against embedded servers tiering to Iceberg (catalog {@code fluss_catalog}) and to Paimon
 * (catalog {@code paimon_catalog}, a second server on the same MiniCluster):
 * {@code trades$lake} (buy and sell volume in the lake), {@code trades$lake$snapshots} (one row
 * per commit) and the union read of {@code trades} (per-symbol totals over every trade). The
 * trades are written in three rounds with a lake commit after the first two, so the lake holds
 * rounds 1 and 2 and the union read all three; every expected total is computed from the rows
 * written. Over Paimon also a primary-key table: the union read is the lake's merged state with
 * the later changes of the log winning by key, deletes included.
 */
class LakeIT extends FlinkTestBase {

    private static final String[] SYMBOLS = {"AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA"};
    /** Trade ids of the rounds: 1..20 (committed), 21..33 (committed), 34..40 (log only). */
    private static final int[] ROUND_ENDS = {20, 33, 40};
    private static final int LAKE_END = ROUND_ENDS[1];
    private static final int ALL_END = ROUND_ENDS[2];

    /** The server tiering to Paimon, behind the catalog {@code paimon_catalog}. */
    private static LocalServer paimonServer;

    @BeforeAll
    static void startLakeServerAndWrite() throws Exception {
        Assumptions.assumeTrue(EXTERNAL_BOOTSTRAP == null,
                "lake commits need the embedded server (LocalServer.commitLake)");
        // The base class started a plain server: this class needs one that tiers to Iceberg,
        // and one that tiers to Paimon.
        server.close();
        server = LocalServer.start(dataDir.resolve("lake-data"), "127.0.0.1", 0, Map.of(),
                Map.of("datalake.format", "iceberg",
                        "datalake.iceberg.warehouse", dataDir.resolve("warehouse").toString()));
        paimonServer = LocalServer.start(dataDir.resolve("paimon-data"), "127.0.0.1", 0, Map.of(),
                Map.of("datalake.format", "paimon",
                        "datalake.paimon.warehouse", paimonWarehouse().toString()));
        for (String format : new String[] {"iceberg", "paimon"}) {
            writeTrades(catalog(format), "iceberg".equals(format) ? server : paimonServer);
        }
    }

    @AfterAll
    static void stopPaimonServer() {
        if (paimonServer != null) {
            paimonServer.close();
            paimonServer = null;
        }
    }

    private static Path paimonWarehouse() {
        return dataDir.resolve("paimon-warehouse");
    }

    /** The catalog whose server tiers to {@code format}'s lake. */
    private static String catalog(String format) {
        return "iceberg".equals(format) ? "fluss_catalog" : "paimon_catalog";
    }

    /** {@code `catalog`.`finance`.`name`} of {@code format}'s catalog. */
    private static String t(String format, String name) {
        return "`" + catalog(format) + "`.`finance`.`" + name + "`";
    }

    /** A batch environment with both catalogs ({@code fluss_catalog} the current one). */
    private static TableEnvironment lakeEnv() {
        return withPaimonCatalog(batchEnv());
    }

    /** A streaming environment with both catalogs ({@code fluss_catalog} the current one). */
    private static TableEnvironment lakeStreamEnv() {
        return withPaimonCatalog(streamEnv());
    }

    /** {@code env} with the catalog {@code paimon_catalog} of the server tiering to Paimon. */
    private static TableEnvironment withPaimonCatalog(TableEnvironment env) {
        env.executeSql("CREATE CATALOG `paimon_catalog` WITH ('type' = 'fluss', "
                + "'bootstrap.servers' = '" + paimonServer.bootstrapServers() + "')");
        return env;
    }

    /**
     * Writes the trades in three rounds with a lake commit after the first two. A lake commit
     * covers every lake-enabled table of its server, so the Paimon server's primary-key table
     * {@code accounts} is written here too, around the second commit: its first changes before
     * it, the later ones after the last.
     */
    private static void writeTrades(String catalog, LocalServer lakeServer) {
        TableEnvironment env = lakeEnv();
        boolean paimon = lakeServer == paimonServer;
        run(env, "CREATE DATABASE IF NOT EXISTS `" + catalog + "`.`finance`");
        run(env, "CREATE TABLE `" + catalog + "`.`finance`.`trades` (\n"
                + "    `trade_id`   BIGINT,\n    `account_id` INT NOT NULL,\n"
                + "    `notional`   DECIMAL(15, 2),\n    `trade_date` DATE,\n"
                + "    `side`       STRING,\n    `symbol`     STRING\n) WITH (\n"
                + "    'bucket.num' = '3',\n    'table.datalake.enabled' = 'true',\n"
                + "    'table.datalake.freshness' = '1h'\n)");
        int first = 1;
        for (int round = 0; round < ROUND_ENDS.length; round++) {
            StringBuilder values = new StringBuilder();
            for (int id = first; id <= ROUND_ENDS[round]; id++) {
                values.append(id == first ? "" : ",\n").append("(CAST(").append(id)
                        .append(" AS BIGINT), ").append(id % 22 + 1).append(", CAST(")
                        .append(notional(id).toPlainString()).append(" AS DECIMAL(15, 2)), DATE '2026-01-0")
                        .append(1 + id % 5).append("', '").append(side(id)).append("', '")
                        .append(symbol(id)).append("')");
            }
            run(env, "INSERT INTO `" + catalog + "`.`finance`.`trades` VALUES\n" + values);
            if (paimon && round == 1) {
                writeAccountsBeforeTheCommit(env);
            }
            if (round < 2) {
                lakeServer.commitLake();
            }
            first = ROUND_ENDS[round] + 1;
        }
        if (paimon) {
            writeAccountsAfterTheCommit(env);
        }
    }

    /** The rows of {@code accounts} in its one lake commit (its merged state there). */
    private static final List<String> ACCOUNTS_AT_COMMIT =
            List.of("+I[1, a1, 10]", "+I[2, b2, 21]", "+I[4, a4, 40]");
    /** The rows of {@code accounts} after the later changes (the log wins by key). */
    private static final List<String> ACCOUNTS_LATEST =
            List.of("+I[1, c1, 11]", "+I[2, b2, 21]", "+I[3, c3, 31]", "+I[5, c5, 50]");

    /** Inserts, updates and deletes in {@code accounts} before its lake commit. */
    private static void writeAccountsBeforeTheCommit(TableEnvironment env) {
        String accounts = t("paimon", "accounts");
        run(env, "CREATE TABLE " + accounts + " (`id` BIGINT, `name` STRING, `balance` INT,"
                + " PRIMARY KEY (`id`) NOT ENFORCED) WITH ('bucket.num' = '2',"
                + " 'table.datalake.enabled' = 'true', 'table.datalake.freshness' = '1h')");
        run(env, "INSERT INTO " + accounts + " VALUES (CAST(1 AS BIGINT), 'a1', 10),"
                + " (CAST(2 AS BIGINT), 'a2', 20), (CAST(3 AS BIGINT), 'a3', 30),"
                + " (CAST(4 AS BIGINT), 'a4', 40)");
        run(env, "INSERT INTO " + accounts + " VALUES (CAST(2 AS BIGINT), 'b2', 21)");
        run(env, "DELETE FROM " + accounts + " WHERE `id` = 3");
    }

    /** Changes after the last commit, only in the log: a key updated, added, re-added, deleted. */
    private static void writeAccountsAfterTheCommit(TableEnvironment env) {
        String accounts = t("paimon", "accounts");
        run(env, "INSERT INTO " + accounts + " VALUES (CAST(1 AS BIGINT), 'c1', 11),"
                + " (CAST(5 AS BIGINT), 'c5', 50), (CAST(3 AS BIGINT), 'c3', 31)");
        run(env, "DELETE FROM " + accounts + " WHERE `id` = 4");
    }

    private static BigDecimal notional(int id) {
        return BigDecimal.valueOf(id * 1237L % 100_000, 2);
    }

    private static String side(int id) {
        return id % 3 == 0 ? "SELL" : "BUY";
    }

    private static String symbol(int id) {
        return SYMBOLS[id % SYMBOLS.length];
    }

    /** {@code +I[key, count, sum]} rows of the trades 1..{@code last} grouped by {@code key}. */
    private static List<String> totals(int last, java.util.function.IntFunction<String> key) {
        Map<String, long[]> counts = new TreeMap<>();
        Map<String, BigDecimal> sums = new TreeMap<>();
        for (int id = 1; id <= last; id++) {
            String k = key.apply(id);
            counts.computeIfAbsent(k, x -> new long[1])[0]++;
            sums.merge(k, notional(id), BigDecimal::add);
        }
        List<String> out = new ArrayList<>();
        for (String k : counts.keySet()) {
            out.add("+I[" + k + ", " + counts.get(k)[0] + ", " + sums.get(k).toPlainString() + "]");
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"iceberg", "paimon"})
    void lakeOnlyReadOfTheTrades(String format) {
        List<String> rows = rows(lakeEnv(),
                "SELECT `side`, COUNT(*), SUM(`notional`)\n"
                        + "FROM " + t(format, "trades$lake") + "\nGROUP BY `side`");
        assertRows(totals(LAKE_END, LakeIT::side), rows);
        assertEquals(2, rows.size(), rows.toString());
    }

    @Test
    void lakeRowsCarryTheirBucketAndOffset() {
        List<String> rows = rows(batchEnv(),
                "SELECT `trade_id`, `__bucket`, `__offset`, `__timestamp` IS NOT NULL\n"
                        + "FROM `fluss_catalog`.`finance`.`trades$lake`");
        assertEquals(LAKE_END, rows.size(), rows.toString());
        List<String> ids = new ArrayList<>();
        List<String> positions = new ArrayList<>();
        for (String r : rows) {
            String[] f = r.substring(3, r.length() - 1).split(", ");
            ids.add(f[0]);
            positions.add(f[1] + "@" + f[2]);
            assertEquals("true", f[3], r);
            int bucket = Integer.parseInt(f[1]);
            assertTrue(bucket >= 0 && bucket < 3, r);
        }
        List<String> expectedIds = new ArrayList<>();
        for (int id = 1; id <= LAKE_END; id++) {
            expectedIds.add(String.valueOf(id));
        }
        assertRows(expectedIds, ids);
        assertEquals(LAKE_END, positions.stream().distinct().count(), positions.toString());
    }

    @Test
    void lakeViewIsBoundedInStreamingMode() {
        // The streaming job ends on its own: the lake view is a bounded source.
        List<String> rows = rows(streamEnv(),
                "SELECT `trade_id` FROM `fluss_catalog`.`finance`.`trades$lake`");
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= LAKE_END; id++) {
            expected.add("+I[" + id + "]");
        }
        assertRows(expected, rows);
    }

    @Test
    void lakeTimestampsAreTimestampLtz() {
        // Fluss's TIMESTAMP_LTZ(3) columns are TIMESTAMP_LTZ(3) in Flink, as on a table.
        TableEnvironment env = batchEnv();
        ResolvedSchema lake = env.from("`fluss_catalog`.`finance`.`trades$lake`").getResolvedSchema();
        assertEquals(new LocalZonedTimestampType(3), type(lake, "__timestamp"));
        assertEquals(new IntType(), type(lake, "__bucket"));
        assertEquals(new BigIntType(), type(lake, "__offset"));
        ResolvedSchema snaps =
                env.from("`fluss_catalog`.`finance`.`trades$lake$snapshots`").getResolvedSchema();
        assertEquals(new LocalZonedTimestampType(3), type(snaps, "committed_at"));
        // So they go into TIMESTAMP_LTZ(3) sinks as they are (the quickstart's print sink).
        run(env, "CREATE TEMPORARY TABLE `lake_times` (`trade_id` BIGINT, `ts` TIMESTAMP_LTZ(3))"
                + " WITH ('connector' = 'blackhole')");
        run(env, "INSERT INTO `lake_times` SELECT `trade_id`, `__timestamp`"
                + " FROM `fluss_catalog`.`finance`.`trades$lake`");
        run(env, "CREATE TEMPORARY TABLE `lake_commits` (`committed_at` TIMESTAMP_LTZ(3))"
                + " WITH ('connector' = 'print')");
        run(env, "INSERT INTO `lake_commits` SELECT `committed_at`"
                + " FROM `fluss_catalog`.`finance`.`trades$lake$snapshots`");
        assertEquals(List.of("+I[" + LAKE_END + "]"), rows(env,
                "SELECT COUNT(*) FROM `fluss_catalog`.`finance`.`trades$lake`"
                        + " WHERE `__timestamp` > TO_TIMESTAMP_LTZ(1577836800000, 3)"));
    }

    /** The type of {@code column} (nullability aside). */
    private static LogicalType type(ResolvedSchema schema, String column) {
        return schema.getColumn(column).orElseThrow().getDataType().getLogicalType().copy(true);
    }

    @Test
    void lakeSnapshotsOfTheTrades() {
        List<Row> snaps;
        try (RunningQuery q = query(batchEnv(),
                "SELECT `committed_at`, `snapshot_id`, `parent_id`, `operation`\n"
                        + "FROM `fluss_catalog`.`finance`.`trades$lake$snapshots`")) {
            snaps = new ArrayList<>(q.toEndAsRows());
        }
        // One row per commit: two commits, the second's parent the first.
        assertEquals(2, snaps.size(), snaps.toString());
        // The first commit has no parent.
        snaps.sort((a, b) -> Boolean.compare(a.getField(2) != null, b.getField(2) != null));
        Iterator<Row> i = snaps.iterator();
        Row first = i.next();
        Row second = i.next();
        assertEquals(null, first.getField(2), snaps.toString());
        assertNotEquals(null, first.getField(0), snaps.toString());
        assertEquals(first.getField(1), second.getField(2), snaps.toString());
        assertNotEquals(first.getField(1), second.getField(1), snaps.toString());
        for (Row r : snaps) {
            assertEquals("append", r.getField(3), snaps.toString());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"iceberg", "paimon"})
    void unionReadOfTheTrades(String format) {
        TableEnvironment env = lakeEnv();
        String trades = t(format, "trades");
        String lake = t(format, "trades$lake");
        String union = "SELECT `symbol`, COUNT(*), SUM(`notional`)\nFROM " + trades
                + "\nGROUP BY `symbol`";
        assertRows(totals(ALL_END, LakeIT::symbol), rows(env, union));
        // The rows written after the last commit are in the union read, not in the lake.
        List<String> lakeBySymbol = rows(env,
                "SELECT `symbol`, COUNT(*), SUM(`notional`)\nFROM " + lake + "\nGROUP BY `symbol`");
        assertRows(totals(LAKE_END, LakeIT::symbol), lakeBySymbol);
        List<String> lateInLake = rows(env,
                "SELECT `trade_id` FROM " + lake + " WHERE `trade_id` > " + LAKE_END);
        assertEquals(List.of(), lateInLake);
        List<String> lateInUnion = rows(env,
                "SELECT `trade_id` FROM " + trades + " WHERE `trade_id` > " + LAKE_END);
        assertEquals(ALL_END - LAKE_END, lateInUnion.size(), lateInUnion.toString());
        // COUNT(*) pushed down to the core counts the union too.
        assertEquals(List.of("+I[" + ALL_END + "]"), rows(env, "SELECT COUNT(*) FROM " + trades));
    }

    @Test
    void paimonLakeSnapshotsOfTheTrades() {
        // Paimon's own snapshots table: Paimon numbers a table's snapshots from 1, one per
        // commit; each tiering round appends the rows written since the previous one.
        TableEnvironment env = lakeEnv();
        assertRows(List.of("+I[1, APPEND, " + ROUND_ENDS[0] + ", " + ROUND_ENDS[0] + "]",
                        "+I[2, APPEND, " + (LAKE_END - ROUND_ENDS[0]) + ", " + LAKE_END + "]"),
                rows(env, "SELECT `snapshot_id`, `commit_kind`, `delta_record_count`,"
                        + " `total_record_count` FROM " + t("paimon", "trades$lake$snapshots")));
        // Paimon's commit_time is a TIMESTAMP(3) without time zone, as in Paimon.
        ResolvedSchema snaps = env.from(t("paimon", "trades$lake$snapshots")).getResolvedSchema();
        assertEquals(new TimestampType(3), type(snaps, "commit_time"));
    }

    @Test
    void paimonPrimaryKeyUnionReadLetsTheLogWinByKey() throws Exception {
        TableEnvironment env = lakeEnv();
        String accounts = t("paimon", "accounts");
        String columns = "SELECT `id`, `name`, `balance` FROM ";
        // $lake: the lake's merged state at the commit, one row per key (update, delete applied).
        assertRows(ACCOUNTS_AT_COMMIT, rows(env, columns + t("paimon", "accounts$lake")));
        assertEquals(List.of("+I[1]"),
                rows(env, "SELECT COUNT(*) FROM " + t("paimon", "accounts$lake$snapshots")));
        // The union read: the changes after the commit win by key, a delete removes its key.
        assertRows(ACCOUNTS_LATEST, rows(env, columns + accounts));
        assertEquals(List.of("+I[" + ACCOUNTS_LATEST.size() + "]"),
                rows(env, "SELECT COUNT(*) FROM " + accounts));

        // The streaming union read ('full'): the same latest view as inserts, one per key.
        String streaming = columns + accounts + " /*+ OPTIONS('scan.startup.mode' = 'full') */";
        assertRows(ACCOUNTS_LATEST, firstRows(lakeStreamEnv(), streaming, ACCOUNTS_LATEST.size()));

        // The union reads take the keys the log did not change from the lake: without the
        // lake's data files (Paimon keeps them in bucket-N directories) they fail, where the
        // log alone would still give every row. Last: nothing else reads this table.
        List<Path> files;
        try (Stream<Path> walk = Files.walk(paimonWarehouse().resolve("finance.db/accounts"))) {
            files = walk.filter(Files::isRegularFile)
                    .filter(p -> p.getParent().getFileName().toString().startsWith("bucket-"))
                    .collect(Collectors.toList());
        }
        assertTrue(!files.isEmpty(), "the lake has data files");
        for (Path f : files) {
            Files.delete(f);
        }
        Throwable read = assertThrows(Throwable.class, () -> rows(env, columns + accounts));
        assertTrue(causes(read).contains("accounts"), causes(read));
        Throwable stream = assertThrows(Throwable.class,
                () -> firstRows(lakeStreamEnv(), streaming, ACCOUNTS_LATEST.size()));
        assertTrue(causes(stream).contains("accounts"), causes(stream));
    }

    @ParameterizedTest
    @ValueSource(strings = {"iceberg", "paimon"})
    void streamingUnionReadOfTheTrades(String format) {
        // The quickstart's streaming union: scan.startup.mode 'full' reads the lake snapshot's
        // rows, then each bucket's log after it: the first ALL_END rows are every trade once.
        List<String> rows = firstRows(lakeStreamEnv(),
                "SELECT `trade_id`, `symbol` FROM " + t(format, "trades") + "\n"
                        + "/*+ OPTIONS('scan.startup.mode' = 'full') */", ALL_END);
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= ALL_END; id++) {
            expected.add("+I[" + id + ", " + symbol(id) + "]");
        }
        assertRows(expected, rows);
    }

    @Test
    void lakeViewsAreReadOnlyAndNeedALakeEnabledTable() {
        TableEnvironment env = batchEnv();
        Throwable write = assertThrows(Throwable.class, () -> env.executeSql(
                "INSERT INTO `fluss_catalog`.`finance`.`trades$lake` SELECT * FROM"
                        + " `fluss_catalog`.`finance`.`trades$lake`").await());
        assertTrue(causes(write).contains("read-only"), causes(write));
        run(env, "CREATE TABLE `fluss_catalog`.`finance`.`plain` (`id` BIGINT)");
        Throwable read = assertThrows(Throwable.class, () -> rows(env,
                "SELECT * FROM `fluss_catalog`.`finance`.`plain$lake`"));
        assertTrue(causes(read).contains("plain$lake"), causes(read));
    }
}
