package io.riverlet.flink.source;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;

import io.riverlet.BucketOffset;
import io.riverlet.ChangeBatch;
import io.riverlet.ChangeType;
import io.riverlet.Connection;
import io.riverlet.ReadOptions;
import io.riverlet.StartupMode;
import io.riverlet.SubscribeOptions;
import io.riverlet.Subscription;
import io.riverlet.SubscriptionPosition;
import io.riverlet.Table;
import io.riverlet.flink.Closing;
import io.riverlet.flink.row.ArrowRowReader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the splits assigned to one subtask. A fetcher thread polls each split's subscription
 * (streaming) or bounded scan and hands over fetches of rows; {@link #pollNext}
 * emits one fetch at a time and only then moves the split's offset to the position after it, so
 * a checkpoint (taken between two pollNext calls) always holds the offset right after the last
 * row emitted: a restored job neither loses nor repeats rows, and the converted rows waiting in
 * the queue are bounded by its capacity in fetches of at most {@code FETCH_ROWS} rows. A bucket
 * started in {@code full} mode emits its whole snapshot (a primary-key table's latest view, a
 * lake-enabled log table's lake rows) as one fetch, since those rows have no log offsets.
 */
public final class FlussSourceReader implements SourceReader<RowData, FlussSplit> {

    private static final Logger LOG = LoggerFactory.getLogger(FlussSourceReader.class);

    /**
     * How long {@link #close()} waits for the fetcher thread to leave its current call (a poll
     * returns within {@link #POLL_TIMEOUT}; a bounded scan's next batch or a subscribe takes one
     * round trip or a few).
     */
    private static final Duration FETCHER_STOP_WAIT = Duration.ofSeconds(30);

    private static final Duration POLL_TIMEOUT = Duration.ofMillis(100);

    /**
     * The most rows one fetch converts (a bounded scan's batches and a subscription's log
     * batches are handed over in pieces of this size): the converted rows waiting in the queue
     * are then at most its capacity times this, whatever the size of the server's batches (a
     * batch written by a large writer batch can hold hundreds of thousands of rows).
     */
    public static final int FETCH_ROWS = 8192;

    /** How many fetches wait in the queue at most. */
    private static final int QUEUED_FETCHES = 16;
    private static final Duration MIN_POLL_TIMEOUT = Duration.ofMillis(5);

    /** Rows of one split, and the offset its read resumes at after them. */
    private static final class Fetch {
        final String splitId;
        final List<RowData> rows;
        final long nextOffset;
        final boolean finished;
        final Throwable error;

        Fetch(String splitId, List<RowData> rows, long nextOffset, boolean finished, Throwable error) {
            this.splitId = splitId;
            this.rows = rows;
            this.nextOffset = nextOffset;
            this.finished = finished;
            this.error = error;
        }
    }

    /** A split being read: its checkpointed form plus the live subscription or scan. */
    private static final class ActiveSplit {
        volatile FlussSplit split;
        Subscription subscription;
        ArrowReader scan;
        boolean done;
        /** Fetcher side: the snapshot of a full start has been fetched. */
        boolean snapshotFetched;
        long emittedRows;

        ActiveSplit(FlussSplit split) {
            this.split = split;
        }
    }

    private final ReadSpec spec;
    private final SourceReaderContext context;
    private final Map<String, ActiveSplit> splits = new LinkedHashMap<>();
    private final BlockingQueue<Fetch> queue = new ArrayBlockingQueue<>(QUEUED_FETCHES);
    private final Object lock = new Object();
    private CompletableFuture<Void> available = new CompletableFuture<>();
    private boolean noMoreSplits;
    private int finishedSplits;
    private volatile boolean closed;
    private Thread fetcher;
    /** Opened by the fetcher thread, closed by {@link #close()}. */
    private volatile Connection connection;
    private volatile Table table;

    public FlussSourceReader(ReadSpec spec, SourceReaderContext context) {
        this.spec = spec;
        this.context = context;
    }

    @Override
    public void start() {
        fetcher = new Thread(this::fetchLoop, "riverlet-fluss-fetcher-" + context.getIndexOfSubtask());
        fetcher.setDaemon(true);
        fetcher.start();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
        Fetch f = queue.poll();
        if (f == null) {
            synchronized (lock) {
                if (noMoreSplits && finishedSplits == splitCount() && queue.isEmpty()) {
                    return InputStatus.END_OF_INPUT;
                }
            }
            return InputStatus.NOTHING_AVAILABLE;
        }
        if (f.error != null) {
            throw new RuntimeException("reading " + spec.connection.tablePath() + " failed: "
                    + f.error.getMessage(), f.error);
        }
        ActiveSplit s;
        synchronized (lock) {
            s = splits.get(f.splitId);
        }
        for (RowData row : f.rows) {
            if (spec.limit > 0 && s != null && s.emittedRows >= spec.limit) {
                break;
            }
            output.collect(row);
            if (s != null) {
                s.emittedRows++;
            }
        }
        if (s != null) {
            if (f.nextOffset != Long.MIN_VALUE) {
                s.split = s.split.withOffset(f.nextOffset);
            }
            if (f.finished) {
                synchronized (lock) {
                    finishedSplits++;
                }
            }
        }
        return queue.isEmpty() ? InputStatus.NOTHING_AVAILABLE : InputStatus.MORE_AVAILABLE;
    }

    private int splitCount() {
        return splits.size();
    }

    @Override
    public List<FlussSplit> snapshotState(long checkpointId) {
        List<FlussSplit> out = new ArrayList<>();
        synchronized (lock) {
            for (ActiveSplit s : splits.values()) {
                if (!s.done || !spec.bounded) {
                    out.add(s.split);
                }
            }
        }
        return out;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        synchronized (lock) {
            if (!queue.isEmpty() || (noMoreSplits && finishedSplits == splitCount())) {
                return CompletableFuture.completedFuture(null);
            }
            if (available.isDone()) {
                available = new CompletableFuture<>();
            }
            return available;
        }
    }

    private void signal() {
        synchronized (lock) {
            available.complete(null);
        }
    }

    @Override
    public void addSplits(List<FlussSplit> newSplits) {
        synchronized (lock) {
            for (FlussSplit s : newSplits) {
                splits.put(s.splitId(), new ActiveSplit(s));
            }
            lock.notifyAll();
        }
    }

    @Override
    public void notifyNoMoreSplits() {
        synchronized (lock) {
            noMoreSplits = true;
        }
        signal();
    }

    /**
     * Stops the fetcher thread, then closes the splits' subscriptions and scans, the table and
     * the connection. The fetcher's batches live in the connection's Arrow allocator, so the
     * connection is closed only once the fetcher ended (or after {@link #FETCHER_STOP_WAIT}); the
     * wait is not cut short by the interrupts of a cancelled task. Never throws ({@link Closing}).
     */
    @Override
    public void close() {
        closed = true;
        if (fetcher != null) {
            fetcher.interrupt();
            if (!Closing.join(fetcher, FETCHER_STOP_WAIT)) {
                LOG.warn("the fetcher of {} did not stop within {} s; closing its connection anyway",
                        spec.connection.tablePath(), FETCHER_STOP_WAIT.toSeconds());
            }
        }
        synchronized (lock) {
            for (ActiveSplit s : splits.values()) {
                closeQuietly(s);
            }
        }
        Closing.quietly(LOG, "the table " + spec.connection.tablePath(), table);
        Closing.quietly(LOG, "the connection of the source of " + spec.connection, connection);
    }

    private static void closeQuietly(ActiveSplit s) {
        Closing.quietly(LOG, "the subscription of split " + s.split, s.subscription);
        s.subscription = null;
        Closing.quietly(LOG, "the scan of split " + s.split, s.scan);
        s.scan = null;
    }

    // ---- the fetcher thread -------------------------------------------------------------

    private void fetchLoop() {
        try {
            connection = spec.connection.connect();
            table = connection.table(spec.connection.tablePath());
            while (!closed) {
                List<ActiveSplit> work;
                synchronized (lock) {
                    work = new ArrayList<>();
                    for (ActiveSplit s : splits.values()) {
                        if (!s.done) {
                            work.add(s);
                        }
                    }
                    if (work.isEmpty()) {
                        lock.wait(200);
                        continue;
                    }
                }
                for (ActiveSplit s : work) {
                    if (closed) {
                        return;
                    }
                    fetch(s);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            if (!closed) {
                try {
                    queue.put(new Fetch("", Collections.emptyList(), Long.MIN_VALUE, false, t));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
                signal();
            }
        }
    }

    private void enqueue(Fetch f) throws InterruptedException {
        queue.put(f);
        signal();
    }

    private void fetch(ActiveSplit s) throws Exception {
        if (spec.bounded) {
            fetchBounded(s);
        } else {
            fetchStreaming(s);
        }
    }

    private void fetchBounded(ActiveSplit s) throws Exception {
        FlussSplit split = s.split;
        if (spec.countOnly) {
            long count = table.count(readOptions(null).build());
            GenericRowData row = GenericRowData.of(count);
            s.done = true;
            enqueue(new Fetch(split.splitId(), Collections.singletonList(row), 0, true, null));
            return;
        }
        if (s.scan == null) {
            // A plain table reads per bucket (for a lake-enabled log table, the core's union
            // read of that bucket); a lake view in one split.
            ReadOptions.Builder b = readOptions(split);
            if (!spec.lakeView()) {
                b.buckets(split.bucket());
            }
            if (split.partitionName() != null) {
                b.partitions(split.partitionName());
            }
            s.scan = table.scan(b.build());
        }
        if (s.scan.loadNextBatch()) {
            // In pieces of at most FETCH_ROWS rows, each converted before the next batch is
            // loaded into the same root (a bounded read has no offsets to checkpoint).
            VectorSchemaRoot root = s.scan.getVectorSchemaRoot();
            int n = root.getRowCount();
            for (int from = 0; from < n; from += FETCH_ROWS) {
                List<RowData> rows = convert(root, null, from, Math.min(n, from + FETCH_ROWS));
                enqueue(new Fetch(split.splitId(), rows, Long.MIN_VALUE, false, null));
            }
        } else {
            s.scan.close();
            s.scan = null;
            s.done = true;
            enqueue(new Fetch(split.splitId(), Collections.emptyList(), Long.MIN_VALUE, true, null));
        }
    }

    private ReadOptions.Builder readOptions(FlussSplit split) {
        ReadOptions.Builder b = ReadOptions.builder();
        List<String> cols = spec.fetchedColumns();
        if (!cols.isEmpty() && !spec.countOnly) {
            b.columns(cols);
        }
        if (spec.filter != null) {
            b.filter(spec.filter);
        }
        if (spec.limit > 0) {
            b.limit(spec.limit);
        }
        if (spec.changelog) {
            b.changelog(true);
        }
        if (split == null && spec.partitionNames != null) {
            b.partitions(spec.partitionNames);
        }
        return b;
    }

    private void fetchStreaming(ActiveSplit s) throws Exception {
        FlussSplit split = s.split;
        boolean snapshotPending = split.offset() == FlussSplit.FROM_SNAPSHOT && !s.snapshotFetched;
        if (s.subscription == null) {
            s.subscription = table.subscribe(subscribeOptions(split));
            if (!snapshotPending) {
                // The resolved start: nothing before it is ever emitted from here.
                enqueue(positionFetch(s, split, Collections.emptyList()));
            }
        }
        List<ChangeBatch> batches = s.subscription.poll(pollTimeout());
        try {
            if (snapshotPending || startsWithSnapshotRows(batches)) {
                // Rows without log offsets (a full start's snapshot) go out in one fetch with the
                // position after them: a checkpoint cannot fall inside them.
                List<RowData> rows = new ArrayList<>();
                for (ChangeBatch b : batches) {
                    rows.addAll(convert(b.root(), b));
                }
                if (!rows.isEmpty() || snapshotPending) {
                    // From here on the split is a plain log read.
                    s.snapshotFetched = true;
                    enqueue(positionFetch(s, split, rows));
                }
                return;
            }
            // Log rows go out at most FETCH_ROWS per fetch, each moving the split to the offset
            // after its last row (the last to the subscription's position), so the rows held in
            // the queue are bounded by its capacity, not by what one poll returned.
            for (int i = 0; i < batches.size(); i++) {
                ChangeBatch b = batches.get(i);
                boolean lastBatch = i == batches.size() - 1;
                int n = b.rowCount();
                if (n == 0 && !lastBatch) {
                    continue;
                }
                int from = 0;
                do {
                    int to = Math.min(n, from + FETCH_ROWS);
                    List<RowData> rows = convert(b.root(), b, from, to);
                    if (lastBatch && to == n) {
                        enqueue(positionFetch(s, split, rows));
                    } else {
                        enqueue(new Fetch(split.splitId(), rows, b.offset(to - 1) + 1, false, null));
                    }
                    from = to;
                } while (from < n);
            }
        } finally {
            for (ChangeBatch b : batches) {
                b.close();
            }
        }
    }

    /** Whether a poll's first batch holds rows without log offsets (a full start's snapshot). */
    private static boolean startsWithSnapshotRows(List<ChangeBatch> batches) {
        return !batches.isEmpty() && batches.get(0).rowCount() > 0 && batches.get(0).offset(0) < 0;
    }

    /**
     * How long one split's poll waits: the fetcher polls its splits in turn, so an idle reader
     * of many buckets still gets around all of them about every {@link #POLL_TIMEOUT}.
     */
    private Duration pollTimeout() {
        int n;
        synchronized (lock) {
            n = Math.max(1, splits.size());
        }
        return POLL_TIMEOUT.dividedBy(n).compareTo(MIN_POLL_TIMEOUT) < 0
                ? MIN_POLL_TIMEOUT : POLL_TIMEOUT.dividedBy(n);
    }

    /** A fetch of {@code rows} that moves the split to its bucket's next offset after them. */
    private static Fetch positionFetch(ActiveSplit s, FlussSplit split, List<RowData> rows) {
        long next = s.subscription.position().offset(split.partitionId(), split.bucket());
        if (next < 0) {
            throw new IllegalStateException("the subscription to " + split + " has no position for its bucket");
        }
        return new Fetch(split.splitId(), rows, next, false, null);
    }

    /** The subscription of one split: its bucket only, from its offset or start marker. */
    private SubscribeOptions subscribeOptions(FlussSplit split) {
        SubscribeOptions.Builder b;
        long offset = split.offset();
        if (offset >= 0) {
            b = SubscribeOptions.fromPosition(new SubscriptionPosition(Collections.singletonList(
                    new BucketOffset(split.partitionId(), split.bucket(), offset))));
        } else if (offset == FlussSplit.FROM_SNAPSHOT) {
            b = SubscribeOptions.builder(StartupMode.FULL);
        } else if (offset == FlussSplit.FROM_EARLIEST) {
            b = SubscribeOptions.builder(StartupMode.EARLIEST);
        } else {
            switch (spec.startup) {
                case LATEST:
                    b = SubscribeOptions.builder(StartupMode.LATEST);
                    break;
                case TIMESTAMP:
                    b = SubscribeOptions.fromTimestamp(spec.startupTimestamp);
                    break;
                default:
                    b = SubscribeOptions.builder(StartupMode.EARLIEST);
                    break;
            }
        }
        b.buckets(split.bucket());
        if (split.partitionName() != null) {
            b.partitions(split.partitionName());
        }
        List<String> cols = spec.fetchedColumns();
        if (!cols.isEmpty()) {
            b.columns(cols.toArray(new String[0]));
        }
        return b.build();
    }

    /**
     * The rows of a batch as produced rows. {@code changes}: the subscription batch the root
     * belongs to (its first three columns are the change columns), or null for a bounded scan
     * (change columns only for $changelog).
     */
    private List<RowData> convert(VectorSchemaRoot root, ChangeBatch changes) {
        return convert(root, changes, 0, root.getRowCount());
    }

    /** Rows {@code [from, to)} of {@code root} (of {@code changes}, when a subscription's). */
    private List<RowData> convert(VectorSchemaRoot root, ChangeBatch changes, int from, int to) {
        List<RowData> out = new ArrayList<>(to - from);
        int[] projection = spec.projection;
        if (spec.changelog) {
            // Full changelog rows (change columns + every data column), then the projection.
            ArrowRowReader reader = ArrowRowReader.of(root, spec.tableRowType, 0);
            for (int r = from; r < to; r++) {
                GenericRowData full = reader.read(r);
                out.add(project(full, projection));
            }
            return out;
        }
        int first = changes == null ? 0 : 3;
        ArrowRowReader reader = ArrowRowReader.of(root, spec.producedType(), first);
        for (int r = from; r < to; r++) {
            GenericRowData row = reader.read(r);
            if (changes != null) {
                row.setRowKind(kindOf(changes.changeType(r)));
            }
            out.add(row);
        }
        return out;
    }

    private static GenericRowData project(GenericRowData full, int[] projection) {
        GenericRowData out = new GenericRowData(projection.length);
        for (int i = 0; i < projection.length; i++) {
            out.setField(i, full.getField(projection[i]));
        }
        return out;
    }

    static RowKind kindOf(ChangeType t) {
        switch (t) {
            case UPDATE_BEFORE:
                return RowKind.UPDATE_BEFORE;
            case UPDATE_AFTER:
                return RowKind.UPDATE_AFTER;
            case DELETE:
                return RowKind.DELETE;
            default:
                return RowKind.INSERT;
        }
    }
}
