// Riverlet golden-vector generator.
//
// Drives the real Apache Fluss 0.9.1 classes (from the fluss-server fat jar on Maven Central)
// to write byte vectors that core/tests/golden_java.rs checks Riverlet's codecs against.
// Our own program; it only calls Fluss's public encoder / builder APIs.
//
// Usage: java -cp <fluss classpath>:<classes> GoldenGen <output dir>

import org.apache.fluss.bucketing.BucketingFunction;
import org.apache.fluss.compression.ArrowCompressionInfo;
import org.apache.fluss.compression.ArrowCompressionType;
import org.apache.fluss.memory.UnmanagedPagedOutputView;
import org.apache.fluss.metadata.KvFormat;
import org.apache.fluss.metadata.LogFormat;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.record.ChangeType;
import org.apache.fluss.record.DefaultValueRecordBatch;
import org.apache.fluss.record.KvRecordBatchBuilder;
import org.apache.fluss.record.MemoryLogRecordsArrowBuilder;
import org.apache.fluss.record.bytesview.BytesView;
import org.apache.fluss.row.BinaryRow;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericArray;
import org.apache.fluss.row.GenericMap;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.row.arrow.ArrowWriter;
import org.apache.fluss.row.arrow.ArrowWriterPool;
import org.apache.fluss.row.compacted.CompactedRow;
import org.apache.fluss.row.compacted.CompactedRowDeserializer;
import org.apache.fluss.row.indexed.IndexedRow;
import org.apache.fluss.row.encode.CompactedRowEncoder;
import org.apache.fluss.row.encode.IndexedRowEncoder;
import org.apache.fluss.row.encode.KeyEncoder;
import org.apache.fluss.row.encode.RowEncoder;
import org.apache.fluss.row.encode.ValueEncoder;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.RootAllocator;
import org.apache.fluss.shaded.netty4.io.netty.buffer.ByteBuf;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.RowType;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class GoldenGen {

    private static final int[] BUCKET_COUNTS = {1, 3, 7, 16, 128};

    private static Path out;

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--verify")) {
            System.exit(verify(Paths.get(args[1])));
        }
        if (args.length != 1) {
            System.err.println("usage: GoldenGen OUTPUT_DIR | GoldenGen --verify RIVERLET_DIR");
            System.exit(2);
        }
        out = Paths.get(args[0]);
        Files.createDirectories(out);
        bucketing();
        rows("scalar", scalarType(), scalarRows());
        rows("nested", nestedType(), nestedRows());
        decodedFixedLength();
        arrowBatches();
        kvBatch();
        tableDescriptors();
        System.err.println("GoldenGen: wrote vectors into " + out);
    }

    // ------------------------------------------------------------------ helpers

    private static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return sb.toString();
    }

    private static String utf8Hex(String s) {
        return hex(s.getBytes(StandardCharsets.UTF_8));
    }

    private static void writeText(String name, List<String> lines) throws IOException {
        Files.write(out.resolve(name), (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void writeBin(String name, byte[] bytes) throws IOException {
        Files.write(out.resolve(name), bytes);
    }

    private static byte[] rowBytes(BinaryRow row) {
        byte[] b = new byte[row.getSizeInBytes()];
        row.copyTo(b, 0);
        return b;
    }

    private static byte[] viewBytes(BytesView view) {
        ByteBuf buf = view.getByteBuf();
        byte[] b = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), b);
        return b;
    }

    private static String repeat(String s, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(s);
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ 1. bucketing

    private static String buckets(byte[] key) {
        BucketingFunction f = BucketingFunction.of(null);
        StringBuilder sb = new StringBuilder();
        for (int n : BUCKET_COUNTS) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(n).append(':').append(f.bucketing(key, n));
        }
        return sb.toString();
    }

    private static byte[] encodeKey(RowType rowType, List<String> keys, Object... values) {
        KeyEncoder enc = KeyEncoder.of(rowType, keys, null);
        return enc.encodeKey(GenericRow.of(values));
    }

    private static void bucketing() throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("# kind\tvalue\tkey_hex\tbuckets (num_buckets:bucket ...)");
        lines.add("# STRING values are the UTF-8 bytes in hex; STRING_INT values are strhex,int");
        RowType intT = DataTypes.ROW(DataTypes.FIELD("k", DataTypes.INT().copy(false)));
        for (int v : new int[] {0, 1, -1, 42, 127, 128, 100000, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            byte[] key = encodeKey(intT, Collections.singletonList("k"), v);
            lines.add("INT\t" + v + "\t" + hex(key) + "\t" + buckets(key));
        }
        RowType longT = DataTypes.ROW(DataTypes.FIELD("k", DataTypes.BIGINT().copy(false)));
        for (long v : new long[] {0L, 1L, -1L, 1234567890123L, Long.MAX_VALUE, Long.MIN_VALUE}) {
            byte[] key = encodeKey(longT, Collections.singletonList("k"), v);
            lines.add("BIGINT\t" + v + "\t" + hex(key) + "\t" + buckets(key));
        }
        RowType strT = DataTypes.ROW(DataTypes.FIELD("k", DataTypes.STRING().copy(false)));
        String[] strings = {
            "", "a", "hello", "Fluss", "日本語テキスト", "emoji \uD83C\uDF89 ok", "ünïcödé",
            repeat("0123456789", 30), repeat("x", 1000)
        };
        for (String s : strings) {
            byte[] key = encodeKey(strT, Collections.singletonList("k"), BinaryString.fromString(s));
            lines.add("STRING\t" + utf8Hex(s) + "\t" + hex(key) + "\t" + buckets(key));
        }
        RowType compT =
                DataTypes.ROW(
                        DataTypes.FIELD("s", DataTypes.STRING().copy(false)),
                        DataTypes.FIELD("i", DataTypes.INT().copy(false)));
        Object[][] comps = {
            {"", 0}, {"user", 1}, {"ü", -5}, {repeat("long-", 40), Integer.MAX_VALUE}, {"eu", 123456}
        };
        for (Object[] c : comps) {
            String s = (String) c[0];
            int i = (Integer) c[1];
            byte[] key = encodeKey(compT, Arrays.asList("s", "i"), BinaryString.fromString(s), i);
            lines.add("STRING_INT\t" + utf8Hex(s) + "," + i + "\t" + hex(key) + "\t" + buckets(key));
        }
        writeText("bucketing.tsv", lines);
    }

    // ------------------------------------------------------------------ 2. rows

    static RowType scalarType() {
        return DataTypes.ROW(
                DataTypes.FIELD("c_bool", DataTypes.BOOLEAN()),
                DataTypes.FIELD("c_tinyint", DataTypes.TINYINT()),
                DataTypes.FIELD("c_smallint", DataTypes.SMALLINT()),
                DataTypes.FIELD("c_int", DataTypes.INT()),
                DataTypes.FIELD("c_bigint", DataTypes.BIGINT()),
                DataTypes.FIELD("c_float", DataTypes.FLOAT()),
                DataTypes.FIELD("c_double", DataTypes.DOUBLE()),
                DataTypes.FIELD("c_dec10_2", DataTypes.DECIMAL(10, 2)),
                DataTypes.FIELD("c_dec38_10", DataTypes.DECIMAL(38, 10)),
                DataTypes.FIELD("c_char5", DataTypes.CHAR(5)),
                DataTypes.FIELD("c_string", DataTypes.STRING()),
                DataTypes.FIELD("c_binary4", DataTypes.BINARY(4)),
                DataTypes.FIELD("c_bytes", DataTypes.BYTES()),
                DataTypes.FIELD("c_date", DataTypes.DATE()),
                DataTypes.FIELD("c_time3", DataTypes.TIME(3)),
                DataTypes.FIELD("c_ts3", DataTypes.TIMESTAMP(3)),
                DataTypes.FIELD("c_ts9", DataTypes.TIMESTAMP(9)),
                DataTypes.FIELD("c_ltz3", DataTypes.TIMESTAMP_LTZ(3)),
                DataTypes.FIELD("c_ltz9", DataTypes.TIMESTAMP_LTZ(9)));
    }

    static List<Object[]> scalarRows() {
        List<Object[]> rows = new ArrayList<>();
        rows.add(
                new Object[] {
                    true,
                    (byte) 1,
                    (short) 2,
                    3,
                    4L,
                    1.5f,
                    2.25d,
                    Decimal.fromUnscaledLong(12345L, 10, 2),
                    Decimal.fromBigDecimal(new BigDecimal("12345678901234567890.1234567890"), 38, 10),
                    BinaryString.fromString("hello"),
                    BinaryString.fromString("héllo wörld ✓"),
                    new byte[] {1, 2, 3, 4},
                    new byte[] {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef, 0},
                    19000,
                    3723123,
                    TimestampNtz.fromMillis(1700000000123L),
                    TimestampNtz.fromMillis(1700000000123L, 456789),
                    TimestampLtz.fromEpochMillis(1700000000999L),
                    TimestampLtz.fromEpochMillis(1700000000999L, 1)
                });
        rows.add(new Object[19]);
        rows.add(
                new Object[] {
                    false,
                    Byte.MIN_VALUE,
                    Short.MIN_VALUE,
                    Integer.MIN_VALUE,
                    Long.MIN_VALUE,
                    -3.4028235e38f,
                    -1.0e300d,
                    Decimal.fromUnscaledLong(-9999999999L, 10, 2),
                    Decimal.fromBigDecimal(new BigDecimal("-0.0000000001"), 38, 10),
                    BinaryString.fromString("ab"),
                    BinaryString.fromString(""),
                    new byte[] {0, 0, 0, 0},
                    new byte[0],
                    -1,
                    0,
                    TimestampNtz.fromMillis(-1L),
                    TimestampNtz.fromMillis(-1L, 999999),
                    TimestampLtz.fromEpochMillis(0L),
                    TimestampLtz.fromEpochMillis(0L, 999999)
                });
        // Every other column null.
        Object[] r3 = new Object[19];
        r3[1] = Byte.MAX_VALUE;
        r3[3] = Integer.MAX_VALUE;
        r3[5] = Float.MIN_VALUE;
        r3[7] = Decimal.fromUnscaledLong(1L, 10, 2);
        r3[9] = BinaryString.fromString("x");
        r3[11] = new byte[] {(byte) 0xff, (byte) 0xfe, (byte) 0xfd, (byte) 0xfc};
        r3[13] = 2932896; // 9999-12-31
        r3[15] = TimestampNtz.fromMillis(253402300799999L);
        r3[17] = TimestampLtz.fromEpochMillis(-62135596800000L);
        rows.add(r3);
        return rows;
    }

    static RowType nestedType() {
        return DataTypes.ROW(
                DataTypes.FIELD("c_arr_int", DataTypes.ARRAY(DataTypes.INT())),
                DataTypes.FIELD("c_map", DataTypes.MAP(DataTypes.STRING().copy(false), DataTypes.INT())),
                DataTypes.FIELD(
                        "c_row",
                        DataTypes.ROW(
                                DataTypes.FIELD("a", DataTypes.INT()),
                                DataTypes.FIELD("b", DataTypes.STRING()))),
                DataTypes.FIELD("c_arr_str", DataTypes.ARRAY(DataTypes.STRING())),
                DataTypes.FIELD("c_int", DataTypes.INT()));
    }

    static List<Object[]> nestedRows() {
        List<Object[]> rows = new ArrayList<>();
        Map<Object, Object> m0 = new LinkedHashMap<>();
        m0.put(BinaryString.fromString("a"), 1);
        m0.put(BinaryString.fromString("b"), null);
        rows.add(
                new Object[] {
                    new GenericArray(new Object[] {1, null, 3}),
                    new GenericMap(m0),
                    GenericRow.of(7, BinaryString.fromString("x")),
                    new GenericArray(
                            new Object[] {BinaryString.fromString("p"), BinaryString.fromString("qq")}),
                    42
                });
        rows.add(new Object[5]);
        rows.add(
                new Object[] {
                    new GenericArray(new Object[0]),
                    new GenericMap(new LinkedHashMap<>()),
                    GenericRow.of(null, null),
                    new GenericArray(new Object[] {null}),
                    -1
                });
        return rows;
    }

    private static List<DataType> children(RowType t) {
        return t.getChildren();
    }

    private static BinaryRow encodeRow(RowEncoder enc, Object[] values) {
        enc.startNewRow();
        for (int i = 0; i < values.length; i++) {
            enc.encodeField(i, values[i]);
        }
        return enc.finishRow();
    }

    private static void rows(String name, RowType type, List<Object[]> rows) throws IOException {
        DataType[] types = children(type).toArray(new DataType[0]);
        for (String format : new String[] {"compacted", "indexed"}) {
            List<String> lines = new ArrayList<>();
            lines.add("# " + format + " rows of " + type.asSerializableString());
            lines.add("# row_index\thex");
            RowEncoder enc =
                    format.equals("compacted") ? new CompactedRowEncoder(types) : new IndexedRowEncoder(types);
            for (int r = 0; r < rows.size(); r++) {
                String hexRow;
                try {
                    hexRow = hex(rowBytes(encodeRow(enc, rows.get(r))));
                } catch (RuntimeException e) {
                    hexRow = "UNSUPPORTED " + e.getClass().getSimpleName() + ": " + e.getMessage();
                }
                lines.add(r + "\t" + hexRow);
            }
            writeText(format + "_rows_" + name + ".tsv", lines);
        }
    }

    /**
     * How Java reads the fixed-length columns (CHAR(5) at 9, BINARY(4) at 11) of its own scalar
     * rows back: both row formats hand back trimmed values for some inputs.
     */
    private static void decodedFixedLength() throws IOException {
        RowType type = scalarType();
        DataType[] types = children(type).toArray(new DataType[0]);
        List<Object[]> rows = scalarRows();
        List<String> lines = new ArrayList<>();
        lines.add("# format\trow_index\tc_char5 (UTF-8 hex as read back)\tc_binary4 (hex as read back); '-' = null");
        for (String format : new String[] {"compacted", "indexed"}) {
            RowEncoder enc =
                    format.equals("compacted") ? new CompactedRowEncoder(types) : new IndexedRowEncoder(types);
            for (int r = 0; r < rows.size(); r++) {
                byte[] bytes = rowBytes(encodeRow(enc, rows.get(r)));
                InternalRow row =
                        format.equals("compacted")
                                ? CompactedRow.from(types, bytes, new CompactedRowDeserializer(types))
                                : IndexedRow.from(types, bytes);
                String c = row.isNullAt(9) ? "-" : utf8Hex(row.getChar(9, 5).toString());
                String bin = row.isNullAt(11) ? "-" : hex(row.getBinary(11, 4));
                lines.add(format + "\t" + r + "\t" + c + "\t" + bin);
            }
        }
        writeText("rows_scalar_fixed_length_read_back.tsv", lines);
    }

    // ------------------------------------------------------------------ 3. arrow log batches

    private static GenericRow genericRow(Object[] values) {
        GenericRow row = new GenericRow(values.length);
        for (int i = 0; i < values.length; i++) {
            row.setField(i, values[i]);
        }
        return row;
    }

    private interface BuilderFactory {
        MemoryLogRecordsArrowBuilder create(ArrowWriter writer, UnmanagedPagedOutputView view);
    }

    private static byte[] arrowBatch(
            ArrowWriterPool pool,
            long tableId,
            RowType type,
            List<Object[]> rows,
            ChangeType[] changeTypes,
            ArrowCompressionInfo compression,
            BuilderFactory factory)
            throws Exception {
        ArrowWriter writer = pool.getOrCreateWriter(tableId, 1, 1 << 20, type, compression);
        UnmanagedPagedOutputView view = new UnmanagedPagedOutputView(64 * 1024);
        MemoryLogRecordsArrowBuilder builder = factory.create(writer, view);
        for (int i = 0; i < rows.size(); i++) {
            builder.append(changeTypes == null ? ChangeType.APPEND_ONLY : changeTypes[i], genericRow(rows.get(i)));
        }
        builder.setWriterState(7L, 3);
        builder.close();
        return viewBytes(builder.build());
    }

    private static void arrowBatches() throws Exception {
        ArrowWriterPool pool = new ArrowWriterPool(new RootAllocator(Long.MAX_VALUE));
        ArrowCompressionInfo none = ArrowCompressionInfo.NO_COMPRESSION;
        ArrowCompressionInfo zstd = new ArrowCompressionInfo(ArrowCompressionType.ZSTD, 3);
        ArrowCompressionInfo lz4 = new ArrowCompressionInfo(ArrowCompressionType.LZ4_FRAME, -1);
        List<Object[]> scalar = scalarRows();

        // Append-only, magic 0 (0.9.1's current log magic): schema id 1, writer 7, seq 3.
        writeBin("log_arrow_v0_scalar_none.bin",
                arrowBatch(pool, 1L, scalarType(), scalar, null, none,
                        (w, v) -> MemoryLogRecordsArrowBuilder.builder(1, w, v, true)));
        writeBin("log_arrow_v0_scalar_zstd.bin",
                arrowBatch(pool, 2L, scalarType(), scalar, null, zstd,
                        (w, v) -> MemoryLogRecordsArrowBuilder.builder(1, w, v, true)));
        writeBin("log_arrow_v0_scalar_lz4.bin",
                arrowBatch(pool, 3L, scalarType(), scalar, null, lz4,
                        (w, v) -> MemoryLogRecordsArrowBuilder.builder(1, w, v, true)));
        writeBin("log_arrow_v0_nested_none.bin",
                arrowBatch(pool, 4L, nestedType(), nestedRows(), null, none,
                        (w, v) -> MemoryLogRecordsArrowBuilder.builder(1, w, v, true)));

        // Changelog (not append-only), magic 0, base offset 100.
        ChangeType[] cts = {ChangeType.INSERT, ChangeType.UPDATE_BEFORE, ChangeType.UPDATE_AFTER, ChangeType.DELETE};
        writeBin("log_arrow_v0_changelog_zstd.bin",
                arrowBatch(pool, 5L, scalarType(), scalar, cts, zstd,
                        (w, v) -> MemoryLogRecordsArrowBuilder.builder(100L, (byte) 0, 1, w, v)));
        // The same changelog with magic 1 (0.9.x layout: leader epoch after the commit timestamp).
        writeBin("log_arrow_v1_changelog_none.bin",
                arrowBatch(pool, 6L, scalarType(), scalar, cts, none,
                        (w, v) -> MemoryLogRecordsArrowBuilder.builder(200L, (byte) 1, 1, w, v)));
        pool.close();
    }

    // ------------------------------------------------------------------ 4. kv batch

    private static void kvBatch() throws Exception {
        RowType type =
                DataTypes.ROW(
                        DataTypes.FIELD("id", DataTypes.INT().copy(false)),
                        DataTypes.FIELD("name", DataTypes.STRING()),
                        DataTypes.FIELD("score", DataTypes.DOUBLE()));
        DataType[] types = type.getChildren().toArray(new DataType[0]);
        KeyEncoder keyEncoder = KeyEncoder.of(type, Collections.singletonList("id"), null);
        CompactedRowEncoder valueEncoder = new CompactedRowEncoder(types);

        Object[][] upserts = {
            {1, BinaryString.fromString("alice"), 1.5d},
            {2, BinaryString.fromString("bob"), null},
        };
        List<String> lines = new ArrayList<>();
        lines.add("# KV batch: schema id 1, KvFormat COMPACTED, writer id 7, batch sequence 3");
        lines.add("# op\tkey_hex\tvalue_hex (compacted row; '-' for a delete)");

        UnmanagedPagedOutputView view = new UnmanagedPagedOutputView(64 * 1024);
        KvRecordBatchBuilder builder = KvRecordBatchBuilder.builder(1, 1 << 20, view, KvFormat.COMPACTED);
        for (Object[] u : upserts) {
            byte[] key = keyEncoder.encodeKey(GenericRow.of(u));
            CompactedRow value = (CompactedRow) encodeRow(valueEncoder, u).copy();
            builder.append(key, value);
            lines.add("upsert\t" + hex(key) + "\t" + hex(rowBytes(value)));
        }
        byte[] delKey = keyEncoder.encodeKey(GenericRow.of(1, null, null));
        builder.append(delKey, null);
        lines.add("delete\t" + hex(delKey) + "\t-");
        builder.setWriterState(7L, 3);
        builder.close();
        writeBin("kv_batch_compacted.bin", viewBytes(builder.build()));
        writeText("kv_batch_compacted.tsv", lines);

        // The same upserts + delete with KvFormat INDEXED (IndexedRow values), writer 8, seq 0.
        IndexedRowEncoder indexedEncoder = new IndexedRowEncoder(types);
        List<String> indexedLines = new ArrayList<>();
        indexedLines.add("# KV batch: schema id 2, KvFormat INDEXED, writer id 8, batch sequence 0");
        indexedLines.add("# op\tkey_hex\tvalue_hex (indexed row; '-' for a delete)");
        UnmanagedPagedOutputView indexedView = new UnmanagedPagedOutputView(64 * 1024);
        KvRecordBatchBuilder indexedBuilder =
                KvRecordBatchBuilder.builder(2, 1 << 20, indexedView, KvFormat.INDEXED);
        for (Object[] u : upserts) {
            byte[] key = keyEncoder.encodeKey(GenericRow.of(u));
            BinaryRow value = encodeRow(indexedEncoder, u).copy();
            indexedBuilder.append(key, value);
            indexedLines.add("upsert\t" + hex(key) + "\t" + hex(rowBytes(value)));
        }
        indexedBuilder.append(delKey, null);
        indexedLines.add("delete\t" + hex(delKey) + "\t-");
        indexedBuilder.setWriterState(8L, 0);
        indexedBuilder.close();
        writeBin("kv_batch_indexed.bin", viewBytes(indexedBuilder.build()));
        writeText("kv_batch_indexed.tsv", indexedLines);

        // Values as the KV store keeps them (schema id prefix) and a value record batch of
        // them (the records of LimitScan / ScanKv responses): schema ids 1, 1, 2.
        List<String> valueLines = new ArrayList<>();
        valueLines.add("# ValueEncoder.encodeValue(schema_id, compacted row): schema_id\trow_hex\tvalue_hex");
        DefaultValueRecordBatch.Builder valueBatch = DefaultValueRecordBatch.builder();
        short[] schemaIds = {1, 1, 2};
        Object[][] valueRows = {upserts[0], upserts[1], {3, null, -0.5d}};
        for (int i = 0; i < valueRows.length; i++) {
            BinaryRow row = encodeRow(valueEncoder, valueRows[i]).copy();
            valueLines.add(schemaIds[i] + "\t" + hex(rowBytes(row)) + "\t"
                    + hex(ValueEncoder.encodeValue(schemaIds[i], row)));
            valueBatch.append(schemaIds[i], row);
        }
        DefaultValueRecordBatch built = valueBatch.build();
        byte[] batchBytes = new byte[built.sizeInBytes()];
        built.getSegment().get(built.getPosition(), batchBytes, 0, batchBytes.length);
        writeBin("value_batch.bin", batchBytes);
        writeText("value_batch.tsv", valueLines);
    }

    // ------------------------------------------------------------------ 5. table descriptors

    private static void tableDescriptors() throws IOException {
        Schema pkSchema =
                Schema.newBuilder()
                        .column("id", DataTypes.BIGINT().copy(false))
                        .withComment("the id")
                        .column("dt", DataTypes.STRING().copy(false))
                        .column("name", DataTypes.STRING())
                        .column(
                                "point",
                                DataTypes.ROW(
                                        DataTypes.FIELD("x", DataTypes.DOUBLE()),
                                        DataTypes.FIELD("y", DataTypes.DOUBLE())))
                        .column("tags", DataTypes.ARRAY(DataTypes.STRING()))
                        .column("amount", DataTypes.DECIMAL(10, 2))
                        .column("ts", DataTypes.TIMESTAMP_LTZ(3))
                        .column("attrs", DataTypes.MAP(DataTypes.STRING().copy(false), DataTypes.INT()))
                        .primaryKey("id", "dt")
                        .build();
        TableDescriptor pk =
                TableDescriptor.builder()
                        .schema(pkSchema)
                        .comment("golden pk table")
                        .partitionedBy("dt")
                        .distributedBy(4, "id")
                        .kvFormat(KvFormat.COMPACTED)
                        .logFormat(LogFormat.ARROW)
                        .property("table.log.ttl", "7d")
                        .property("table.auto-partition.enabled", "true")
                        .property("table.auto-partition.time-unit", "DAY")
                        .customProperty("owner", "riverlet")
                        .customProperty("note", "ünïcödé \"quoted\"")
                        .build();
        Files.write(out.resolve("table_descriptor_pk_partitioned.json"), pk.toJsonBytes());

        Schema logSchema =
                Schema.newBuilder()
                        .column("event_id", DataTypes.BIGINT())
                        .column("payload", DataTypes.BYTES())
                        .column("at", DataTypes.TIMESTAMP(6))
                        .build();
        TableDescriptor log =
                TableDescriptor.builder()
                        .schema(logSchema)
                        .distributedBy(3)
                        .property("table.log.arrow.compression.type", "ZSTD")
                        .property("table.log.arrow.compression.zstd.level", "5")
                        .build();
        Files.write(out.resolve("table_descriptor_log.json"), log.toJsonBytes());
    }

    // ------------------------------------------------------------------ reverse check

    /** A canonical text form of one value of type t, for comparing rows across row classes. */
    private static String render(Object v, DataType t) {
        if (v == null) {
            return "null";
        }
        switch (t.getTypeRoot()) {
            case BINARY:
            case BYTES:
                return "x'" + hex((byte[]) v) + "'";
            case CHAR:
            case STRING:
                return "'" + v + "'";
            case ARRAY: {
                org.apache.fluss.row.InternalArray a = (org.apache.fluss.row.InternalArray) v;
                DataType et = t.getChildren().get(0);
                org.apache.fluss.row.InternalArray.ElementGetter g =
                        org.apache.fluss.row.InternalArray.createElementGetter(et);
                List<String> items = new ArrayList<>();
                for (int i = 0; i < a.size(); i++) {
                    items.add(render(g.getElementOrNull(a, i), et));
                }
                return "[" + String.join(", ", items) + "]";
            }
            case MAP: {
                org.apache.fluss.row.InternalMap m = (org.apache.fluss.row.InternalMap) v;
                DataType kt = t.getChildren().get(0);
                DataType vt = t.getChildren().get(1);
                String ks = render(m.keyArray(), DataTypes.ARRAY(kt));
                String vs = render(m.valueArray(), DataTypes.ARRAY(vt));
                return "{" + ks + " -> " + vs + "}";
            }
            case ROW:
                return renderRow((InternalRow) v, (RowType) t);
            default:
                return v.toString();
        }
    }

    private static String renderRow(InternalRow row, RowType t) {
        List<String> fields = new ArrayList<>();
        for (int i = 0; i < t.getFieldCount(); i++) {
            DataType ft = t.getTypeAt(i);
            fields.add(render(InternalRow.createFieldGetter(ft, i).getFieldOrNull(row), ft));
        }
        return "(" + String.join(", ", fields) + ")";
    }

    private static org.apache.fluss.metadata.SchemaGetter fixedSchema(RowType type) {
        Schema schema = Schema.newBuilder().fromRowType(type).build();
        return new org.apache.fluss.metadata.SchemaGetter() {
            public Schema getSchema(int id) {
                return schema;
            }

            public java.util.concurrent.CompletableFuture<org.apache.fluss.metadata.SchemaInfo>
                    getSchemaInfoAsync(int id) {
                return java.util.concurrent.CompletableFuture.completedFuture(
                        new org.apache.fluss.metadata.SchemaInfo(schema, id));
            }

            public org.apache.fluss.metadata.SchemaInfo getLatestSchemaInfo() {
                return new org.apache.fluss.metadata.SchemaInfo(schema, 1);
            }

            public void release() {}
        };
    }

    private static String renderField(InternalRow row, DataType t, int pos) {
        try {
            return render(InternalRow.createFieldGetter(t, pos).getFieldOrNull(row), t);
        } catch (RuntimeException e) {
            return "<" + e.getClass().getSimpleName() + " reading the value>";
        }
    }

    /**
     * Reads one Arrow log batch file with Fluss's reader and returns the differences from the
     * rows Java was given (empty = identical).
     */
    private static List<String> readArrow(
            Path file, RowType type, List<Object[]> rows, ChangeType[] changeTypes) throws Exception {
        List<String> diffs = new ArrayList<>();
        if (!Files.exists(file)) {
            diffs.add("missing file");
            return diffs;
        }
        org.apache.fluss.record.MemoryLogRecords records =
                org.apache.fluss.record.MemoryLogRecords.pointToBytes(Files.readAllBytes(file));
        org.apache.fluss.record.LogRecordReadContext ctx =
                org.apache.fluss.record.LogRecordReadContext.createArrowReadContext(
                        type, 1, fixedSchema(type));
        int n = 0;
        int batches = 0;
        for (org.apache.fluss.record.LogRecordBatch batch : records.batches()) {
            batches++;
            try {
                batch.ensureValid();
            } catch (RuntimeException e) {
                diffs.add("batch " + batches + ": " + e);
            }
            if (batch.schemaId() != 1 || batch.writerId() != 7L || batch.batchSequence() != 3
                    || batch.getRecordCount() != rows.size()) {
                diffs.add("header " + batch);
            }
            try (org.apache.fluss.utils.CloseableIterator<org.apache.fluss.record.LogRecord> it =
                    batch.records(ctx)) {
                while (it.hasNext()) {
                    org.apache.fluss.record.LogRecord rec = it.next();
                    ChangeType wantCt = changeTypes == null ? ChangeType.APPEND_ONLY : changeTypes[n];
                    if (rec.getChangeType() != wantCt || rec.logOffset() != n) {
                        diffs.add("row " + n + ": change type " + rec.getChangeType() + " offset "
                                + rec.logOffset() + ", expected " + wantCt + " " + n);
                    }
                    GenericRow want = genericRow(rows.get(n));
                    for (int i = 0; i < type.getFieldCount(); i++) {
                        String got = renderField(rec.getRow(), type.getTypeAt(i), i);
                        String exp = renderField(want, type.getTypeAt(i), i);
                        if (!got.equals(exp)) {
                            diffs.add("row " + n + " " + type.getFieldNames().get(i) + ": Java reads "
                                    + got + ", expected " + exp);
                        }
                    }
                    n++;
                }
            }
        }
        if (batches != 1 || n != rows.size()) {
            diffs.add(batches + " batches, " + n + " rows");
        }
        ctx.close();
        return diffs;
    }

    /**
     * Reads Riverlet's batch and, as a control, the batch Java itself wrote for the same rows;
     * differences that Java's own batch shows too are Fluss reader limits, not Riverlet's.
     */
    private static int verifyArrow(
            Path dir, String name, RowType type, List<Object[]> rows, ChangeType[] changeTypes)
            throws Exception {
        List<String> ours = readArrow(dir.resolve("riverlet_" + name + ".bin"), type, rows, changeTypes);
        List<String> control = readArrow(dir.resolve("java_" + name + ".bin"), type, rows, changeTypes);
        int failures = 0;
        for (String d : ours) {
            if (control.contains(d)) {
                System.err.println("  note riverlet_" + name + ": " + d + " (Java's own batch too)");
            } else {
                System.err.println("  FAIL riverlet_" + name + ": " + d);
                failures++;
            }
        }
        System.err.println((failures == 0 ? "ok   " : "FAIL ") + "riverlet_" + name + ".bin");
        return failures;
    }

    private static int verify(Path dir) throws Exception {
        ChangeType[] cts = {ChangeType.INSERT, ChangeType.UPDATE_BEFORE, ChangeType.UPDATE_AFTER, ChangeType.DELETE};
        int failures = 0;
        failures += verifyArrow(dir, "log_arrow_v0_scalar_none", scalarType(), scalarRows(), null);
        failures += verifyArrow(dir, "log_arrow_v0_scalar_zstd", scalarType(), scalarRows(), null);
        failures += verifyArrow(dir, "log_arrow_v0_scalar_lz4", scalarType(), scalarRows(), null);
        failures += verifyArrow(dir, "log_arrow_v0_changelog_zstd", scalarType(), scalarRows(), cts);
        failures += verifyArrow(dir, "log_arrow_v0_nested_none", nestedType(), nestedRows(), null);
        // Our table JSON must parse in Java to the descriptor Java itself wrote.
        for (String name : new String[] {"table_descriptor_pk_partitioned", "table_descriptor_log"}) {
            Path ours = dir.resolve("riverlet_" + name + ".json");
            Path javas = dir.resolve("java_" + name + ".json");
            if (!Files.exists(ours) || !Files.exists(javas)) {
                System.err.println("MISSING " + ours + " or " + javas);
                failures++;
                continue;
            }
            TableDescriptor a = TableDescriptor.fromJsonBytes(Files.readAllBytes(ours));
            TableDescriptor b = TableDescriptor.fromJsonBytes(Files.readAllBytes(javas));
            boolean same = a.equals(b);
            System.err.println((same ? "ok   " : "FAIL ") + ours.getFileName());
            if (!same) {
                System.err.println("  java reads ours as " + a + "\n  java's own        " + b);
                failures++;
            }
        }
        System.err.println(failures == 0 ? "verify: all ok" : "verify: " + failures + " failure(s)");
        return failures == 0 ? 0 : 1;
    }
}
