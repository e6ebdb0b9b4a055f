package io.riverlet.flink.catalog;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.riverlet.Admin;
import io.riverlet.Connection;
import io.riverlet.NotFoundException;
import io.riverlet.PartitionInfo;
import io.riverlet.RiverletException;
import io.riverlet.TableDescriptor;
import io.riverlet.TableInfo;
import io.riverlet.TableName;
import io.riverlet.ViewKind;
import io.riverlet.flink.FlussOptions;
import io.riverlet.flink.FlussTableFactory;
import io.riverlet.flink.row.FlinkArrowTypes;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.AbstractCatalog;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogDatabase;
import org.apache.flink.table.catalog.CatalogDatabaseImpl;
import org.apache.flink.table.catalog.CatalogFunction;
import org.apache.flink.table.catalog.CatalogPartition;
import org.apache.flink.table.catalog.CatalogPartitionSpec;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotEmptyException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotExistException;
import org.apache.flink.table.catalog.exceptions.FunctionNotExistException;
import org.apache.flink.table.catalog.exceptions.PartitionNotExistException;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.TableNotExistException;
import org.apache.flink.table.catalog.exceptions.TableNotPartitionedException;
import org.apache.flink.table.catalog.stats.CatalogColumnStatistics;
import org.apache.flink.table.catalog.stats.CatalogTableStatistics;
import org.apache.flink.table.expressions.Expression;
import org.apache.flink.table.factories.Factory;

/**
 * The {@code fluss} catalog: Fluss databases and tables as Flink sees them, through the Java
 * API's Admin. Tables come back with the options the table factory needs to read and write
 * them (bootstrap servers, client options). {@code <table>$changelog} is a virtual read-only
 * table: {@code _change_type}, {@code _log_offset}, {@code _commit_timestamp}, then the columns.
 * A lake-enabled table also has the bounded, read-only views {@code <table>$lake} and
 * {@code <table>$lake$snapshots}, with the columns the core gives them. The core splits these
 * names into table and view ({@link TableName}).
 */
public class FlussCatalog extends AbstractCatalog {

    private final String bootstrapServers;
    private final Map<String, String> clientOptions;
    private Connection connection;
    private Admin admin;

    public FlussCatalog(
            String name,
            String defaultDatabase,
            String bootstrapServers,
            Map<String, String> clientOptions) {
        super(name, defaultDatabase);
        this.bootstrapServers = bootstrapServers;
        this.clientOptions = new HashMap<>(clientOptions);
    }

    @Override
    public Optional<Factory> getFactory() {
        return Optional.of(new FlussTableFactory());
    }

    @Override
    public void open() throws CatalogException {
        try {
            connection = io.riverlet.Riverlet.connect(bootstrapServers, clientOptions);
            admin = connection.admin();
        } catch (RiverletException e) {
            throw new CatalogException(
                    "cannot connect catalog '" + getName() + "' to " + bootstrapServers + ": "
                            + e.getMessage(),
                    e);
        }
    }

    @Override
    public void close() throws CatalogException {
        if (connection != null) {
            connection.close();
            connection = null;
            admin = null;
        }
    }

    private Admin admin() {
        if (admin == null) {
            throw new CatalogException("catalog '" + getName() + "' is not open");
        }
        return admin;
    }

    private static String path(ObjectPath p) {
        return p.getDatabaseName() + "." + p.getObjectName();
    }

    // ---- databases ----------------------------------------------------------------------

    @Override
    public List<String> listDatabases() throws CatalogException {
        return admin().listDatabases();
    }

    @Override
    public CatalogDatabase getDatabase(String name) throws DatabaseNotExistException {
        if (!databaseExists(name)) {
            throw new DatabaseNotExistException(getName(), name);
        }
        return new CatalogDatabaseImpl(Collections.emptyMap(), null);
    }

    @Override
    public boolean databaseExists(String name) throws CatalogException {
        return admin().databaseExists(name);
    }

    @Override
    public void createDatabase(String name, CatalogDatabase database, boolean ignoreIfExists)
            throws DatabaseAlreadyExistException {
        if (!ignoreIfExists && databaseExists(name)) {
            throw new DatabaseAlreadyExistException(getName(), name);
        }
        admin().createDatabase(name, ignoreIfExists);
    }

    @Override
    public void dropDatabase(String name, boolean ignoreIfNotExists, boolean cascade)
            throws DatabaseNotExistException, DatabaseNotEmptyException {
        if (!databaseExists(name)) {
            if (ignoreIfNotExists) {
                return;
            }
            throw new DatabaseNotExistException(getName(), name);
        }
        if (!cascade && !admin().listTables(name).isEmpty()) {
            throw new DatabaseNotEmptyException(getName(), name);
        }
        admin().dropDatabase(name, ignoreIfNotExists, cascade);
    }

    @Override
    public void alterDatabase(String name, CatalogDatabase newDatabase, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("ALTER DATABASE is not supported by Fluss");
    }

    // ---- tables -------------------------------------------------------------------------

    @Override
    public List<String> listTables(String database) throws DatabaseNotExistException {
        if (!databaseExists(database)) {
            throw new DatabaseNotExistException(getName(), database);
        }
        return admin().listTables(database);
    }

    @Override
    public List<String> listViews(String database) {
        return Collections.emptyList();
    }

    @Override
    public CatalogBaseTable getTable(ObjectPath tablePath) throws TableNotExistException {
        TableName name = TableName.of(tablePath.getObjectName());
        if (name.kind().isLakeView()) {
            return toLakeViewTable(tablePath);
        }
        boolean changelog = name.kind() == ViewKind.CHANGELOG;
        ObjectPath basePath = new ObjectPath(tablePath.getDatabaseName(), name.table());
        TableInfo info;
        try {
            info = admin().getTableInfo(path(basePath));
        } catch (NotFoundException e) {
            throw new TableNotExistException(getName(), tablePath, e);
        }
        return changelog ? toChangelogTable(info) : toCatalogTable(info);
    }

    @Override
    public boolean tableExists(ObjectPath tablePath) throws CatalogException {
        return admin().tableExists(
                tablePath.getDatabaseName() + "." + TableName.of(tablePath.getObjectName()).table());
    }

    @Override
    public void dropTable(ObjectPath tablePath, boolean ignoreIfNotExists)
            throws TableNotExistException {
        TableName name = TableName.of(tablePath.getObjectName());
        if (name.isView()) {
            throw new ValidationException("'" + name.name() + "' is a view of table '" + name.table()
                    + "' and cannot be dropped");
        }
        if (!tableExists(tablePath)) {
            if (ignoreIfNotExists) {
                return;
            }
            throw new TableNotExistException(getName(), tablePath);
        }
        admin().dropTable(path(tablePath), ignoreIfNotExists);
    }

    @Override
    public void renameTable(ObjectPath tablePath, String newTableName, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss tables cannot be renamed");
    }

    @Override
    public void createTable(ObjectPath tablePath, CatalogBaseTable table, boolean ignoreIfExists)
            throws TableAlreadyExistException, DatabaseNotExistException {
        if (!databaseExists(tablePath.getDatabaseName())) {
            throw new DatabaseNotExistException(getName(), tablePath.getDatabaseName());
        }
        if (tableExists(tablePath)) {
            if (ignoreIfExists) {
                return;
            }
            throw new TableAlreadyExistException(getName(), tablePath);
        }
        if (!(table instanceof ResolvedCatalogTable)) {
            throw new ValidationException("only tables can be created in a Fluss catalog, not "
                    + table.getTableKind());
        }
        admin().createTable(path(tablePath), toDescriptor((ResolvedCatalogTable) table), ignoreIfExists);
    }

    /** The Fluss descriptor of a Flink table: columns, key, partitions, buckets, properties. */
    static TableDescriptor toDescriptor(ResolvedCatalogTable table) {
        ResolvedSchema schema = table.getResolvedSchema();
        List<Field> fields = new ArrayList<>();
        for (Column c : schema.getColumns()) {
            if (!c.isPhysical()) {
                throw new ValidationException(
                        "column '" + c.getName() + "': Fluss tables have only physical columns");
            }
            fields.add(FlinkArrowTypes.toArrow(c.getName(), c.getDataType().getLogicalType()));
        }
        if (!schema.getWatermarkSpecs().isEmpty()) {
            throw new ValidationException("Fluss tables cannot store a WATERMARK definition");
        }
        TableDescriptor.Builder b = TableDescriptor.builder(new Schema(fields));
        Optional<UniqueConstraint> pk = schema.getPrimaryKey();
        pk.ifPresent(k -> b.primaryKey(k.getColumns()));
        if (table.isPartitioned()) {
            b.partitionKeys(table.getPartitionKeys());
        }
        for (Map.Entry<String, String> e : table.getOptions().entrySet()) {
            String k = e.getKey();
            String v = e.getValue();
            if (k.equals(FlussOptions.BUCKET_NUMBER.key())) {
                try {
                    b.bucketCount(Integer.parseInt(v.trim()));
                } catch (NumberFormatException ex) {
                    throw new ValidationException("'bucket.num' must be a positive integer, got '" + v + "'");
                }
            } else if (k.equals(FlussOptions.BUCKET_KEY.key())) {
                List<String> keys = new ArrayList<>();
                for (String s : v.split(",")) {
                    keys.add(s.trim());
                }
                b.bucketKeys(keys);
            } else if (k.startsWith(FlussOptions.TABLE_PREFIX)) {
                b.property(k, v);
            } else if (!k.equals("connector") && !k.equals(FlussOptions.BOOTSTRAP_SERVERS.key())
                    && !k.startsWith(FlussOptions.CLIENT_PREFIX)) {
                b.customProperty(k, v);
            }
        }
        if (table.getComment() != null && !table.getComment().isEmpty()) {
            b.comment(table.getComment());
        }
        return b.build();
    }

    private Map<String, String> connectionOptions() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put(FlussOptions.BOOTSTRAP_SERVERS.key(), bootstrapServers);
        options.putAll(clientOptions);
        return options;
    }

    private CatalogTable toCatalogTable(TableInfo info) {
        org.apache.flink.table.api.Schema.Builder sb = columns(info);
        if (info.hasPrimaryKey()) {
            sb.primaryKeyNamed("PK_" + String.join("_", info.primaryKey()), info.primaryKey());
        }
        Map<String, String> options = new LinkedHashMap<>(info.properties());
        options.putAll(info.customProperties());
        options.put(FlussOptions.BUCKET_NUMBER.key(), String.valueOf(info.bucketCount()));
        if (!info.bucketKeys().isEmpty() && !info.bucketKeys().equals(info.primaryKey())) {
            options.put(FlussOptions.BUCKET_KEY.key(), String.join(",", info.bucketKeys()));
        }
        options.putAll(connectionOptions());
        return CatalogTable.newBuilder()
                .schema(sb.build())
                .comment(info.comment())
                .partitionKeys(info.partitionKeys())
                .options(options)
                .build();
    }

    private CatalogTable toChangelogTable(TableInfo info) {
        org.apache.flink.table.api.Schema.Builder sb = org.apache.flink.table.api.Schema.newBuilder();
        sb.column("_change_type", DataTypes.STRING().notNull());
        sb.column("_log_offset", DataTypes.BIGINT().notNull());
        sb.column("_commit_timestamp", DataTypes.TIMESTAMP_LTZ(3).notNull());
        for (Field f : info.schema().getFields()) {
            sb.column(f.getName(), FlinkArrowTypes.toFlink(f));
        }
        Map<String, String> options = new LinkedHashMap<>(info.properties());
        options.putAll(info.customProperties());
        options.putAll(connectionOptions());
        options.put(FlussOptions.CHANGELOG_MARKER, "true");
        return CatalogTable.newBuilder()
                .schema(sb.build())
                .comment(info.comment())
                .partitionKeys(Collections.emptyList())
                .options(options)
                .build();
    }

    /**
     * A lake view as a read-only table: the core opens it, and its info's schema is the view's
     * (Fluss's system-table columns, TIMESTAMP_LTZ as on any table), whose columns map as a
     * table's do. A table that is not lake-enabled has no lake views.
     */
    private CatalogTable toLakeViewTable(ObjectPath tablePath) throws TableNotExistException {
        TableInfo info;
        try (io.riverlet.Table view = connection.table(path(tablePath))) {
            info = view.info();
        } catch (NotFoundException e) {
            throw new TableNotExistException(getName(), tablePath, e);
        }
        return CatalogTable.newBuilder()
                .schema(columns(info).build())
                .comment(info.comment())
                .partitionKeys(Collections.emptyList())
                .options(connectionOptions())
                .build();
    }

    /** The columns of {@code info}'s schema as Flink columns. */
    private static org.apache.flink.table.api.Schema.Builder columns(TableInfo info) {
        org.apache.flink.table.api.Schema.Builder sb = org.apache.flink.table.api.Schema.newBuilder();
        for (Field f : info.schema().getFields()) {
            sb.column(f.getName(), FlinkArrowTypes.toFlink(f));
        }
        return sb;
    }

    @Override
    public void alterTable(ObjectPath tablePath, CatalogBaseTable newTable, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("ALTER TABLE is not supported by this connector yet");
    }

    // ---- partitions ---------------------------------------------------------------------

    @Override
    public List<CatalogPartitionSpec> listPartitions(ObjectPath tablePath)
            throws TableNotExistException, TableNotPartitionedException {
        TableInfo info;
        try {
            info = admin().getTableInfo(path(tablePath));
        } catch (NotFoundException e) {
            throw new TableNotExistException(getName(), tablePath, e);
        }
        if (!info.isPartitioned()) {
            throw new TableNotPartitionedException(getName(), tablePath);
        }
        List<CatalogPartitionSpec> out = new ArrayList<>();
        for (PartitionInfo p : admin().listPartitions(path(tablePath))) {
            out.add(new CatalogPartitionSpec(new LinkedHashMap<>(p.spec())));
        }
        return out;
    }

    @Override
    public List<CatalogPartitionSpec> listPartitions(ObjectPath tablePath, CatalogPartitionSpec partitionSpec)
            throws TableNotExistException, TableNotPartitionedException {
        List<CatalogPartitionSpec> out = new ArrayList<>();
        for (CatalogPartitionSpec s : listPartitions(tablePath)) {
            if (s.getPartitionSpec().entrySet().containsAll(partitionSpec.getPartitionSpec().entrySet())) {
                out.add(s);
            }
        }
        return out;
    }

    @Override
    public List<CatalogPartitionSpec> listPartitionsByFilter(ObjectPath tablePath, List<Expression> filters) {
        throw new UnsupportedOperationException("listPartitionsByFilter");
    }

    @Override
    public CatalogPartition getPartition(ObjectPath tablePath, CatalogPartitionSpec partitionSpec)
            throws PartitionNotExistException {
        throw new PartitionNotExistException(getName(), tablePath, partitionSpec);
    }

    @Override
    public boolean partitionExists(ObjectPath tablePath, CatalogPartitionSpec partitionSpec) {
        try {
            return listPartitions(tablePath).contains(partitionSpec);
        } catch (TableNotExistException | TableNotPartitionedException e) {
            return false;
        }
    }

    @Override
    public void createPartition(
            ObjectPath tablePath, CatalogPartitionSpec partitionSpec, CatalogPartition partition,
            boolean ignoreIfExists) {
        admin().createPartition(path(tablePath), partitionSpec.getPartitionSpec(), ignoreIfExists);
    }

    @Override
    public void dropPartition(ObjectPath tablePath, CatalogPartitionSpec partitionSpec, boolean ignoreIfNotExists) {
        admin().dropPartition(path(tablePath), partitionSpec.getPartitionSpec(), ignoreIfNotExists);
    }

    @Override
    public void alterPartition(
            ObjectPath tablePath, CatalogPartitionSpec partitionSpec, CatalogPartition newPartition,
            boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("ALTER PARTITION is not supported by Fluss");
    }

    // ---- functions and statistics: none -------------------------------------------------

    @Override
    public List<String> listFunctions(String dbName) {
        return Collections.emptyList();
    }

    @Override
    public CatalogFunction getFunction(ObjectPath functionPath) throws FunctionNotExistException {
        throw new FunctionNotExistException(getName(), functionPath);
    }

    @Override
    public boolean functionExists(ObjectPath functionPath) {
        return false;
    }

    @Override
    public void createFunction(ObjectPath functionPath, CatalogFunction function, boolean ignoreIfExists) {
        throw new UnsupportedOperationException("Fluss catalogs hold no functions");
    }

    @Override
    public void alterFunction(ObjectPath functionPath, CatalogFunction newFunction, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss catalogs hold no functions");
    }

    @Override
    public void dropFunction(ObjectPath functionPath, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss catalogs hold no functions");
    }

    @Override
    public CatalogTableStatistics getTableStatistics(ObjectPath tablePath) {
        return CatalogTableStatistics.UNKNOWN;
    }

    @Override
    public CatalogColumnStatistics getTableColumnStatistics(ObjectPath tablePath) {
        return CatalogColumnStatistics.UNKNOWN;
    }

    @Override
    public CatalogTableStatistics getPartitionStatistics(ObjectPath tablePath, CatalogPartitionSpec partitionSpec) {
        return CatalogTableStatistics.UNKNOWN;
    }

    @Override
    public CatalogColumnStatistics getPartitionColumnStatistics(
            ObjectPath tablePath, CatalogPartitionSpec partitionSpec) {
        return CatalogColumnStatistics.UNKNOWN;
    }

    @Override
    public void alterTableStatistics(ObjectPath tablePath, CatalogTableStatistics tableStatistics, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss keeps no table statistics");
    }

    @Override
    public void alterTableColumnStatistics(
            ObjectPath tablePath, CatalogColumnStatistics columnStatistics, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss keeps no column statistics");
    }

    @Override
    public void alterPartitionStatistics(
            ObjectPath tablePath, CatalogPartitionSpec partitionSpec,
            CatalogTableStatistics partitionStatistics, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss keeps no partition statistics");
    }

    @Override
    public void alterPartitionColumnStatistics(
            ObjectPath tablePath, CatalogPartitionSpec partitionSpec,
            CatalogColumnStatistics columnStatistics, boolean ignoreIfNotExists) {
        throw new UnsupportedOperationException("Fluss keeps no partition statistics");
    }

}
