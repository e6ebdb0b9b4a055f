package io.riverlet.flink;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * The options of the {@code fluss} catalog and table factory, named exactly as Fluss's own
 * connector names them, so that a job written for Fluss's connector runs unchanged. Options
 * starting with {@code client.} go to the client, {@code table.} to the table's properties.
 */
public final class FlussOptions {

    private FlussOptions() {}

    /** The factory identifier and catalog type. */
    public static final String IDENTIFIER = "fluss";

    public static final ConfigOption<String> BOOTSTRAP_SERVERS =
            ConfigOptions.key("bootstrap.servers")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("host:port list of the Fluss coordinator/tablet servers.");

    public static final ConfigOption<String> DEFAULT_DATABASE =
            ConfigOptions.key("default-database")
                    .stringType()
                    .defaultValue("fluss")
                    .withDescription("The catalog's default database.");

    public static final ConfigOption<Integer> BUCKET_NUMBER =
            ConfigOptions.key("bucket.num")
                    .intType()
                    .noDefaultValue()
                    .withDescription("Number of buckets of a new table.");

    public static final ConfigOption<String> BUCKET_KEY =
            ConfigOptions.key("bucket.key")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Comma-separated bucket key columns of a new table.");

    public static final ConfigOption<String> SCAN_STARTUP_MODE =
            ConfigOptions.key("scan.startup.mode")
                    .stringType()
                    .defaultValue("full")
                    .withDescription("full, earliest, latest or timestamp.");

    public static final ConfigOption<String> SCAN_STARTUP_TIMESTAMP =
            ConfigOptions.key("scan.startup.timestamp")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Epoch milliseconds or 'yyyy-MM-dd HH:mm:ss' in the session time zone,"
                                    + " for scan.startup.mode = timestamp.");

    public static final ConfigOption<Duration> SCAN_PARTITION_DISCOVERY_INTERVAL =
            ConfigOptions.key("scan.partition.discovery.interval")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(1))
                    .withDescription("How often a streaming read looks for new partitions.");

    public static final ConfigOption<Boolean> LOOKUP_ASYNC =
            ConfigOptions.key("lookup.async")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription("Asynchronous lookups in lookup joins.");

    public static final ConfigOption<Boolean> SINK_IGNORE_DELETE =
            ConfigOptions.key("sink.ignore-delete")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Drop DELETE and UPDATE_BEFORE rows instead of writing them.");

    public static final ConfigOption<Boolean> SINK_BUCKET_SHUFFLE =
            ConfigOptions.key("sink.bucket-shuffle")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription("Accepted for compatibility with Fluss's connector.");

    public static final ConfigOption<String> TABLE_DELETE_BEHAVIOR =
            ConfigOptions.key("table.delete.behavior")
                    .stringType()
                    .defaultValue("allow")
                    .withDescription("allow, ignore or disable: what DELETE does on this table.");

    public static final ConfigOption<String> TABLE_MERGE_ENGINE =
            ConfigOptions.key("table.merge-engine")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("first_row, versioned or aggregation (default: last row).");

    /** Prefix of options handed to the client. */
    public static final String CLIENT_PREFIX = "client.";

    /** Prefix of options stored as the table's properties. */
    public static final String TABLE_PREFIX = "table.";

    /** Internal option marking the {@code $changelog} virtual table. */
    public static final String CHANGELOG_MARKER = "_riverlet.changelog";

    /** The client options in {@code options}: bootstrap servers aside, every {@code client.*}. */
    public static Map<String, String> clientOptions(Map<String, String> options) {
        Map<String, String> out = new HashMap<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (e.getKey().startsWith(CLIENT_PREFIX)) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }
}
