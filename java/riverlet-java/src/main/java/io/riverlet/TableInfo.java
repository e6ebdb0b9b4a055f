package io.riverlet;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;

/** A table's metadata as the server reports it. Immutable. */
public final class TableInfo {
  private final String database;
  private final String table;
  private final long tableId;
  private final int schemaId;
  private final List<String> primaryKey;
  private final List<String> partitionKeys;
  private final List<String> bucketKeys;
  private final int bucketCount;
  private final Map<String, String> properties;
  private final Map<String, String> customProperties;
  private final String comment;
  private final Schema schema;

  TableInfo(
      String database,
      String table,
      long tableId,
      int schemaId,
      String[] primaryKey,
      String[] partitionKeys,
      String[] bucketKeys,
      int bucketCount,
      String[] properties,
      String[] customProperties,
      String comment) {
    this(
        database,
        table,
        tableId,
        schemaId,
        Admin.listOf(primaryKey),
        Admin.listOf(partitionKeys),
        Admin.listOf(bucketKeys),
        bucketCount,
        toMap(properties),
        toMap(customProperties),
        comment,
        null);
  }

  private TableInfo(
      String database,
      String table,
      long tableId,
      int schemaId,
      List<String> primaryKey,
      List<String> partitionKeys,
      List<String> bucketKeys,
      int bucketCount,
      Map<String, String> properties,
      Map<String, String> customProperties,
      String comment,
      Schema schema) {
    this.database = database;
    this.table = table;
    this.tableId = tableId;
    this.schemaId = schemaId;
    this.primaryKey = primaryKey;
    this.partitionKeys = partitionKeys;
    this.bucketKeys = bucketKeys;
    this.bucketCount = bucketCount;
    this.properties = properties;
    this.customProperties = customProperties;
    this.comment = comment;
    this.schema = schema;
  }

  TableInfo withSchema(Schema s) {
    return new TableInfo(database, table, tableId, schemaId, primaryKey, partitionKeys,
        bucketKeys, bucketCount, properties, customProperties, comment, s);
  }

  private static Map<String, String> toMap(String[] flat) {
    Map<String, String> m = new LinkedHashMap<>();
    if (flat != null) {
      for (int i = 0; i + 1 < flat.length; i += 2) {
        m.put(flat[i], flat[i + 1]);
      }
    }
    return Collections.unmodifiableMap(m);
  }

  /**
   * {@code database.table}.
   *
   * @return the qualified name
   */
  public String name() {
    return database + "." + table;
  }

  /**
   * The database name.
   *
   * @return the database
   */
  public String database() {
    return database;
  }

  /**
   * The table name without the database.
   *
   * @return the table name
   */
  public String tableName() {
    return table;
  }

  /**
   * The server-assigned table id.
   *
   * @return the id
   */
  public long tableId() {
    return tableId;
  }

  /**
   * The schema id.
   *
   * @return the schema id
   */
  public int schemaId() {
    return schemaId;
  }

  /**
   * The table's columns as Arrow fields: the types reads return, except that a top-level
   * TIMESTAMP_LTZ column is a timestamp with the zone {@code UTC} (reads return it without a
   * zone, as Fluss's log format has it: same unit and epoch values), so it can be told from
   * TIMESTAMP. A root created from this schema can be written to the table.
   *
   * @return the schema
   */
  public Schema schema() {
    return schema;
  }

  /**
   * The primary-key columns (empty for a log table).
   *
   * @return the primary key
   */
  public List<String> primaryKey() {
    return primaryKey;
  }

  /**
   * Whether the table has a primary key.
   *
   * @return true for a primary-key table
   */
  public boolean hasPrimaryKey() {
    return !primaryKey.isEmpty();
  }

  /**
   * The partition keys (empty when not partitioned).
   *
   * @return partition keys
   */
  public List<String> partitionKeys() {
    return partitionKeys;
  }

  /**
   * Whether the table is partitioned.
   *
   * @return true when it has partition keys
   */
  public boolean isPartitioned() {
    return !partitionKeys.isEmpty();
  }

  /**
   * The effective bucket keys (empty for a log table distributed without a key).
   *
   * @return bucket keys
   */
  public List<String> bucketKeys() {
    return bucketKeys;
  }

  /**
   * The number of buckets (per partition).
   *
   * @return buckets
   */
  public int bucketCount() {
    return bucketCount;
  }

  /**
   * The table's properties.
   *
   * @return properties
   */
  public Map<String, String> properties() {
    return properties;
  }

  /**
   * The table's custom properties.
   *
   * @return custom properties
   */
  public Map<String, String> customProperties() {
    return customProperties;
  }

  /**
   * The table comment.
   *
   * @return the comment, or null
   */
  public String comment() {
    return comment;
  }

  @Override
  public String toString() {
    return "TableInfo(" + name() + ", id=" + tableId + ", pk=" + primaryKey + ", partitions="
        + partitionKeys + ", buckets=" + bucketCount + ")";
  }
}
