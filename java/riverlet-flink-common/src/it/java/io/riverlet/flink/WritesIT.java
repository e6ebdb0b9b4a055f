package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.table.api.TableEnvironment;
import org.junit.jupiter.api.Test;

/**
 * The statements of the Flink writes page (fluss-flink-writes.txt), with {@code datagen}
 * sequences as the sources so that every expected row is known.
 */
class WritesIT extends FlinkTestBase {

    private static final String SOURCE_COLUMNS = "(\n"
            + "  shop_id BIGINT,\n  user_id BIGINT,\n  num_orders INT,\n  total_amount INT\n)";

    /** datagen rows (shop i, user 10+i, orders i-1, amount 97+i) for i in 1..6. */
    private static String pkSource(String name, int ordersStart, int amountStart) {
        return "CREATE TEMPORARY TABLE " + name + " " + SOURCE_COLUMNS + " WITH (\n"
                + " 'connector' = 'datagen',\n"
                + " 'fields.shop_id.kind' = 'sequence', 'fields.shop_id.start' = '1', 'fields.shop_id.end' = '6',\n"
                + " 'fields.user_id.kind' = 'sequence', 'fields.user_id.start' = '11', 'fields.user_id.end' = '16',\n"
                + " 'fields.num_orders.kind' = 'sequence', 'fields.num_orders.start' = '" + ordersStart
                + "', 'fields.num_orders.end' = '" + (ordersStart + 5) + "',\n"
                + " 'fields.total_amount.kind' = 'sequence', 'fields.total_amount.start' = '" + amountStart
                + "', 'fields.total_amount.end' = '" + (amountStart + 5) + "')";
    }

    @Test
    void appendToLogTable() {
        TableEnvironment env = streamEnv();
        run(env, "CREATE DATABASE IF NOT EXISTS writes_log");
        run(env, "USE writes_log");
        run(env, "CREATE TABLE log_table (\n  order_id BIGINT,\n  item_id BIGINT,\n  amount INT,\n"
                + "  address STRING\n)");
        run(env, "CREATE TEMPORARY TABLE source (\n  order_id BIGINT,\n  item_id BIGINT,\n  amount INT,\n"
                + "  address STRING\n) WITH ('connector' = 'datagen',\n"
                + " 'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '5',\n"
                + " 'fields.item_id.kind' = 'sequence', 'fields.item_id.start' = '101', 'fields.item_id.end' = '105',\n"
                + " 'fields.amount.kind' = 'sequence', 'fields.amount.start' = '10', 'fields.amount.end' = '14',\n"
                + " 'fields.address.kind' = 'sequence', 'fields.address.start' = '1', 'fields.address.end' = '5')");
        run(env, "INSERT INTO log_table SELECT * FROM source");
        TableEnvironment batch = batchEnv();
        assertRows(list("+I[1, 101, 10, 1]", "+I[2, 102, 11, 2]", "+I[3, 103, 12, 3]",
                        "+I[4, 104, 13, 4]", "+I[5, 105, 14, 5]"),
                rows(batch, "SELECT * FROM writes_log.log_table"));
        // A second INSERT appends: a log table keeps every row.
        run(env, "INSERT INTO log_table SELECT * FROM source");
        assertTrue(rows(batch, "SELECT * FROM writes_log.log_table").size() == 10);
    }

    @Test
    void upsertPartialUpdateDeleteAndUpdate() {
        TableEnvironment env = streamEnv();
        run(env, "CREATE DATABASE IF NOT EXISTS writes_pk");
        run(env, "USE writes_pk");
        run(env, "CREATE TABLE pk_table (\n  shop_id BIGINT,\n  user_id BIGINT,\n  num_orders INT,\n"
                + "  total_amount INT,\n  PRIMARY KEY (shop_id, user_id) NOT ENFORCED\n)");
        run(env, pkSource("source", 0, 98));
        run(env, "INSERT INTO pk_table SELECT * FROM source");
        run(env, "INSERT INTO pk_table VALUES (CAST(10000 AS BIGINT), CAST(123456 AS BIGINT), 7, 50)");
        TableEnvironment batch = batchEnv();
        batch.executeSql("USE writes_pk");
        assertRows(list("+I[1, 11, 0, 98]", "+I[2, 12, 1, 99]", "+I[3, 13, 2, 100]",
                        "+I[4, 14, 3, 101]", "+I[5, 15, 4, 102]", "+I[6, 16, 5, 103]",
                        "+I[10000, 123456, 7, 50]"),
                rows(batch, "SELECT * FROM pk_table"));

        // Updates All Columns: the same keys again, new values.
        run(env, pkSource("source2", 1, 200));
        run(env, "INSERT INTO pk_table SELECT * FROM source2");
        // Partial Updates: only num_orders changes; total_amount keeps its value.
        run(env, pkSource("source3", 0, 0));
        run(env, "INSERT INTO pk_table (shop_id, user_id, num_orders)\n"
                + "SELECT shop_id, user_id, num_orders FROM source3");
        assertRows(list("+I[1, 11, 0, 200]", "+I[2, 12, 1, 201]", "+I[3, 13, 2, 202]",
                        "+I[4, 14, 3, 203]", "+I[5, 15, 4, 204]", "+I[6, 16, 5, 205]",
                        "+I[10000, 123456, 7, 50]"),
                rows(batch, "SELECT * FROM pk_table"));

        // DELETE FROM (batch mode): by the full key, then by a non-key condition.
        run(batch, "DELETE FROM pk_table WHERE shop_id = 10000 AND user_id = 123456");
        run(batch, "DELETE FROM pk_table WHERE total_amount > 203");
        assertRows(list("+I[1, 11, 0, 200]", "+I[2, 12, 1, 201]", "+I[3, 13, 2, 202]",
                        "+I[4, 14, 3, 203]"),
                rows(batch, "SELECT * FROM pk_table"));

        // UPDATE (batch mode): by the full key, then by a non-key condition.
        run(batch, "UPDATE pk_table SET total_amount = 2 WHERE shop_id = 3 AND user_id = 13");
        run(batch, "UPDATE pk_table SET total_amount = 0 WHERE num_orders = 0");
        assertRows(list("+I[1, 11, 0, 0]", "+I[2, 12, 1, 201]", "+I[3, 13, 2, 2]",
                        "+I[4, 14, 3, 203]"),
                rows(batch, "SELECT * FROM pk_table"));

        // Primary-key columns cannot be updated.
        Throwable e = assertThrows(Throwable.class,
                () -> batch.executeSql("UPDATE pk_table SET user_id = 1 WHERE shop_id = 1").await());
        assertTrue(messages(e).contains("primary-key column 'user_id'"), messages(e));
    }

    @Test
    void deleteBehaviorAndMergeEngines() {
        TableEnvironment batch = batchEnv();
        run(batch, "CREATE DATABASE IF NOT EXISTS writes_rules");
        run(batch, "USE writes_rules");
        run(batch, "CREATE TABLE no_delete (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED)"
                + " WITH ('table.delete.behavior' = 'disable')");
        run(batch, "CREATE TABLE ignore_delete (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED)"
                + " WITH ('table.delete.behavior' = 'ignore')");
        run(batch, "CREATE TABLE first_row_t (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED)"
                + " WITH ('table.merge-engine' = 'first_row')");
        run(batch, "CREATE TABLE log_t (id INT, v INT)");
        for (String t : new String[] {"no_delete", "ignore_delete", "first_row_t", "log_t"}) {
            run(batch, "INSERT INTO " + t + " VALUES (1, 10), (2, 20)");
        }

        Throwable disabled = assertThrows(Throwable.class,
                () -> batch.executeSql("DELETE FROM no_delete WHERE id = 1").await());
        assertTrue(messages(disabled).contains("table.delete.behavior"), messages(disabled));

        run(batch, "DELETE FROM ignore_delete WHERE id = 1");
        assertRows(list("+I[1, 10]", "+I[2, 20]"), rows(batch, "SELECT * FROM ignore_delete"));

        Throwable firstRow = assertThrows(Throwable.class,
                () -> batch.executeSql("DELETE FROM first_row_t WHERE v > 0").await());
        assertTrue(messages(firstRow).contains("first_row"), messages(firstRow));
        Throwable firstRowUpdate = assertThrows(Throwable.class,
                () -> batch.executeSql("UPDATE first_row_t SET v = 1 WHERE id = 1").await());
        assertTrue(messages(firstRowUpdate).contains("first_row"), messages(firstRowUpdate));

        Throwable log = assertThrows(Throwable.class,
                () -> batch.executeSql("DELETE FROM log_t WHERE id = 1").await());
        assertTrue(messages(log).contains("primary-key"), messages(log));
        assertRows(list("+I[1, 10]", "+I[2, 20]"), rows(batch, "SELECT * FROM first_row_t"));
    }

    /**
     * A Top-1 per group whose winner changes key: Flink retracts the old winner with an
     * UPDATE_BEFORE of its key (the sink's key is not the rank's) and sends the new one as an
     * UPDATE_AFTER of another key. The sink writes the UPDATE_BEFORE as a delete, as Fluss's
     * sink does; dropping it would leave the old winners in the table.
     */
    @Test
    void topOneWhoseWinnerChangesKeyLeavesNoStaleRow() {
        TableEnvironment env = streamEnv();
        if (onConflict().isEmpty()) {
            // Flink 1.20: no upsert materializer before the sink, which would turn the
            // UPDATE_BEFORE into a DELETE itself: the sink gets the rank's changes as they are
            // (as with parallelism 1, where flink-agg.sh saw the stale rows).
            env.getConfig().set("table.exec.sink.upsert-materialize", "NONE");
        }
        run(env, "CREATE DATABASE IF NOT EXISTS writes_rules");
        run(env, "USE writes_rules");
        run(env, "CREATE TABLE top1 (id BIGINT, total BIGINT, PRIMARY KEY (id) NOT ENFORCED)");
        // Group 1: ids 1, 2 in turn (winner 2); group 2: ids 5, 7, 9 (winner 9); group 3: 4 only.
        run(env, "INSERT INTO top1 SELECT id, total FROM (SELECT id, total, ROW_NUMBER() OVER"
                + " (PARTITION BY g ORDER BY id DESC) AS rn FROM (VALUES"
                + " (1, CAST(1 AS BIGINT), CAST(10 AS BIGINT)), (1, CAST(2 AS BIGINT), CAST(20 AS BIGINT)),"
                + " (2, CAST(5 AS BIGINT), CAST(50 AS BIGINT)), (2, CAST(7 AS BIGINT), CAST(70 AS BIGINT)),"
                + " (3, CAST(4 AS BIGINT), CAST(40 AS BIGINT)), (2, CAST(9 AS BIGINT), CAST(90 AS BIGINT)))"
                + " AS v(g, id, total)) WHERE rn = 1" + onConflict());
        TableEnvironment batch = batchEnv();
        assertRows(list("+I[2, 20]", "+I[4, 40]", "+I[9, 90]"),
                rows(batch, "SELECT * FROM writes_rules.top1"));
    }

    /**
     * Flink 2 refuses a query whose upsert key is not the sink's primary key without an ON
     * CONFLICT clause (Flink 1.20 has none); DO DEDUPLICATE keeps the latest change per key.
     */
    private static String onConflict() {
        return EnvironmentInformation.getVersion().startsWith("1.") ? "" : " ON CONFLICT DO DEDUPLICATE";
    }

    static String messages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c.getMessage()).append(" | ");
        }
        return b.toString();
    }
}
