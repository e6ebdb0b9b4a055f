package io.riverlet.flink.source;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.riverlet.Admin;
import io.riverlet.Connection;
import io.riverlet.PartitionInfo;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;

/**
 * Plans one split per bucket (per partition) and hands each to a fixed reader (by a hash of
 * partition and bucket). Streaming reads of partitioned tables look for new partitions every
 * {@code scan.partition.discovery.interval} and read them from their earliest offset. Bounded
 * reads signal the end of splits once all are assigned.
 */
public final class FlussEnumerator implements SplitEnumerator<FlussSplit, EnumeratorState> {

    private final SplitEnumeratorContext<FlussSplit> context;
    private final ReadSpec spec;
    private final Set<String> assigned;
    private final Map<Integer, List<FlussSplit>> pending = new HashMap<>();
    private final boolean restored;
    private Connection connection;
    private int bucketCount;

    public FlussEnumerator(
            SplitEnumeratorContext<FlussSplit> context, ReadSpec spec, EnumeratorState restoredState) {
        this.context = context;
        this.spec = spec;
        this.restored = restoredState != null;
        this.assigned = new LinkedHashSet<>(restoredState == null ? Collections.emptySet() : restoredState.assigned());
        if (restoredState != null) {
            for (FlussSplit s : restoredState.pending()) {
                pending.computeIfAbsent(ownerOf(s), k -> new ArrayList<>()).add(s);
            }
        }
    }

    private int ownerOf(FlussSplit s) {
        int h = (s.partitionId() == null ? 0 : Long.hashCode(s.partitionId()) * 31) + s.bucket();
        return Math.floorMod(h, context.currentParallelism());
    }

    @Override
    public void start() {
        connection = spec.connection.connect();
        if (spec.lakeView()) {
            // One split reads the whole lake view.
            addSplits(Collections.singletonList(new FlussSplit(null, null, 0, 0)));
            assignPending();
            return;
        }
        try (Admin admin = connection.admin()) {
            bucketCount = admin.getTableInfo(spec.connection.tablePath()).bucketCount();
        }
        if (spec.countOnly) {
            // One split computes the count.
            addSplits(Collections.singletonList(new FlussSplit(null, null, 0, 0)));
        } else if (!spec.partitioned) {
            List<FlussSplit> splits = new ArrayList<>();
            for (int b = 0; b < bucketCount; b++) {
                splits.add(new FlussSplit(null, null, b, initialOffset()));
            }
            addSplits(splits);
        } else if (spec.bounded) {
            addSplits(splitsOf(listPartitions(), initialOffset()));
        } else {
            // The partitions present at start read from the startup mode; later ones from their
            // earliest offset. After a restore, every partition not yet seen is a later one.
            addSplits(splitsOf(listPartitions(), restored ? FlussSplit.FROM_EARLIEST : initialOffset()));
            long interval = Math.max(1, spec.discoveryIntervalMillis);
            context.callAsync(
                    this::listPartitions,
                    (parts, error) -> {
                        if (error != null) {
                            throw new IllegalStateException("partition discovery of "
                                    + spec.connection.tablePath() + " failed", error);
                        }
                        addSplits(splitsOf(parts, FlussSplit.FROM_EARLIEST));
                    },
                    interval,
                    interval);
        }
        assignPending();
    }

    private long initialOffset() {
        if (spec.bounded) {
            return 0;
        }
        // A full start begins with a snapshot: a primary-key table's KV snapshot, or a
        // lake-enabled log table's lake snapshot (the core reads the log from earliest when
        // the table has none); either is emitted as one fetch with the position after it.
        return spec.startup == ReadSpec.Startup.FULL && !spec.changelog
                ? FlussSplit.FROM_SNAPSHOT
                : FlussSplit.FROM_STARTUP_MODE;
    }

    private List<PartitionInfo> listPartitions() {
        try (Admin admin = connection.admin()) {
            List<PartitionInfo> out = new ArrayList<>();
            for (PartitionInfo p : admin.listPartitions(spec.connection.tablePath())) {
                if (spec.partitionNames == null || spec.partitionNames.contains(p.name())) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    private List<FlussSplit> splitsOf(List<PartitionInfo> partitions, long offset) {
        List<FlussSplit> splits = new ArrayList<>();
        for (PartitionInfo p : partitions) {
            for (int b = 0; b < bucketCount; b++) {
                splits.add(new FlussSplit(p.id(), p.name(), b, offset));
            }
        }
        return splits;
    }

    private void addSplits(List<FlussSplit> splits) {
        for (FlussSplit s : splits) {
            if (assigned.contains(s.splitId()) || isPending(s.splitId())) {
                continue;
            }
            pending.computeIfAbsent(ownerOf(s), k -> new ArrayList<>()).add(s);
        }
        assignPending();
    }

    private boolean isPending(String id) {
        for (List<FlussSplit> l : pending.values()) {
            for (FlussSplit s : l) {
                if (s.splitId().equals(id)) {
                    return true;
                }
            }
        }
        return false;
    }

    private void assignPending() {
        Map<Integer, List<FlussSplit>> assignment = new HashMap<>();
        for (Integer reader : context.registeredReaders().keySet()) {
            List<FlussSplit> splits = pending.remove(reader);
            if (splits != null && !splits.isEmpty()) {
                assignment.put(reader, splits);
                for (FlussSplit s : splits) {
                    assigned.add(s.splitId());
                }
            }
        }
        if (!assignment.isEmpty()) {
            context.assignSplits(new SplitsAssignment<>(assignment));
        }
        if (spec.bounded && pending.isEmpty()) {
            for (Integer reader : context.registeredReaders().keySet()) {
                context.signalNoMoreSplits(reader);
            }
        }
    }

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {}

    @Override
    public void addSplitsBack(List<FlussSplit> splits, int subtaskId) {
        // A failed reader's splits come back as of the last checkpoint: assign them again.
        for (FlussSplit s : splits) {
            assigned.remove(s.splitId());
        }
        addSplits(splits);
    }

    @Override
    public void addReader(int subtaskId) {
        assignPending();
    }

    @Override
    public EnumeratorState snapshotState(long checkpointId) {
        List<FlussSplit> all = new ArrayList<>();
        for (List<FlussSplit> l : pending.values()) {
            all.addAll(l);
        }
        return new EnumeratorState(assigned, all);
    }

    @Override
    public void close() {
        if (connection != null) {
            connection.close();
            connection = null;
        }
    }
}
