package io.riverlet.flink.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.riverlet.flink.ConnectionSpec;
import io.riverlet.flink.lookup.LookupSpec;
import io.riverlet.flink.lookup.Lookups;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.abilities.SupportsAggregatePushDown;
import org.apache.flink.table.connector.source.abilities.SupportsFilterPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsLimitPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.connector.source.lookup.cache.LookupCache;
import org.apache.flink.table.expressions.AggregateExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The scan and lookup source of a Fluss table. Streaming: a changelog (+I/-U/+U/-D) for
 * primary-key tables, inserts for log tables and {@code $changelog}. Batch: the table's rows,
 * with projection, filter (as the core's filter text), limit and COUNT(*) pushed down.
 *
 * <p>A limit pushed down in streaming mode ({@code SELECT * FROM t LIMIT 4}) makes the source
 * bounded, as in Fluss's connector (whose {@code applyLimit} turns the scan into a limited batch
 * scan): the read is then the batch read of the table's current rows (a primary-key table's
 * latest view), limited, whatever {@code scan.startup.mode} says, and the job ends after its
 * rows. {@code $changelog} takes no limit in streaming mode (nor does Fluss's changelog source).
 */
public final class FlussTableSource
        implements ScanTableSource,
                LookupTableSource,
                SupportsProjectionPushDown,
                SupportsFilterPushDown,
                SupportsLimitPushDown,
                SupportsAggregatePushDown {

    private final ConnectionSpec connection;
    private final RowType tableRowType;
    private final int[] primaryKey;
    private final int[] bucketKey;
    private final boolean partitioned;
    private final boolean changelog;
    private final boolean bounded;
    private final ReadSpec.Startup startup;
    private final long startupTimestamp;
    private final long discoveryIntervalMillis;
    private final boolean lookupAsync;
    private final LookupCache cache;

    private int[] projection;
    private String filter;
    private final List<String> filterParts = new ArrayList<>();
    private long limit = -1;
    /** A limit pushed down in streaming mode made this read bounded. */
    private boolean boundedByLimit;
    private boolean countOnly;

    public FlussTableSource(
            ConnectionSpec connection,
            RowType tableRowType,
            int[] primaryKey,
            int[] bucketKey,
            boolean partitioned,
            boolean changelog,
            boolean bounded,
            ReadSpec.Startup startup,
            long startupTimestamp,
            long discoveryIntervalMillis,
            boolean lookupAsync,
            LookupCache cache) {
        this.connection = connection;
        this.tableRowType = tableRowType;
        this.primaryKey = primaryKey;
        this.bucketKey = bucketKey;
        this.partitioned = partitioned;
        this.changelog = changelog;
        this.bounded = bounded;
        this.startup = startup;
        this.startupTimestamp = startupTimestamp;
        this.discoveryIntervalMillis = discoveryIntervalMillis;
        this.lookupAsync = lookupAsync;
        this.cache = cache;
        this.projection = identity(tableRowType.getFieldCount());
    }

    private static int[] identity(int n) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        return p;
    }

    private boolean primaryKeyTable() {
        return primaryKey.length > 0 && !changelog;
    }

    /** Whether the scan is a bounded read (batch mode, a lake view, or a pushed-down limit). */
    private boolean boundedScan() {
        return bounded || boundedByLimit;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        if (boundedScan() || !primaryKeyTable()) {
            return ChangelogMode.insertOnly();
        }
        return ChangelogMode.all();
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
        ReadSpec spec = new ReadSpec(
                connection,
                countOnly ? RowType.of(new BigIntType(false)) : tableRowType,
                countOnly ? new int[] {0} : projection,
                primaryKeyTable(),
                partitioned,
                changelog,
                boundedScan(),
                startup,
                startupTimestamp,
                filter,
                null,
                limit,
                countOnly,
                discoveryIntervalMillis);
        return SourceProvider.of(new FlussSource(spec));
    }

    @Override
    public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
        int[][] keys = context.getKeys();
        int[] keyFields = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            if (keys[i].length != 1) {
                throw new UnsupportedOperationException("lookups on nested fields are not supported");
            }
            keyFields[i] = keys[i][0];
        }
        LookupSpec spec = LookupSpec.of(connection, tableRowType, primaryKey, bucketKey, keyFields,
                projection);
        return Lookups.provider(spec, lookupAsync, cache);
    }

    @Override
    public DynamicTableSource copy() {
        FlussTableSource s = new FlussTableSource(connection, tableRowType, primaryKey, bucketKey,
                partitioned, changelog, bounded, startup, startupTimestamp, discoveryIntervalMillis,
                lookupAsync, cache);
        s.projection = projection.clone();
        s.filter = filter;
        s.filterParts.addAll(filterParts);
        s.limit = limit;
        s.boundedByLimit = boundedByLimit;
        s.countOnly = countOnly;
        return s;
    }

    @Override
    public String asSummaryString() {
        StringBuilder b = new StringBuilder("Fluss(").append(connection.tablePath());
        if (filter != null) {
            b.append(", filter=[").append(filter).append("]");
        }
        if (limit >= 0) {
            b.append(", limit=").append(limit);
        }
        if (countOnly) {
            b.append(", count(*)");
        }
        return b.append(")").toString();
    }

    // ---- abilities ----------------------------------------------------------------------

    @Override
    public boolean supportsNestedProjection() {
        return false;
    }

    @Override
    public void applyProjection(int[][] projectedFields, DataType producedDataType) {
        int[] p = new int[projectedFields.length];
        for (int i = 0; i < projectedFields.length; i++) {
            p[i] = projectedFields[i][0];
        }
        projection = p;
    }

    @Override
    public Result applyFilters(List<ResolvedExpression> filters) {
        List<ResolvedExpression> accepted = new ArrayList<>();
        if (bounded) {
            for (ResolvedExpression e : filters) {
                Optional<String> text = FilterText.of(e);
                if (text.isPresent()) {
                    accepted.add(e);
                    filterParts.add("(" + text.get() + ")");
                }
            }
        }
        filter = filterParts.isEmpty() ? null : String.join(" AND ", filterParts);
        // Flink evaluates every filter again: the server's filtering may return extra rows.
        return Result.of(accepted, filters);
    }

    /**
     * Takes a limit: in batch mode the bounded read stops each bucket after {@code n} rows; in
     * streaming mode the read becomes that bounded read (see the class comment), except for
     * {@code $changelog}, which stays unbounded. Flink keeps its own limit above the source.
     */
    @Override
    public void applyLimit(long n) {
        if (bounded) {
            limit = n;
        } else if (!changelog) {
            limit = n;
            boundedByLimit = true;
        }
    }

    @Override
    public boolean applyAggregates(
            List<int[]> groupingSets, List<AggregateExpression> aggregateExpressions,
            DataType producedDataType) {
        if (!bounded || changelog || filter != null || limit >= 0) {
            return false;
        }
        if (groupingSets.size() != 1 || groupingSets.get(0).length != 0) {
            return false;
        }
        if (aggregateExpressions.size() != 1) {
            return false;
        }
        AggregateExpression agg = aggregateExpressions.get(0);
        String fn = agg.getFunctionDefinition().getClass().getSimpleName();
        boolean count = agg.getFunctionDefinition() == BuiltInFunctionDefinitions.COUNT
                || fn.equals("Count1AggFunction") || fn.equals("CountAggFunction");
        boolean countStar = count && agg.getArgs().isEmpty() && !agg.isDistinct()
                && !agg.getFilterExpression().isPresent();
        if (!countStar) {
            return false;
        }
        countOnly = true;
        return true;
    }
}
