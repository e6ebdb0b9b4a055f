package io.riverlet.flink;

import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.riverlet.TableName;
import io.riverlet.ViewKind;
import io.riverlet.flink.sink.FlussTableSink;
import io.riverlet.flink.source.FlussTableSource;
import io.riverlet.flink.source.ReadSpec;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.config.TableConfigOptions;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.lookup.LookupOptions;
import org.apache.flink.table.connector.source.lookup.cache.DefaultLookupCache;
import org.apache.flink.table.connector.source.lookup.cache.LookupCache;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.types.logical.RowType;

/** The table factory {@code fluss}: sources and sinks of Fluss tables, with Fluss's options. */
public class FlussTableFactory implements DynamicTableSourceFactory, DynamicTableSinkFactory {

    @Override
    public String factoryIdentifier() {
        return FlussOptions.IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Collections.emptySet();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        Set<ConfigOption<?>> s = new HashSet<>();
        s.add(FlussOptions.BOOTSTRAP_SERVERS);
        s.add(FlussOptions.BUCKET_NUMBER);
        s.add(FlussOptions.BUCKET_KEY);
        s.add(FlussOptions.SCAN_STARTUP_MODE);
        s.add(FlussOptions.SCAN_STARTUP_TIMESTAMP);
        s.add(FlussOptions.SCAN_PARTITION_DISCOVERY_INTERVAL);
        s.add(FlussOptions.LOOKUP_ASYNC);
        s.add(FlussOptions.SINK_IGNORE_DELETE);
        s.add(FlussOptions.SINK_BUCKET_SHUFFLE);
        s.add(LookupOptions.CACHE_TYPE);
        s.add(LookupOptions.PARTIAL_CACHE_EXPIRE_AFTER_ACCESS);
        s.add(LookupOptions.PARTIAL_CACHE_EXPIRE_AFTER_WRITE);
        s.add(LookupOptions.PARTIAL_CACHE_MAX_ROWS);
        s.add(LookupOptions.PARTIAL_CACHE_CACHE_MISSING_KEY);
        return s;
    }

    private static final class Resolved {
        final Map<String, String> options;
        final Configuration config;
        final ConnectionSpec connection;
        final boolean changelog;
        final boolean lakeView;

        Resolved(Context ctx) {
            this.options = ctx.getCatalogTable().getOptions();
            this.config = Configuration.fromMap(options);
            ObjectIdentifier id = ctx.getObjectIdentifier();
            // The core splits the name: t$changelog reads table t in the changelog form;
            // t$lake and t$lake$snapshots keep their names, the core opens them as views.
            TableName split = TableName.of(id.getObjectName());
            String name = split.name();
            boolean cl = "true".equals(options.get(FlussOptions.CHANGELOG_MARKER));
            if (split.kind() == ViewKind.CHANGELOG) {
                name = split.table();
                cl = true;
                split = TableName.of(name);
            }
            this.changelog = cl;
            this.lakeView = split.kind().isLakeView();
            String bootstrap = options.get(FlussOptions.BOOTSTRAP_SERVERS.key());
            if (bootstrap == null || bootstrap.trim().isEmpty()) {
                throw new ValidationException("table " + id.asSummaryString()
                        + " needs the option 'bootstrap.servers'");
            }
            this.connection = new ConnectionSpec(bootstrap, FlussOptions.clientOptions(options),
                    id.getDatabaseName(), name);
        }
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context ctx) {
        Resolved r = new Resolved(ctx);
        RowType rowType = (RowType) ctx.getPhysicalRowDataType().getLogicalType();
        int[] pk = r.changelog ? new int[0] : ctx.getPrimaryKeyIndexes();
        List<String> partitionKeys = ctx.getCatalogTable().getPartitionKeys();
        int[] bucketKey = bucketKey(r.config, rowType, pk, partitionKeys);
        // A lake view is a snapshot: bounded in streaming mode too.
        boolean bounded = r.lakeView || ctx.getConfiguration().get(ExecutionOptions.RUNTIME_MODE)
                == RuntimeExecutionMode.BATCH;
        String mode = r.config.get(FlussOptions.SCAN_STARTUP_MODE).trim().toLowerCase(Locale.ROOT);
        ReadSpec.Startup startup;
        switch (mode) {
            case "full":
                startup = r.changelog ? ReadSpec.Startup.EARLIEST : ReadSpec.Startup.FULL;
                break;
            case "earliest":
                startup = ReadSpec.Startup.EARLIEST;
                break;
            case "latest":
                startup = ReadSpec.Startup.LATEST;
                break;
            case "timestamp":
                startup = ReadSpec.Startup.TIMESTAMP;
                break;
            default:
                throw new ValidationException("Unsupported 'scan.startup.mode' = '" + mode
                        + "': use full, earliest, latest or timestamp");
        }
        long timestamp = -1;
        if (startup == ReadSpec.Startup.TIMESTAMP) {
            String text = r.config.get(FlussOptions.SCAN_STARTUP_TIMESTAMP);
            if (text == null) {
                throw new ValidationException("'scan.startup.mode' = 'timestamp' needs"
                        + " 'scan.startup.timestamp' (epoch milliseconds or 'yyyy-MM-dd HH:mm:ss')");
            }
            timestamp = parseTimestamp(text, sessionZone(ctx.getConfiguration()));
        }
        LookupCache cache = null;
        if (r.config.get(LookupOptions.CACHE_TYPE) == LookupOptions.LookupCacheType.PARTIAL) {
            cache = DefaultLookupCache.fromConfig(r.config);
        }
        return new FlussTableSource(
                r.connection,
                rowType,
                pk,
                bucketKey,
                !partitionKeys.isEmpty(),
                r.changelog,
                bounded,
                startup,
                timestamp,
                r.config.get(FlussOptions.SCAN_PARTITION_DISCOVERY_INTERVAL).toMillis(),
                r.config.get(FlussOptions.LOOKUP_ASYNC),
                cache);
    }

    private static int[] bucketKey(Configuration config, RowType rowType, int[] pk, List<String> partitionKeys) {
        List<String> names = rowType.getFieldNames();
        List<Integer> out = new ArrayList<>();
        String explicit = config.get(FlussOptions.BUCKET_KEY);
        if (explicit != null) {
            for (String k : explicit.split(",")) {
                int i = names.indexOf(k.trim());
                if (i < 0) {
                    throw new ValidationException("'bucket.key' names the unknown column '" + k.trim() + "'");
                }
                out.add(i);
            }
        } else {
            for (int p : pk) {
                if (!partitionKeys.contains(names.get(p))) {
                    out.add(p);
                }
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static ZoneId sessionZone(org.apache.flink.configuration.ReadableConfig config) {
        String zone = config.get(TableConfigOptions.LOCAL_TIME_ZONE);
        return TableConfigOptions.LOCAL_TIME_ZONE.defaultValue().equals(zone)
                ? ZoneId.systemDefault()
                : ZoneId.of(zone);
    }

    /**
     * 'scan.startup.timestamp': epoch milliseconds, or 'yyyy-MM-dd HH:mm:ss' in the session zone.
     * TODO(java-api): the core parses timestamp texts for bounded reads (ReadOptions.start(text)
     * + zone); SubscribeOptions takes only epoch milliseconds, so the text form is parsed here
     * until the API takes a text and a zone.
     */
    static long parseTimestamp(String text, ZoneId zone) {
        String t = text.trim();
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            // not epoch millis
        }
        try {
            LocalDateTime ldt = LocalDateTime.parse(t, DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
            return ldt.atZone(zone).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new ValidationException("'scan.startup.timestamp' = '" + text + "' is neither epoch"
                    + " milliseconds nor 'yyyy-MM-dd HH:mm:ss'", e);
        }
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context ctx) {
        Resolved r = new Resolved(ctx);
        if (r.changelog) {
            throw new ValidationException("the $changelog table of " + r.connection.tablePath()
                    + " is read-only");
        }
        if (r.lakeView) {
            throw new ValidationException("the lake view " + r.connection.tablePath()
                    + " is read-only");
        }
        RowType rowType = (RowType) ctx.getPhysicalRowDataType().getLogicalType();
        List<String> pk = new ArrayList<>();
        for (int i : ctx.getPrimaryKeyIndexes()) {
            pk.add(rowType.getFieldNames().get(i));
        }
        return new FlussTableSink(
                r.connection,
                ctx.getCatalogTable().getResolvedSchema(),
                rowType,
                pk,
                r.options.get(FlussOptions.TABLE_MERGE_ENGINE.key()),
                r.options.get(FlussOptions.TABLE_DELETE_BEHAVIOR.key()),
                r.config.get(FlussOptions.SINK_IGNORE_DELETE));
    }
}
