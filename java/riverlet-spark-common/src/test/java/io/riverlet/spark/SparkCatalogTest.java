package io.riverlet.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.riverlet.TableInfo;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.junit.jupiter.api.Test;

/** Namespaces, CREATE / DROP / SHOW TABLES and DESCRIBE through the catalog. */
class SparkCatalogTest extends SparkTestBase {

  @Test
  void namespacesAreDatabases() {
    String extra = "catalog_extra" + RUN_SUFFIX;
    sql("CREATE NAMESPACE fluss_catalog." + extra);
    assertTrue(rows("SHOW NAMESPACES IN fluss_catalog").contains("[" + extra + "]"));
    assertTrue(connection().admin().databaseExists(extra));
    sql("CREATE TABLE fluss_catalog." + extra + ".t (a INT)");
    // Not empty: a plain DROP fails, CASCADE drops the tables too.
    assertThrows(Exception.class, () -> sql("DROP NAMESPACE fluss_catalog." + extra));
    sql("DROP NAMESPACE fluss_catalog." + extra + " CASCADE");
    assertFalse(rows("SHOW NAMESPACES IN fluss_catalog").contains("[" + extra + "]"));
  }

  @Test
  void createShowDescribeDrop() {
    sql("CREATE TABLE orders (order_id BIGINT, item_id BIGINT, amount INT, dt STRING) "
        + "PARTITIONED BY (dt) TBLPROPERTIES ('primary.key' = 'order_id,dt', "
        + "'bucket.num' = '3', 'table.log.ttl' = '2d', 'owner.team' = 'payments')");
    List<String> tables = rows("SHOW TABLES").stream().collect(Collectors.toList());
    assertTrue(tables.contains("[" + db + ",orders,false]"), tables.toString());

    TableInfo info = connection().admin().getTableInfo(db + ".orders");
    assertEquals(List.of("order_id", "dt"), info.primaryKey());
    assertEquals(List.of("dt"), info.partitionKeys());
    assertEquals(3, info.bucketCount());
    assertEquals("2d", info.properties().get("table.log.ttl"));
    assertEquals("payments", info.customProperties().get("owner.team"));

    Map<String, String> described =
        sql("DESCRIBE TABLE EXTENDED orders").collectAsList().stream()
            .collect(Collectors.toMap(r -> r.getString(0), r -> String.valueOf(r.get(1)),
                (a, b) -> a));
    assertEquals("bigint", described.get("order_id"));
    String props = described.get("Table Properties");
    assertTrue(props.contains("primary.key=order_id,dt"), props);
    assertTrue(props.contains("bucket.num=3"), props);
    assertTrue(props.contains("table.log.ttl=2d"), props);
    // The partition column is listed under "# Partition Information".
    List<Row> all = sql("DESCRIBE TABLE orders").collectAsList();
    int header = -1;
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).getString(0).equals("# Partition Information")) {
        header = i;
      }
    }
    assertTrue(header >= 0, all.toString());
    assertEquals("dt", all.get(header + 2).getString(0));

    TableAlreadyExistsException dup =
        assertThrows(TableAlreadyExistsException.class,
            () -> sql("CREATE TABLE orders (a INT)"));
    assertTrue(dup.getMessage().contains("orders"), dup.getMessage());

    sql("DROP TABLE orders");
    assertFalse(rows("SHOW TABLES").contains("[" + db + ",orders,false]"));
    assertThrows(Exception.class, () -> sql("SELECT * FROM orders"));
    assertThrows(NoSuchTableException.class,
        () -> ((SparkCatalog) spark().sessionState().catalogManager().catalog(CATALOG))
            .loadTable(org.apache.spark.sql.connector.catalog.Identifier.of(
                new String[] {db}, "orders")));
  }

  @Test
  void badTablePropertiesAreNamed() {
    Exception e = assertThrows(Exception.class,
        () -> sql("CREATE TABLE bad_buckets (a INT) TBLPROPERTIES ('bucket.num' = 'x')"));
    assertTrue(e.getMessage().contains("bucket.num") && e.getMessage().contains("'x'"),
        e.getMessage());
    Exception pk = assertThrows(Exception.class,
        () -> sql("CREATE TABLE bad_pk (a INT) TBLPROPERTIES ('primary.key' = 'nope')"));
    assertTrue(pk.getMessage().contains("nope"), pk.getMessage());
  }
}
