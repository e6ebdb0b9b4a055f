package io.riverlet;

/**
 * The JNI entries of {@code libriverlet_jni} (crate {@code riverlet-jni}, java/native). Every
 * method converts its arguments to core values, calls {@code riverlet::blocking}, and converts
 * the result back; errors and panics come back as {@link RiverletException}s. Handles are native
 * addresses owned by a {@link NativeHandle}; Arrow crosses as addresses of C Data Interface
 * structs allocated here in Java.
 */
final class NativeMethods {
  private NativeMethods() {}

  // Process.
  static native String version();

  static native long liveHandles();

  static native void configureRuntime(int threads);

  // Connection.
  static native long connect(String[] keys, String[] values);

  static native void connectionClose(long conn);

  static native void connectionFree(long conn);

  static native long connectionAdmin(long conn);

  static native long connectionTable(long conn, String name);

  // Admin.
  static native void adminFree(long admin);

  static native void createDatabase(long admin, String name, boolean ignoreIfExists);

  static native void dropDatabase(
      long admin, String name, boolean ignoreIfNotExists, boolean cascade);

  static native String[] listDatabases(long admin);

  static native boolean databaseExists(long admin, String name);

  static native void createTable(
      long admin,
      String name,
      long schemaAddress,
      String[] primaryKey,
      String[] partitionKeys,
      String[] bucketKeys,
      int bucketCount,
      String[] properties,
      String[] customProperties,
      String comment,
      boolean ignoreIfExists);

  static native void dropTable(long admin, String name, boolean ignoreIfNotExists);

  static native void addColumns(long admin, String name, long columnsSchemaAddress);

  static native String[] listTables(long admin, String database);

  static native void createAcls(long admin, String[] resourcePrincipalOperationHost);

  static native String[] listAcls(long admin, String[] filter);

  static native String[] dropAcls(long admin, String[] filter);

  static native boolean registerProducerOffsets(
      long admin, String producerId, long[] offsets, boolean hasTtl, long ttlMs);

  static native long[] getProducerOffsets(long admin, String producerId);

  static native void deleteProducerOffsets(long admin, String producerId);

  static native long[] lakeSnapshot(
      long admin, String name, boolean byId, long snapshotId, boolean readable);

  static native String[] describeClusterConfigs(long admin);

  static native void alterClusterConfigs(long admin, String[] setPairs, String[] deleteKeys);

  static native void alterDatabase(
      long admin,
      String name,
      String[] setPairs,
      String[] resetKeys,
      String comment,
      boolean ignoreIfNotExists);

  static native String[] databaseInfo(long admin, String name);

  static native boolean tableExists(long admin, String name);

  static native TableInfo tableInfo(long admin, String name, long schemaAddress);

  static native PartitionInfo[] listPartitions(long admin, String name);

  static native void createPartition(
      long admin, String name, String[] spec, boolean ignoreIfExists);

  static native void dropPartition(
      long admin, String name, String[] spec, boolean ignoreIfNotExists);

  static native long[] listOffsets(
      long admin, String name, String partition, int[] buckets, int specKind, long timestamp);

  // Table.
  static native void tableFree(long table);

  static native TableInfo tableInfoOf(long table, long schemaAddress);

  static native void append(long table, long arrayAddress, long schemaAddress);

  static native void upsert(long table, long arrayAddress, long schemaAddress, String[] columns);

  static native void delete(long table, long arrayAddress, long schemaAddress, String[] columns);

  static native void flush(long table);

  static native void closeWriters(long table);

  static native void abortWriters(long table);

  static native String[] scan(long table, ReadOptions options, long streamAddress);

  static native long count(long table, ReadOptions options);

  static native long resolveTimeBound(TimeBound bound, String zone);

  // Names.
  static native TableName tableName(String name);

  static native String[] lookupColumns(long table, boolean prefix);

  static native BucketLeader[] bucketLeaders(long table);

  static native void lookup(
      long table,
      int mode,
      long keysArray,
      long keysSchema,
      long outArray,
      long outSchema);

  static native void lookupAsync(
      long table,
      long keysArray,
      long keysSchema,
      long outArray,
      long outSchema,
      Object completion);

  static native long subscribe(long table, SubscribeOptions options);

  // Subscription.
  static native void subscriptionFree(long subscription);

  static native void subscriptionSchema(long subscription, long schemaAddress);

  static native Object[] poll(long subscription, long timeoutMillis, long streamAddress);

  static native long[] positions(long subscription);

  // LocalServer.
  static native long serverStart(
      String dataDir, String host, int port, String[] users, String[] options);

  static native void serverTakeKvSnapshots(long server);

  static native void serverCommitLake(long server);

  static native String serverBootstrap(long server);

  static native void serverShutdown(long server);

  static native void serverFree(long server);
}
