package io.riverlet;

import java.util.ArrayList;
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
   * Adds ACLs (the server needs {@code authorizer.enabled}). Needs ALTER on each entry's
   * resource (a table's: its database).
   *
   * @param acls the entries
   * @throws AuthorizationException when the caller may not alter a resource's ACLs
   * @throws InvalidArgumentException for a bad resource, principal or operation (named)
   */
  public void createAcls(List<AclEntry> acls) {
    Objects.requireNonNull(acls, "acls");
    String[] flat = new String[acls.size() * 4];
    int i = 0;
    for (AclEntry e : acls) {
      Objects.requireNonNull(e, "acl");
      flat[i++] = e.resource();
      flat[i++] = e.principal();
      flat[i++] = e.operation();
      flat[i++] = e.host();
    }
    handle.run(a -> NativeMethods.createAcls(a, flat));
  }

  /**
   * The ACLs matching a filter, on the resources the caller may DESCRIBE. Each argument may be
   * null (or {@code ANY}) to match everything.
   *
   * @param resource {@code cluster}, {@code cluster.db} or {@code cluster.db.table}
   * @param principal {@code Type:name} ({@code ALL}: the wildcard principal)
   * @param operation an operation name
   * @param host a host
   * @param permission a permission ({@code ALLOW})
   * @return the matching entries
   */
  public List<AclEntry> listAcls(
      String resource, String principal, String operation, String host, String permission) {
    String[] f = filter(resource, principal, operation, host, permission);
    return entries(handle.call(a -> NativeMethods.listAcls(a, f)));
  }

  /**
   * Removes the ACLs matching a filter (as {@link #listAcls}) and returns them.
   *
   * @param resource see {@link #listAcls}
   * @param principal see {@link #listAcls}
   * @param operation see {@link #listAcls}
   * @param host see {@link #listAcls}
   * @param permission see {@link #listAcls}
   * @return the removed entries
   * @throws AuthorizationException when the caller may not alter a matched resource's ACLs
   */
  public List<AclEntry> dropAcls(
      String resource, String principal, String operation, String host, String permission) {
    String[] f = filter(resource, principal, operation, host, permission);
    return entries(handle.call(a -> NativeMethods.dropAcls(a, f)));
  }

  /**
   * Registers a producer's offsets (Fluss's RegisterProducerOffsets). A live registration of the
   * producer is kept as it is.
   *
   * @param producerId the producer id (a table-name-like id: ASCII letters, digits, {@code _},
   *     {@code -}, at most 200 characters)
   * @param offsets the offset of each bucket
   * @param ttl how long the registration lives, or {@code null} for the server's default
   *     ({@code coordinator.producer-offsets.ttl}, 24 h unless configured)
   * @return true when registered, false when a live registration existed (and was kept)
   * @throws RiverletException with {@code flussCodeName()} {@code
   *     INVALID_PRODUCER_ID_EXCEPTION} for an invalid producer id (named)
   * @throws InvalidArgumentException for a negative ttl (named)
   */
  public boolean registerProducerOffsets(
      String producerId, Map<ProducerBucket, Long> offsets, java.time.Duration ttl) {
    Objects.requireNonNull(producerId, "producer id");
    Objects.requireNonNull(offsets, "offsets");
    long[] flat = new long[offsets.size() * 5];
    int i = 0;
    for (Map.Entry<ProducerBucket, Long> e : offsets.entrySet()) {
      ProducerBucket b = Objects.requireNonNull(e.getKey(), "bucket");
      flat[i++] = b.tableId();
      flat[i++] = b.partitionId() == null ? 0 : 1;
      flat[i++] = b.partitionId() == null ? 0 : b.partitionId();
      flat[i++] = b.bucket();
      flat[i++] = Objects.requireNonNull(e.getValue(), "offset");
    }
    boolean hasTtl = ttl != null;
    long ttlMs = hasTtl ? ttl.toMillis() : 0;
    return handle.call(
        a -> NativeMethods.registerProducerOffsets(a, producerId, flat, hasTtl, ttlMs));
  }

  /**
   * A producer's live registration (the tables the caller may not READ are left out).
   *
   * @param producerId the producer id
   * @return the registration, or {@code null} when there is none
   * @throws RiverletException with {@code flussCodeName()} {@code
   *     INVALID_PRODUCER_ID_EXCEPTION} for an invalid producer id (named)
   */
  public ProducerOffsets getProducerOffsets(String producerId) {
    Objects.requireNonNull(producerId, "producer id");
    long[] flat = handle.call(a -> NativeMethods.getProducerOffsets(a, producerId));
    if (flat == null) {
      return null;
    }
    Map<ProducerBucket, Long> offsets = new LinkedHashMap<>();
    for (int i = 1; i + 4 < flat.length; i += 5) {
      Long partition = flat[i + 1] != 0 ? flat[i + 2] : null;
      offsets.put(new ProducerBucket(flat[i], partition, (int) flat[i + 3]), flat[i + 4]);
    }
    return new ProducerOffsets(producerId, flat[0], Collections.unmodifiableMap(offsets));
  }

  /**
   * How far a lake-enabled table is tiered: its latest lake snapshot, as Fluss's {@code
   * Admin.getLatestLakeSnapshot} reports it.
   *
   * @param dbDotTable the table, {@code "db.table"}
   * @return the snapshot, or {@code null} when the table has none (nothing tiered yet, or not
   *     lake-enabled)
   * @throws RiverletException for a missing table (named)
   */
  public LakeSnapshot lakeSnapshot(String dbDotTable) {
    return lakeSnapshot(dbDotTable, false, 0, false);
  }

  /**
   * The lake snapshot {@code snapshotId} of a lake-enabled table ({@code
   * Admin.getLakeSnapshot}).
   *
   * @param dbDotTable the table, {@code "db.table"}
   * @param snapshotId the lake's snapshot id
   * @return the snapshot, or {@code null} when the table has no such snapshot
   * @throws RiverletException for a missing table (named)
   */
  public LakeSnapshot lakeSnapshot(String dbDotTable, long snapshotId) {
    return lakeSnapshot(dbDotTable, true, snapshotId, false);
  }

  /**
   * The lake snapshot union reads take ({@code Admin.getReadableLakeSnapshot}): the latest,
   * except for a Paimon deletion-vector table, whose readable snapshot can be older or missing.
   *
   * @param dbDotTable the table, {@code "db.table"}
   * @return the snapshot, or {@code null} when the table has none
   * @throws RiverletException for a missing table (named)
   */
  public LakeSnapshot readableLakeSnapshot(String dbDotTable) {
    return lakeSnapshot(dbDotTable, false, 0, true);
  }

  private LakeSnapshot lakeSnapshot(
      String dbDotTable, boolean byId, long snapshotId, boolean readable) {
    Objects.requireNonNull(dbDotTable, "table name");
    long[] flat = handle.call(
        a -> NativeMethods.lakeSnapshot(a, dbDotTable, byId, snapshotId, readable));
    if (flat == null) {
      return null;
    }
    List<BucketOffset> buckets = new ArrayList<>();
    for (int i = 2; i + 3 < flat.length; i += 4) {
      Long partition = flat[i] != 0 ? flat[i + 1] : null;
      buckets.add(new BucketOffset(partition, (int) flat[i + 2], flat[i + 3]));
    }
    return new LakeSnapshot(flat[0], flat[1], buckets);
  }

  /**
   * Deletes a producer's registration (none to delete is not an error).
   *
   * @param producerId the producer id
   * @throws RiverletException with {@code flussCodeName()} {@code
   *     INVALID_PRODUCER_ID_EXCEPTION} for an invalid producer id (named)
   */
  public void deleteProducerOffsets(String producerId) {
    Objects.requireNonNull(producerId, "producer id");
    handle.run(a -> NativeMethods.deleteProducerOffsets(a, producerId));
  }

  /**
   * Every server option and where its value comes from (Fluss's DescribeClusterConfigs).
   *
   * @return the options, as the server lists them
   */
  public List<ConfigEntry> describeClusterConfigs() {
    String[] flat = handle.call(NativeMethods::describeClusterConfigs);
    List<ConfigEntry> out = new ArrayList<>(flat.length / 3);
    for (int i = 0; i + 2 < flat.length; i += 3) {
      out.add(new ConfigEntry(flat[i], flat[i + 1], flat[i + 2]));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * Changes server options while the server runs (Fluss's AlterClusterConfigs). Only the options
   * Fluss lets change at run time are accepted ({@code kv.snapshot.interval} on the embedded
   * server); a deleted option returns to its start-up value.
   *
   * @param set the options to set and their values
   * @param delete the options to return to their start-up values
   * @throws RiverletException naming an option that may not change at run time, or a bad value
   * @throws AuthorizationException without ALTER on the cluster (with {@code authorizer.enabled})
   */
  public void alterClusterConfigs(Map<String, String> set, Collection<String> delete) {
    String[] pairs = flatPairs(set);
    String[] keys = names(delete, "option to delete");
    handle.run(a -> NativeMethods.alterClusterConfigs(a, pairs, keys));
  }

  /**
   * Changes a database's custom properties and comment (Fluss's AlterDatabase).
   *
   * @param name the database
   * @param set the properties to set
   * @param reset the properties to remove
   * @param comment the new comment, {@code ""} to remove it, or {@code null} to keep it
   * @param ignoreIfNotExists whether a missing database is not an error
   * @throws DatabaseNotFoundException for a missing database (unless ignored)
   */
  public void alterDatabase(
      String name,
      Map<String, String> set,
      Collection<String> reset,
      String comment,
      boolean ignoreIfNotExists) {
    Objects.requireNonNull(name, "database name");
    String[] pairs = flatPairs(set);
    String[] keys = names(reset, "property to reset");
    handle.run(a -> NativeMethods.alterDatabase(a, name, pairs, keys, comment, ignoreIfNotExists));
  }

  /**
   * A database's comment, custom properties and times.
   *
   * @param name the database
   * @return its description
   * @throws DatabaseNotFoundException for a missing database
   */
  public DatabaseInfo databaseInfo(String name) {
    Objects.requireNonNull(name, "database name");
    String[] flat = handle.call(a -> NativeMethods.databaseInfo(a, name));
    Map<String, String> props = new LinkedHashMap<>();
    for (int i = 3; i + 1 < flat.length; i += 2) {
      props.put(flat[i], flat[i + 1]);
    }
    return new DatabaseInfo(name, flat[0], Collections.unmodifiableMap(props),
        Long.parseLong(flat[1]), Long.parseLong(flat[2]));
  }

  private static String[] flatPairs(Map<String, String> map) {
    if (map == null) {
      return new String[0];
    }
    String[] out = new String[map.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : map.entrySet()) {
      out[i++] = Objects.requireNonNull(e.getKey(), "option name");
      out[i++] = Objects.requireNonNull(e.getValue(), "value of " + e.getKey());
    }
    return out;
  }

  private static String[] names(Collection<String> names, String what) {
    if (names == null) {
      return new String[0];
    }
    String[] out = names.toArray(new String[0]);
    for (String n : out) {
      Objects.requireNonNull(n, what);
    }
    return out;
  }

  private static String[] filter(String... parts) {
    String[] out = new String[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = parts[i] == null ? "" : parts[i];
    }
    return out;
  }

  private static List<AclEntry> entries(String[] flat) {
    List<AclEntry> out = new java.util.ArrayList<>();
    for (int i = 0; i + 4 < flat.length; i += 5) {
      out.add(new AclEntry(flat[i], flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4]));
    }
    return Collections.unmodifiableList(out);
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
