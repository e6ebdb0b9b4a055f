package io.riverlet.flink.source;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;

/** The FLIP-27 source of a Fluss table: one split per bucket (and partition). */
public final class FlussSource implements Source<RowData, FlussSplit, EnumeratorState> {

    private static final long serialVersionUID = 1L;

    private final ReadSpec spec;

    public FlussSource(ReadSpec spec) {
        this.spec = spec;
    }

    @Override
    public Boundedness getBoundedness() {
        return spec.bounded ? Boundedness.BOUNDED : Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SplitEnumerator<FlussSplit, EnumeratorState> createEnumerator(
            SplitEnumeratorContext<FlussSplit> context) {
        return new FlussEnumerator(context, spec, null);
    }

    @Override
    public SplitEnumerator<FlussSplit, EnumeratorState> restoreEnumerator(
            SplitEnumeratorContext<FlussSplit> context, EnumeratorState checkpoint) {
        return new FlussEnumerator(context, spec, checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<FlussSplit> getSplitSerializer() {
        return FlussSplitSerializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<EnumeratorState> getEnumeratorCheckpointSerializer() {
        return EnumeratorState.Serializer.INSTANCE;
    }

    @Override
    public SourceReader<RowData, FlussSplit> createReader(SourceReaderContext readerContext) {
        return new FlussSourceReader(spec, readerContext);
    }
}
