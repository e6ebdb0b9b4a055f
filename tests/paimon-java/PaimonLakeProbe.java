// Apache Paimon's own Java library (paimon-bundle 1.3.1) reading the Paimon tables the embedded
// server tiered: the independent reader of server/tests/lake_paimon.rs, which runs it when
// RIVERLET_PAIMON_JAVA_CP holds its classpath (tests/paimon-java/run.sh sets it).
//
//   java -cp CP PaimonLakeProbe.java WAREHOUSE DB.TABLE...
//
// Prints one JSON object per table, one per line: its fields (name and Paimon type), their
// comments, the schema id, primary and partition keys, options, latest snapshot (id, commit
// user, commit identifier) and every row Paimon's batch read returns (merged by key for a primary-key table), each with the bucket
// of the split it came from, its partition and, for a fixed-bucket table, the bucket Paimon's
// own bucket function gives the row.

import java.time.LocalDate;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.TableSchema;
import org.apache.paimon.Snapshot;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.FixedBucketRowKeyExtractor;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.InternalRowUtils;

public class PaimonLakeProbe {
    public static void main(String[] args) throws Exception {
        Options options = new Options();
        options.set("warehouse", args[0]);
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
            for (int i = 1; i < args.length; i++) {
                String[] name = args[i].split("\\.", 2);
                FileStoreTable table =
                        (FileStoreTable) catalog.getTable(Identifier.create(name[0], name[1]));
                System.out.println(describe(args[i], table));
            }
        }
    }

    static String describe(String name, FileStoreTable table) throws Exception {
        TableSchema schema = table.schema();
        RowType rowType = schema.logicalRowType();
        StringBuilder out = new StringBuilder("{");
        out.append("\"table\":").append(q(name));
        List<String> fields = new ArrayList<>();
        for (DataField f : rowType.getFields()) {
            fields.add("[" + q(f.name()) + "," + q(f.type().toString()) + "]");
        }
        out.append(",\"fields\":[").append(String.join(",", fields)).append("]");
        List<String> comments = new ArrayList<>();
        for (DataField f : rowType.getFields()) {
            comments.add(f.description() == null ? "null" : q(f.description()));
        }
        out.append(",\"comments\":[").append(String.join(",", comments)).append("]");
        out.append(",\"schema_id\":").append(schema.id());
        out.append(",\"primary_keys\":").append(list(schema.primaryKeys()));
        out.append(",\"partition_keys\":").append(list(schema.partitionKeys()));
        List<String> opts = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(schema.options()).entrySet()) {
            opts.add(q(e.getKey()) + ":" + q(e.getValue()));
        }
        out.append(",\"options\":{").append(String.join(",", opts)).append("}");
        Snapshot latest = table.snapshotManager().latestSnapshot();
        if (latest != null) {
            out.append(",\"snapshot\":{\"id\":").append(latest.id())
                    .append(",\"commit_user\":").append(q(latest.commitUser()))
                    .append(",\"commit_identifier\":").append(latest.commitIdentifier())
                    .append("}");
        }
        boolean fixed = schema.numBuckets() > 0;
        FixedBucketRowKeyExtractor bucketOf = fixed ? new FixedBucketRowKeyExtractor(schema) : null;
        ReadBuilder rb = table.newReadBuilder();
        List<String> rows = new ArrayList<>();
        for (Split split : rb.newScan().plan().splits()) {
            DataSplit ds = (DataSplit) split;
            String partition = partitionText(ds.partition(), schema);
            try (RecordReader<InternalRow> reader = rb.newRead().createReader(split)) {
                reader.forEachRemaining(
                        row -> {
                            List<String> cells = new ArrayList<>();
                            cells.add(String.valueOf(ds.bucket()));
                            cells.add(q(partition));
                            if (bucketOf != null) {
                                bucketOf.setRecord(row);
                                cells.add(String.valueOf(bucketOf.bucket()));
                            } else {
                                cells.add("null");
                            }
                            for (int c = 0; c < rowType.getFieldCount(); c++) {
                                Object v = InternalRowUtils.get(row, c, rowType.getTypeAt(c));
                                cells.add(v == null ? "null" : q(text(v, rowType.getTypeAt(c))));
                            }
                            rows.add("[" + String.join(",", cells) + "]");
                        });
            }
        }
        out.append(",\"rows\":[").append(String.join(",", rows)).append("]");
        return out.append("}").toString();
    }

    /**
     * A value as text: dates and times in ISO form, binary strings in lowercase hex, a local
     * zoned timestamp as its epoch milliseconds, anything else by its own toString.
     */
    static String text(Object v, DataType type) {
        switch (type.getTypeRoot()) {
            case DATE:
                return LocalDate.ofEpochDay((Integer) v).toString();
            case TIME_WITHOUT_TIME_ZONE:
                return LocalTime.ofNanoOfDay((Integer) v * 1_000_000L).toString();
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return String.valueOf(((Timestamp) v).getMillisecond());
            case BINARY:
            case VARBINARY:
                StringBuilder hex = new StringBuilder();
                for (byte x : (byte[]) v) {
                    hex.append(String.format("%02x", x));
                }
                return hex.toString();
            default:
                return v.toString();
        }
    }

    /** The partition's values joined by `$` (as Fluss names partitions), "" for none. */
    static String partitionText(BinaryRow partition, TableSchema schema) {
        RowType keys = schema.logicalPartitionType();
        List<String> values = new ArrayList<>();
        for (int i = 0; i < keys.getFieldCount(); i++) {
            values.add(String.valueOf(InternalRowUtils.get(partition, i, keys.getTypeAt(i))));
        }
        return String.join("$", values);
    }

    static String list(List<String> xs) {
        List<String> quoted = new ArrayList<>();
        for (String x : xs) {
            quoted.add(q(x));
        }
        return "[" + String.join(",", quoted) + "]";
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
