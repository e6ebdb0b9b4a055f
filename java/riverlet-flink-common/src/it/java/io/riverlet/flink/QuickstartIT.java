package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The non-lake part of the Ververica quickstart (fluss-quickstart-ververica.txt): the catalog,
 * the accounts primary-key table upserted by a generator, the trades log table, streaming
 * reads, the changelog read and the lookup join with COALESCE for unknown accounts. The
 * {@code faker} generators become {@code datagen} sequences, so every expected row is known:
 * accounts 1..19 are written twice (balance 100*id, then 100*id + 1), trades 1..44 belong to
 * accounts (id % 22) + 1, so accounts 20..22 are unknown.
 */
class QuickstartIT extends FlinkTestBase {

    @BeforeAll
    static void createAndFill() {
        TableEnvironment env = streamEnv();
        run(env, "CREATE DATABASE IF NOT EXISTS `fluss_catalog`.`finance`");
        run(env, "CREATE TABLE IF NOT EXISTS `fluss_catalog`.`finance`.`accounts` (\n"
                + "    `account_id`  INT NOT NULL,\n    `client_name` STRING,\n    `risk_rating` STRING,\n"
                + "    `currency`    STRING,\n    `balance`     DECIMAL(15, 2),\n"
                + "    PRIMARY KEY (`account_id`) NOT ENFORCED\n) WITH (\n    'bucket.num' = '3'\n)");
        run(env, "CREATE TABLE IF NOT EXISTS `fluss_catalog`.`finance`.`trades` (\n"
                + "    `trade_id`   BIGINT,\n    `account_id` INT NOT NULL,\n    `notional`   DECIMAL(15, 2),\n"
                + "    `trade_date` DATE,\n    `side`       STRING,\n    `symbol`     STRING\n) WITH (\n"
                + "    'bucket.num'               = '3'\n)");
        for (int pass = 0; pass < 2; pass++) {
            run(env, "CREATE TEMPORARY TABLE account_feed_" + pass + " (\n"
                    + "    `account_id`  INT NOT NULL,\n    `pass`        INT\n) WITH (\n"
                    + "    'connector' = 'datagen',\n"
                    + "    'fields.account_id.kind' = 'sequence', 'fields.account_id.start' = '1',"
                    + " 'fields.account_id.end' = '19',\n"
                    + "    'fields.pass.kind' = 'sequence', 'fields.pass.start' = '" + pass + "',"
                    + " 'fields.pass.end' = '" + (pass + 18) + "')");
            run(env, "INSERT INTO `fluss_catalog`.`finance`.`accounts`\n"
                    + "SELECT `account_id`, CONCAT('Client ', CAST(`account_id` AS STRING)),\n"
                    + "  CASE MOD(`account_id`, 3) WHEN 0 THEN 'low' WHEN 1 THEN 'medium' ELSE 'high' END,\n"
                    + "  CASE MOD(`account_id`, 2) WHEN 0 THEN 'USD' ELSE 'EUR' END,\n"
                    + "  CAST(`account_id` * 100 + " + pass + " AS DECIMAL(15, 2))\n"
                    + "FROM account_feed_" + pass);
        }
        run(env, "CREATE TEMPORARY TABLE trade_feed (\n    `trade_id`   BIGINT,\n"
                + "    `trade_time` TIMESTAMP(3)\n) WITH (\n    'connector' = 'datagen',\n"
                + "    'fields.trade_id.kind' = 'sequence', 'fields.trade_id.start' = '1',"
                + " 'fields.trade_id.end' = '44')");
        run(env, "INSERT INTO `fluss_catalog`.`finance`.`trades`\n"
                + "SELECT `trade_id`, CAST(MOD(`trade_id`, 22) + 1 AS INT),\n"
                + "  CAST(`trade_id` * 10 AS DECIMAL(15, 2)), DATE '2026-01-01',\n"
                + "  CASE MOD(`trade_id`, 2) WHEN 0 THEN 'BUY' ELSE 'SELL' END, 'AAPL'\n"
                + "FROM trade_feed");
    }

    private static String account(int id) {
        String risk = id % 3 == 0 ? "low" : id % 3 == 1 ? "medium" : "high";
        String currency = id % 2 == 0 ? "USD" : "EUR";
        return id + ", Client " + id + ", " + risk + ", " + currency;
    }

    @Test
    void readTheAccounts() {
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= 19; id++) {
            expected.add("+I[" + account(id) + ", " + (id * 100 + 1) + ".00]");
        }
        assertRows(expected, firstRows(streamEnv(),
                "SELECT * FROM `fluss_catalog`.`finance`.`accounts`", 19));
    }

    @Test
    void readTheChangelogOfTheAccounts() {
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= 19; id++) {
            expected.add("+I[insert, " + id + ", " + (id * 100) + ".00]");
            expected.add("+I[update_before, " + id + ", " + (id * 100) + ".00]");
            expected.add("+I[update_after, " + id + ", " + (id * 100 + 1) + ".00]");
        }
        assertRows(expected, firstRows(streamEnv(),
                "SELECT `_change_type`, `account_id`, `balance`\n"
                        + "FROM `fluss_catalog`.`finance`.`accounts$changelog`", 57));
        // Offsets and commit times are the log's: per bucket, offsets 0.. in order.
        List<String> meta = firstRowsInOrder(streamEnv(),
                "SELECT `_log_offset`, `_commit_timestamp` IS NOT NULL FROM"
                        + " `fluss_catalog`.`finance`.`accounts$changelog`", 57);
        long zeros = meta.stream().filter(r -> r.startsWith("+I[0, true]")).count();
        assertEquals(3, zeros, meta.toString());
    }

    @Test
    void readTheTrades() {
        List<String> expected = new ArrayList<>();
        for (long id = 1; id <= 44; id++) {
            expected.add("+I[" + id + ", " + (id % 22 + 1) + ", " + (id * 10) + ".00, 2026-01-01, "
                    + (id % 2 == 0 ? "BUY" : "SELL") + ", AAPL]");
        }
        assertRows(expected, firstRows(streamEnv(),
                "SELECT * FROM `fluss_catalog`.`finance`.`trades`"
                        + " /*+ OPTIONS('scan.startup.mode' = 'earliest') */", 44));
    }

    private static String enrichQuery(String startup, String async) {
        return enrichQuery("trades", startup, async);
    }

    private static String enrichQuery(String trades, String startup, String async) {
        return "SELECT t.`trade_id`, t.`account_id`,\n"
                + "       COALESCE(a.`client_name`, 'unknown'), COALESCE(a.`risk_rating`, 'unknown'),\n"
                + "       t.`notional`, t.`side`, t.`symbol`\nFROM (\n"
                + "    SELECT *, PROCTIME() AS `ptime`\n"
                + "    FROM `fluss_catalog`.`finance`.`" + trades + "` /*+ OPTIONS('scan.startup.mode' = '"
                + startup + "') */\n) AS t\n"
                + "LEFT JOIN `fluss_catalog`.`finance`.`accounts` /*+ OPTIONS('lookup.async' = '" + async
                + "') */\nFOR SYSTEM_TIME AS OF t.`ptime` AS a\nON t.`account_id` = a.`account_id`";
    }

    private static List<String> enriched() {
        List<String> expected = new ArrayList<>();
        for (long id = 1; id <= 44; id++) {
            int acc = (int) (id % 22 + 1);
            String who = acc <= 19
                    ? "Client " + acc + ", " + (acc % 3 == 0 ? "low" : acc % 3 == 1 ? "medium" : "high")
                    : "unknown, unknown";
            expected.add("+I[" + id + ", " + acc + ", " + who + ", " + (id * 10) + ".00, "
                    + (id % 2 == 0 ? "BUY" : "SELL") + ", AAPL]");
        }
        return expected;
    }

    @Test
    void enrichTheTradesAsyncAndSync() {
        assertRows(enriched(), firstRows(streamEnv(), enrichQuery("earliest", "true"), 44));
        assertRows(enriched(), firstRows(streamEnv(), enrichQuery("earliest", "false"), 44));
        assertRows(enriched(), firstRows(streamEnv(), enrichQuery("earliest", "true")
                .replace("'lookup.async' = 'true'", "'lookup.async' = 'true', 'lookup.cache' = 'PARTIAL',"
                        + " 'lookup.partial-cache.max-rows' = '100'"), 44));
    }

    /**
     * Cancels the enrichment of an endless feed of trades (datagen, 20,000 rows/s into the
     * async lookup join) five times, each time with lookups in flight. Their keys and rows live
     * in the lookup connection's Arrow allocator: the lookup function closed that connection
     * without waiting for them, closing the allocator threw a leak error from close(), and in
     * Flink 2.x an exception from close() after a cancel is fatal to the TaskManager, so every
     * later job waited for slots (the intermittent NoResourceAvailableException of the test after
     * {@link #enrichNewTradesFromLatest}). After each round the TaskManager must still have all
     * its slots ({@link #awaitAllSlotsFree}).
     */
    @Test
    void cancelTheEnrichmentWhileLookupsAreInFlight(@InjectMiniCluster MiniCluster cluster) throws Exception {
        for (int round = 0; round < 5; round++) {
            TableEnvironment env = streamEnv();
            run(env, "CREATE TEMPORARY TABLE trade_stream (`account_id` INT NOT NULL) WITH ('connector' = 'datagen',"
                    + " 'rows-per-second' = '20000', 'fields.account_id.min' = '1', 'fields.account_id.max' = '22')");
            List<String> rows = firstRows(env, "SELECT s.`account_id`, COALESCE(a.`client_name`, 'unknown')\n"
                    + "FROM (SELECT *, PROCTIME() AS `ptime` FROM trade_stream) AS s\n"
                    + "LEFT JOIN `fluss_catalog`.`finance`.`accounts` /*+ OPTIONS('lookup.async' = 'true') */\n"
                    + "FOR SYSTEM_TIME AS OF s.`ptime` AS a\nON s.`account_id` = a.`account_id`", 500);
            for (String row : rows) {
                int acc = Integer.parseInt(row.substring(3, row.indexOf(',')));
                assertEquals("+I[" + acc + ", " + (acc <= 19 ? "Client " + acc : "unknown") + "]", row);
            }
            awaitAllSlotsFree(cluster);
        }
    }

    @Test
    void enrichNewTradesFromLatest() throws Exception {
        TableEnvironment env = streamEnv();
        run(env, "CREATE TABLE `fluss_catalog`.`finance`.`trades_live` (`trade_id` BIGINT,"
                + " `account_id` INT NOT NULL, `notional` DECIMAL(15, 2), `trade_date` DATE,"
                + " `side` STRING, `symbol` STRING) WITH ('bucket.num' = '3')");
        try (RunningQuery q = query(env, enrichQuery("trades_live", "latest", "true"))) {
            List<String> got = whileInserting(1000, 1100, i -> "INSERT INTO `fluss_catalog`.`finance`.`trades_live`"
                    + " VALUES (CAST(" + i + " AS BIGINT), " + (i % 22 + 1) + ", 1.00, DATE '2026-01-02', 'BUY', 'MSFT')",
                    () -> q.take(2));
            for (String row : got) {
                assertTrue(row.endsWith(", 1.00, BUY, MSFT]"), got.toString());
                int acc = Integer.parseInt(row.split(", ")[1]);
                assertTrue(row.contains(acc <= 19 ? "Client " + acc : "unknown, unknown"), row);
            }
        }
    }
}
