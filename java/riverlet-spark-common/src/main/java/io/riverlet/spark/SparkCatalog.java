package io.riverlet.spark;

import io.riverlet.Admin;
import io.riverlet.DatabaseAlreadyExistsException;
import io.riverlet.DatabaseNotFoundException;
import io.riverlet.NotFoundException;
import io.riverlet.TableAlreadyExistsException;
import io.riverlet.TableDescriptor;
import io.riverlet.TableName;
import io.riverlet.TableNotFoundException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.IdentityTransform;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark catalog of a Fluss cluster: {@code spark.sql.catalog.<name>=io.riverlet.spark.SparkCatalog}
 * with {@code spark.sql.catalog.<name>.bootstrap.servers=host:port} (and Fluss's other client
 * options, e.g. {@code client.security.protocol=SASL}, {@code client.security.sasl.mechanism},
 * {@code client.security.sasl.username} / {@code .password}).
 *
 * <p>Namespaces are Fluss databases. {@code CREATE TABLE} takes {@code PARTITIONED BY (cols)} and
 * the table properties of Fluss's connector: {@code primary.key} ({@code 'a,b'}), {@code
 * bucket.num}, {@code bucket.key}, {@code comment}; every {@code table.*} property is passed to
 * Fluss as a table option and any other property is stored as a custom property.
 */
public class SparkCatalog implements TableCatalog, SupportsNamespaces {
  /** Table property: the primary-key columns, comma-separated. */
  public static final String PRIMARY_KEY = "primary.key";
  /** Table property: the number of buckets. */
  public static final String BUCKET_NUM = "bucket.num";
  /** Table property: the bucket-key columns, comma-separated. */
  public static final String BUCKET_KEY = "bucket.key";

  /** Properties Spark adds on its own; they are not stored in Fluss. */
  private static final Set<String> SPARK_RESERVED =
      Set.of(
          TableCatalog.PROP_PROVIDER,
          TableCatalog.PROP_OWNER,
          TableCatalog.PROP_LOCATION,
          TableCatalog.PROP_EXTERNAL,
          TableCatalog.PROP_IS_MANAGED_LOCATION,
          "option.path");

  private String name = "fluss";
  private ConnectionSpec spec;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    this.spec = new ConnectionSpec(options.asCaseSensitiveMap());
  }

  @Override
  public String name() {
    return name;
  }

  ConnectionSpec spec() {
    return spec;
  }

  private Admin admin() {
    return spec.connection().admin();
  }

  // ---- namespaces (Fluss databases) ----

  @Override
  public String[][] listNamespaces() {
    try (Admin a = admin()) {
      return a.listDatabases().stream().map(d -> new String[] {d}).toArray(String[][]::new);
    }
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (namespace.length == 0) {
      return listNamespaces();
    }
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return new String[0][];
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    if (namespace.length != 1) {
      return false;
    }
    try (Admin a = admin()) {
      return a.databaseExists(namespace[0]);
    }
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return Map.of();
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    String db = database(namespace);
    try (Admin a = admin()) {
      a.createDatabase(db, false);
    } catch (DatabaseAlreadyExistsException e) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException(
        "ALTER NAMESPACE is not supported: Fluss databases have no properties to change");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException {
    String db = database(namespace);
    try (Admin a = admin()) {
      a.dropDatabase(db, false, cascade);
      return true;
    } catch (DatabaseNotFoundException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  // ---- tables ----

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    String db = database(namespace);
    try (Admin a = admin()) {
      return a.listTables(db).stream()
          .map(t -> Identifier.of(namespace, t))
          .toArray(Identifier[]::new);
    } catch (DatabaseNotFoundException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    String path = path(ident);
    if (isLakeView(ident)) {
      return loadLakeView(ident, path);
    }
    try (Admin a = admin()) {
      return new RiverletTable(spec, a.getTableInfo(path));
    } catch (TableNotFoundException | DatabaseNotFoundException e) {
      throw new NoSuchTableException(ident);
    }
  }

  /**
   * Whether {@code ident} names a lake view ({@code t$lake}, {@code t$lake$snapshots}), by the
   * core's split of table names ({@link TableName}). Spark has no {@code $changelog} table: such
   * a name is a table name like any other here.
   */
  static boolean isLakeView(Identifier ident) {
    return TableName.of(ident.name()).kind().isLakeView();
  }

  /**
   * A lake view: the core opens it, and its info's schema is the view's (Fluss's system-table
   * columns, TIMESTAMP_LTZ as on any table). A table that is not lake-enabled has no lake views.
   */
  private Table loadLakeView(Identifier ident, String path) throws NoSuchTableException {
    try (io.riverlet.Table view = spec.connection().table(path)) {
      return new RiverletTable(spec, view.info(), path, true);
    } catch (NotFoundException e) {
      NoSuchTableException missing = new NoSuchTableException(ident);
      missing.initCause(e);
      throw missing;
    }
  }

  // Spark 3.5 requires this signature (deprecated there and in Spark 4, where the newer ones
  // forward to it); one implementation serves both.
  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException,
          NoSuchNamespaceException {
    String path = path(ident);
    TableDescriptor descriptor = descriptor(schema, partitions, properties);
    try (Admin a = admin()) {
      a.createTable(path, descriptor, false);
    } catch (TableAlreadyExistsException e) {
      throw new org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException(ident);
    } catch (DatabaseNotFoundException e) {
      throw new NoSuchNamespaceException(ident.namespace());
    }
    try {
      return loadTable(ident);
    } catch (NoSuchTableException e) {
      throw new IllegalStateException("Table " + path + " vanished right after CREATE TABLE", e);
    }
  }

  static TableDescriptor descriptor(
      StructType schema, Transform[] partitions, Map<String, String> properties) {
    Map<String, String> props = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : properties.entrySet()) {
      props.put(e.getKey().toLowerCase(Locale.ROOT).startsWith("table.")
          ? e.getKey() : e.getKey().toLowerCase(Locale.ROOT), e.getValue());
    }
    TableDescriptor.Builder b = TableDescriptor.builder(TypeMapping.toArrow(schema));
    List<String> partitionKeys = new ArrayList<>();
    for (Transform t : partitions) {
      if (!(t instanceof IdentityTransform) || t.references().length != 1) {
        throw new UnsupportedOperationException(
            "Unsupported partition transform " + t.describe()
                + ": Fluss tables are partitioned by plain columns, e.g. PARTITIONED BY (dt)");
      }
      NamedReference ref = t.references()[0];
      partitionKeys.add(String.join(".", ref.fieldNames()));
    }
    b.partitionKeys(partitionKeys);
    String pk = props.remove(PRIMARY_KEY);
    if (pk != null) {
      b.primaryKey(columnList(PRIMARY_KEY, pk));
    }
    String bucketNum = props.remove(BUCKET_NUM);
    if (bucketNum != null) {
      try {
        b.bucketCount(Integer.parseInt(bucketNum.trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "Invalid value '" + bucketNum + "' for table property '" + BUCKET_NUM
                + "': expected a positive integer");
      }
    }
    String bucketKey = props.remove(BUCKET_KEY);
    if (bucketKey != null) {
      b.bucketKeys(columnList(BUCKET_KEY, bucketKey));
    }
    String comment = props.remove(TableCatalog.PROP_COMMENT);
    if (comment != null) {
      b.comment(comment);
    }
    for (Map.Entry<String, String> e : props.entrySet()) {
      if (SPARK_RESERVED.contains(e.getKey()) || e.getKey().startsWith("option.")) {
        continue;
      }
      if (e.getKey().startsWith("table.")) {
        b.property(e.getKey(), e.getValue());
      } else {
        b.customProperty(e.getKey(), e.getValue());
      }
    }
    return b.build();
  }

  private static List<String> columnList(String property, String value) {
    List<String> out = new ArrayList<>();
    for (String c : value.split(",")) {
      String t = c.trim();
      if (t.isEmpty()) {
        throw new IllegalArgumentException(
            "Invalid value '" + value + "' for table property '" + property
                + "': expected comma-separated column names, e.g. 'a,b'");
      }
      out.add(t);
    }
    return out;
  }

  /**
   * {@code ALTER TABLE ... ADD COLUMNS}: Fluss's schema evolution adds nullable columns at the
   * end; every other change (and a position) is refused, naming it.
   */
  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    if (isLakeView(ident)) {
      throw new UnsupportedOperationException("the lake view " + ident.name() + " is read-only");
    }
    String path = path(ident);
    List<StructField> added = new ArrayList<>();
    for (TableChange c : changes) {
      if (!(c instanceof TableChange.AddColumn)) {
        throw new UnsupportedOperationException(
            "ALTER TABLE " + path + ": only ADD COLUMNS is supported, not "
                + c.getClass().getSimpleName());
      }
      TableChange.AddColumn a = (TableChange.AddColumn) c;
      if (a.fieldNames().length != 1) {
        throw new UnsupportedOperationException(
            "ALTER TABLE " + path + ": cannot add the nested field "
                + String.join(".", a.fieldNames()));
      }
      if (a.position() != null) {
        throw new UnsupportedOperationException(
            "ALTER TABLE " + path + ": column " + a.fieldNames()[0]
                + " can only be added at the end (Fluss adds columns last), not "
                + a.position());
      }
      added.add(
          new StructField(a.fieldNames()[0], a.dataType(), a.isNullable(), Metadata.empty()));
    }
    if (!added.isEmpty()) {
      try (Admin a = admin()) {
        a.addColumns(path, TypeMapping.toArrow(new StructType(added.toArray(new StructField[0]))));
      } catch (TableNotFoundException | DatabaseNotFoundException e) {
        throw new NoSuchTableException(ident);
      }
    }
    return loadTable(ident);
  }

  @Override
  public boolean dropTable(Identifier ident) {
    TableName name = TableName.of(ident.name());
    if (name.kind().isLakeView()) {
      throw new UnsupportedOperationException(
          "'" + ident.name() + "' is a lake view of table '" + name.table()
              + "' and cannot be dropped");
    }
    String path;
    try {
      path = path(ident);
    } catch (IllegalArgumentException e) {
      return false;
    }
    try (Admin a = admin()) {
      a.dropTable(path, false);
      return true;
    } catch (TableNotFoundException | DatabaseNotFoundException e) {
      return false;
    }
  }

  @Override
  public void renameTable(Identifier oldIdent, Identifier newIdent) {
    throw new UnsupportedOperationException("Fluss does not support renaming tables");
  }

  private static String database(String[] namespace) {
    if (namespace.length != 1) {
      throw new IllegalArgumentException(
          "A Fluss namespace is one database name, got " + Arrays.toString(namespace));
    }
    return namespace[0];
  }

  static String path(Identifier ident) {
    return database(ident.namespace()) + "." + ident.name();
  }
}
