package io.riverlet.flink.source;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

import org.apache.flink.core.io.SimpleVersionedSerializer;

/** Versioned binary form of a {@link FlussSplit} (checkpoints and RPC to readers). */
public final class FlussSplitSerializer implements SimpleVersionedSerializer<FlussSplit> {

    public static final FlussSplitSerializer INSTANCE = new FlussSplitSerializer();

    /** Version 2: one bucket per split (version 1 splits could span all buckets). */
    private static final int VERSION = 2;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(FlussSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            write(split, out);
        }
        return bytes.toByteArray();
    }

    static void write(FlussSplit split, DataOutputStream out) throws IOException {
        out.writeBoolean(split.partitionId() != null);
        if (split.partitionId() != null) {
            out.writeLong(split.partitionId());
            out.writeUTF(split.partitionName());
        }
        out.writeInt(split.bucket());
        out.writeLong(split.offset());
    }

    static FlussSplit read(DataInputStream in) throws IOException {
        Long pid = null;
        String pname = null;
        if (in.readBoolean()) {
            pid = in.readLong();
            pname = in.readUTF();
        }
        int bucket = in.readInt();
        long offset = in.readLong();
        return new FlussSplit(pid, pname, bucket, offset);
    }

    @Override
    public FlussSplit deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION) {
            throw new IOException("unknown FlussSplit serializer version " + version + " (expected "
                    + VERSION + "; splits of version 1, which could span all buckets, cannot be restored)");
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            return read(in);
        }
    }
}
