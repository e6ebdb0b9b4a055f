package io.riverlet;

import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Cluster administration: databases, tables, partitions and offsets. Thread-safe; obtained from
 * {@link Connection#admin()}. Table names are {@code database.table}.
 */
public final class Admin implements AutoCloseable {
  private final Connection connection;
  private final NativeHandle handle;

  Admin(Connection connection, long address) {
    this.connection = connection;
    this.handle = new NativeHandle("the admin of " + connection.bootstrapServers(), address,
        NativeMethods::adminFree);
  }

  /**
   * Creates a database.
   *
   * @param name the database name
   * @param ignoreIfExists no error when it exists
   * @throws DatabaseAlreadyExistsException when it exists and {@code ignoreIfExists} is false
   */
  public void createDatabase(String name, boolean ignoreIfExists) {
    Objects.requireNonNull(name, "database name");
    handle.run(a -> NativeMethods.createDatabase(a, name, ignoreIfExists));
  }

  /**
   * Drops a database.
   *
   * @param name the database name
   * @param ignoreIfNotExists no error when it does not exist
   * @param cascade drop its tables too (otherwise a non-empty database is an error)
   */
  public void dropDatabase(String name, boolean ignoreIfNotExists, boolean cascade) {
    Objects.requireNonNull(name, "database name");
    handle.run(a -> NativeMethods.dropDatabase(a, name, ignoreIfNotExists, cascade));
  }

  /**
   * The names of all databases.
   *
   * @return database names
   */
  public List<String> listDatabases() {
    return List.of(handle.call(NativeMethods::listDatabases));
  }

  /**
   * Whether a database exists.
   *
   * @param name the database name
   * @return true when it exists
   */
  public boolean databaseExists(String name) {
    Objects.requireNonNull(name, "database name");
    return handle.call(a -> NativeMethods.databaseExists(a, name));
  }

  /**
   * Creates a table.
   *
   * @param dbDotTable {@code database.table}
   * @param descriptor schema, keys, buckets and properties
   * @param ignoreIfExists no error when it exists
   * @throws TableAlreadyExistsException when it exists and {@code ignoreIfExists} is false
   * @throws InvalidArgumentException for a schema or key the server cannot take (named)
   */
  public void createTable(String dbDotTable, TableDescriptor descriptor, boolean ignoreIfExists) {
    Objects.requireNonNull(dbDotTable, "table name");
    Objects.requireNonNull(descriptor, "descriptor");
    BufferAllocator alloc = connection.allocator();
    try (ArrowSchema schema = ArrowSchema.allocateNew(alloc)) {
      Data.exportSchema(alloc, descriptor.schema(), null, schema);
      handle.run(
          a ->
              NativeMethods.createTable(
                  a,
                  dbDotTable,
                  schema.memoryAddress(),
                  descriptor.primaryKey().isEmpty()
                      ? null
                      : descriptor.primaryKey().toArray(new String[0]),
                  descriptor.partitionKeys().toArray(new String[0]),
                  descriptor.bucketKeys().toArray(new String[0]),
                  descriptor.bucketCount() == null ? -1 : descriptor.bucketCount(),
                  flatten(descriptor.properties()),
                  flatten(descriptor.customProperties()),
                  descriptor.comment(),
                  ignoreIfExists));
    }
  }

  /**
   * {@code ALTER TABLE ... ADD COLUMN}: appends the fields of {@code columns} (each nullable and
   * new) at the end. Rows written before read the new columns as null; {@link Table} handles
   * opened earlier keep the old schema (open the table again).
   *
   * @param dbDotTable {@code database.table}
   * @param columns the columns to add
   * @throws InvalidArgumentException for a NOT NULL or existing column (named)
   * @throws TableNotFoundException when the table does not exist
   */
  public void addColumns(String dbDotTable, Schema columns) {
    Objects.requireNonNull(dbDotTable, "table name");
    Objects.requireNonNull(columns, "columns");
    BufferAllocator alloc = connection.allocator();
    try (ArrowSchema schema = ArrowSchema.allocateNew(alloc)) {
      Data.exportSchema(alloc, columns, null, schema);
      handle.run(a -> NativeMethods.addColumns(a, dbDotTable, schema.memoryAddress()));
    }
  }

  /**
   * Drops a table.
   *
   * @param dbDotTable {@code database.table}
   * @param ignoreIfNotExists no error when it does not exist
   */
  public void dropTable(String dbDotTable, boolean ignoreIfNotExists) {
    Objects.requireNonNull(dbDotTable, "table name");
    handle.run(a -> NativeMethods.dropTable(a, dbDotTable, ignoreIfNotExists));
  }

  /**
   * The table names of a database.
   *
   * @param database the database name
   * @return table names (without the database)
   * @throws DatabaseNotFoundException when the database does not exist
   */
  public List<String> listTables(String database) {
    Objects.requireNonNull(database, "database name");
    return List.of(handle.call(a -> NativeMethods.listTables(a, database)));
  }

  /**
   * Whether a table exists.
   *
   * @param dbDotTable {@code database.table}
   * @return true when it exists
   */
  public boolean tableExists(String dbDotTable) {
    Objects.requireNonNull(dbDotTable, "table name");
    return handle.call(a -> NativeMethods.tableExists(a, dbDotTable));
  }

  /**
   * A table's current metadata.
   *
   * @param dbDotTable {@code database.table}
   * @return the table's info
   * @throws TableNotFoundException when it does not exist
   */
  public TableInfo getTableInfo(String dbDotTable) {
    Objects.requireNonNull(dbDotTable, "table name");
    BufferAllocator alloc = connection.allocator();
    try (ArrowSchema schema = ArrowSchema.allocateNew(alloc)) {
      TableInfo partial =
          handle.call(a -> NativeMethods.tableInfo(a, dbDotTable, schema.memoryAddress()));
      Schema s = Data.importSchema(alloc, schema, null);
      return partial.withSchema(s);
    }
  }

  /**
   * The partitions of a partitioned table.
   *
   * @param dbDotTable {@code database.table}
   * @return the partitions
   */
  public List<PartitionInfo> listPartitions(String dbDotTable) {
    Objects.requireNonNull(dbDotTable, "table name");
    return List.of(handle.call(a -> NativeMethods.listPartitions(a, dbDotTable)));
  }

  /**
   * Creates a partition.
   *
   * @param dbDotTable {@code database.table}
   * @param spec partition key to value (every partition key)
   * @param ignoreIfExists no error when it exists
   */
  public void createPartition(
      String dbDotTable, Map<String, String> spec, boolean ignoreIfExists) {
    Objects.requireNonNull(dbDotTable, "table name");
    String[] flat = flatten(Objects.requireNonNull(spec, "partition spec"));
    handle.run(a -> NativeMethods.createPartition(a, dbDotTable, flat, ignoreIfExists));
  }

  /**
   * Drops a partition.
   *
   * @param dbDotTable {@code database.table}
   * @param spec partition key to value
   * @param ignoreIfNotExists no error when it does not exist
   */
  public void dropPartition(
      String dbDotTable, Map<String, String> spec, boolean ignoreIfNotExists) {
    Objects.requireNonNull(dbDotTable, "table name");
    String[] flat = flatten(Objects.requireNonNull(spec, "partition spec"));
    handle.run(a -> NativeMethods.dropPartition(a, dbDotTable, flat, ignoreIfNotExists));
  }

  /**
   * Offsets per bucket.
   *
   * @param dbDotTable {@code database.table}
   * @param partition the partition name (values joined by {@code $}), or null for a table
   *     without partitions
   * @param buckets the buckets, or empty for all
   * @param spec which offset
   * @return bucket to offset, in bucket order
   */
  public Map<Integer, Long> listOffsets(
      String dbDotTable, String partition, Collection<Integer> buckets, OffsetSpec spec) {
    Objects.requireNonNull(dbDotTable, "table name");
    Objects.requireNonNull(spec, "offset spec");
    int[] b =
        buckets == null ? new int[0] : buckets.stream().mapToInt(Integer::intValue).toArray();
    long[] flat =
        handle.call(
            a -> NativeMethods.listOffsets(a, dbDotTable, partition, b, spec.kind, spec.timestamp));
    Map<Integer, Long> out = new LinkedHashMap<>();
    for (int i = 0; i + 1 < flat.length; i += 2) {
      out.put((int) flat[i], flat[i + 1]);
    }
    return Collections.unmodifiableMap(out);
  }

  /**
   * {@link #listOffsets(String, String, Collection, OffsetSpec)} of every bucket.
   *
   * @param dbDotTable {@code database.table}
   * @param partition the partition name, or null
   * @param spec which offset
   * @return bucket to offset
   */
  public Map<Integer, Long> listOffsets(String dbDotTable, String partition, OffsetSpec spec) {
    return listOffsets(dbDotTable, partition, Collections.emptyList(), spec);
  }

  /** Frees the native admin (the connection stays open). Idempotent. */
  @Override
  public void close() {
    handle.close();
    connection.unregister(this);
  }

  static String[] flatten(Map<String, String> m) {
    String[] out = new String[m.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : m.entrySet()) {
      out[i++] = Objects.requireNonNull(e.getKey(), "key");
      out[i++] = Objects.requireNonNull(e.getValue(), () -> "value of " + e.getKey());
    }
    return out;
  }

  static List<String> listOf(String[] a) {
    return a == null ? List.of() : Collections.unmodifiableList(Arrays.asList(a));
  }
}
