package io.riverlet.flink.source;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * What the enumerator checkpoints: the ids of the splits it has handed out (their offsets live
 * in the readers' state) and the splits still waiting for a reader.
 */
public final class EnumeratorState {

    private final Set<String> assigned;
    private final List<FlussSplit> pending;

    public EnumeratorState(Set<String> assigned, List<FlussSplit> pending) {
        this.assigned = Collections.unmodifiableSet(new LinkedHashSet<>(assigned));
        this.pending = Collections.unmodifiableList(new ArrayList<>(pending));
    }

    public Set<String> assigned() {
        return assigned;
    }

    public List<FlussSplit> pending() {
        return pending;
    }

    /** Serializer of {@link EnumeratorState}. */
    public static final class Serializer implements SimpleVersionedSerializer<EnumeratorState> {
        public static final Serializer INSTANCE = new Serializer();

        @Override
        public int getVersion() {
            return 2;
        }

        @Override
        public byte[] serialize(EnumeratorState state) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeInt(state.assigned.size());
                for (String id : state.assigned) {
                    out.writeUTF(id);
                }
                out.writeInt(state.pending.size());
                for (FlussSplit s : state.pending) {
                    FlussSplitSerializer.write(s, out);
                }
            }
            return bytes.toByteArray();
        }

        @Override
        public EnumeratorState deserialize(int version, byte[] serialized) throws IOException {
            if (version != 2) {
                throw new IOException("unknown enumerator state version " + version + " (expected 2)");
            }
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
                int n = in.readInt();
                Set<String> assigned = new LinkedHashSet<>();
                for (int i = 0; i < n; i++) {
                    assigned.add(in.readUTF());
                }
                int m = in.readInt();
                List<FlussSplit> pending = new ArrayList<>();
                for (int i = 0; i < m; i++) {
                    pending.add(FlussSplitSerializer.read(in));
                }
                return new EnumeratorState(assigned, pending);
            }
        }
    }
}
