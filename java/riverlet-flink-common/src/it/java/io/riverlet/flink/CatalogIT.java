package io.riverlet.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.ObjectPath;
import org.junit.jupiter.api.Test;

/** The {@code fluss} catalog: databases, tables with keys, partitions and options, $changelog. */
class CatalogIT extends FlinkTestBase {

    @Test
    void databasesAndTables() throws Exception {
        TableEnvironment env = batchEnv();
        run(env, "CREATE DATABASE cat_db");
        run(env, "CREATE DATABASE IF NOT EXISTS cat_db");
        assertTrue(rows(env, "SHOW DATABASES").contains("+I[" + db("cat_db") + "]"));
        run(env, "USE cat_db");
        run(env, "CREATE TABLE pk (a INT, b STRING, c DECIMAL(10, 2), d TIMESTAMP(3), e DATE,"
                + " f BIGINT NOT NULL, PRIMARY KEY (a, f) NOT ENFORCED)"
                + " WITH ('bucket.num' = '4', 'table.log.ttl' = '7d', 'my.custom' = 'x')");
        run(env, "CREATE TABLE parted (id BIGINT, v STRING, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED)"
                + " PARTITIONED BY (dt)");
        run(env, "CREATE TABLE logt (id BIGINT, ts TIMESTAMP_LTZ(3), bin BYTES, flag BOOLEAN, small SMALLINT,"
                + " tiny TINYINT, f FLOAT, d DOUBLE)");
        assertEquals(list("+I[logt]", "+I[parted]", "+I[pk]"), rows(env, "SHOW TABLES"));

        var catalog = env.getCatalog("fluss_catalog").orElseThrow();
        CatalogTable pk = (CatalogTable) catalog.getTable(new ObjectPath(db("cat_db"), "pk"));
        assertEquals(List.of("a", "f"), pk.getUnresolvedSchema().getPrimaryKey().orElseThrow().getColumnNames());
        assertEquals("4", pk.getOptions().get("bucket.num"));
        assertEquals("7d", pk.getOptions().get("table.log.ttl"));
        assertEquals("x", pk.getOptions().get("my.custom"));
        String schema = pk.getUnresolvedSchema().toString();
        assertTrue(schema.contains("DECIMAL(10, 2)") && schema.contains("TIMESTAMP(3)")
                && schema.contains("`f` BIGINT NOT NULL"), schema);

        CatalogTable parted = (CatalogTable) catalog.getTable(new ObjectPath(db("cat_db"), "parted"));
        assertEquals(List.of("dt"), parted.getPartitionKeys());

        CatalogBaseTable changelog = catalog.getTable(new ObjectPath(db("cat_db"), "pk$changelog"));
        String cl = changelog.getUnresolvedSchema().toString();
        assertTrue(cl.indexOf("_change_type") < cl.indexOf("_log_offset")
                && cl.indexOf("_log_offset") < cl.indexOf("_commit_timestamp")
                && cl.indexOf("_commit_timestamp") < cl.indexOf("`a`"), cl);

        run(env, "DROP TABLE logt");
        assertFalse(catalog.tableExists(new ObjectPath(db("cat_db"), "logt")));
        run(env, "DROP TABLE IF EXISTS logt");
        assertThrows(Exception.class, () -> env.executeSql("DROP TABLE logt").await());
        run(env, "CREATE DATABASE IF NOT EXISTS other_db");
        run(env, "USE other_db");
        run(env, "DROP DATABASE cat_db CASCADE");
        assertFalse(rows(env, "SHOW DATABASES").contains("+I[" + db("cat_db") + "]"));
    }
}
