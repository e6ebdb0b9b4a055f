// Golden key bytes and buckets of Paimon-formatted tables, written by the reference
// implementations: Paimon's own BinaryRowWriter (paimon-bundle 1.3.1, the Paimon version Fluss
// 0.9.1 ships) and Fluss's own PaimonKeyEncoder + PaimonBucketingFunction (fluss-client
// 0.9.1-incubating), for the all-types row of Fluss's PaimonKeyEncoderTest and a few more keys.
// It fails unless both implementations write the same bytes, then prints one line per case:
//
//   <case> <TAB> <hex of the key bytes> <TAB> <buckets>:<bucket> ...
//
// core/src/row/lake_key/tests.rs holds its output (run it again after changing a case):
//   java -cp "$(cat classpath)" LakeKeyGolden.java
// where the classpath is `mvn -f pom.xml dependency:build-classpath` of the pom beside it.

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.fluss.bucketing.BucketingFunction;
import org.apache.fluss.metadata.DataLakeFormat;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.encode.KeyEncoder;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.RowType;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryRowWriter;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.bucket.DefaultBucketFunction;

public final class LakeKeyGolden {
  static final int[] BUCKETS = {3, 7, 16, 128};
  static final long MILLIS = 1698235273182L;

  interface PaimonFill {
    void fill(BinaryRowWriter w);
  }

  static void emit(String name, RowType type, GenericRow flussRow, int arity, PaimonFill fill) {
    List<String> keys = type.getFieldNames();
    byte[] fluss = KeyEncoder.ofBucketKeyEncoder(type, keys, DataLakeFormat.PAIMON).encodeKey(flussRow);
    BinaryRow paimon = new BinaryRow(arity);
    BinaryRowWriter w = new BinaryRowWriter(paimon);
    fill.fill(w);
    w.complete();
    byte[] paimonBytes = paimon.toBytes();
    if (!Arrays.equals(fluss, paimonBytes)) {
      throw new AssertionError(name + ": Fluss " + hex(fluss) + " != Paimon " + hex(paimonBytes));
    }
    BucketingFunction f = BucketingFunction.of(DataLakeFormat.PAIMON);
    StringBuilder out = new StringBuilder(name).append('\t').append(hex(fluss)).append('\t');
    for (int n : BUCKETS) {
      int flussBucket = f.bucketing(fluss, n);
      int paimonBucket = new DefaultBucketFunction().bucket(paimon, n);
      if (flussBucket != paimonBucket) {
        throw new AssertionError(name + ": bucket of " + n + " Fluss " + flussBucket + " Paimon " + paimonBucket);
      }
      out.append(n).append(':').append(flussBucket).append(n == 128 ? "" : " ");
    }
    System.out.println(out);
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x));
    return s.toString();
  }

  static RowType row(DataType... types) {
    List<DataField> fields = new ArrayList<>();
    for (int i = 0; i < types.length; i++) fields.add(new DataField("k" + i, types[i]));
    return new RowType(fields);
  }

  public static void main(String[] args) {
    // PaimonKeyEncoderTest.createKeyRowType and its row.
    RowType all =
        row(DataTypes.BOOLEAN(), DataTypes.TINYINT(), DataTypes.SMALLINT(), DataTypes.INT(),
            DataTypes.BIGINT(), DataTypes.FLOAT(), DataTypes.DOUBLE(), DataTypes.DATE(),
            DataTypes.TIME(), DataTypes.BINARY(20), DataTypes.BYTES(), DataTypes.CHAR(2),
            DataTypes.STRING(), DataTypes.DECIMAL(5, 2), DataTypes.DECIMAL(20, 0),
            DataTypes.TIMESTAMP(1), DataTypes.TIMESTAMP(5), DataTypes.TIMESTAMP_LTZ(1),
            DataTypes.TIMESTAMP_LTZ(5));
    long big = new BigInteger("12345678901234567890").longValue();
    GenericRow r =
        GenericRow.of(true, (byte) 2, (short) 10, 100, big, 13.2f, 15.21, 19655, 34200000,
            "1234567890".getBytes(), "20".getBytes(),
            org.apache.fluss.row.BinaryString.fromString("1"),
            org.apache.fluss.row.BinaryString.fromString("hello"),
            org.apache.fluss.row.Decimal.fromUnscaledLong(9, 5, 2),
            org.apache.fluss.row.Decimal.fromBigDecimal(new BigDecimal(10), 20, 0),
            org.apache.fluss.row.TimestampNtz.fromMillis(MILLIS),
            org.apache.fluss.row.TimestampNtz.fromMillis(MILLIS),
            org.apache.fluss.row.TimestampLtz.fromEpochMillis(MILLIS, 45678),
            org.apache.fluss.row.TimestampLtz.fromEpochMillis(MILLIS, 123456));
    emit("all_types", all, r, 19, w -> {
      w.writeBoolean(0, true);
      w.writeByte(1, (byte) 2);
      w.writeShort(2, (short) 10);
      w.writeInt(3, 100);
      w.writeLong(4, big);
      w.writeFloat(5, 13.2f);
      w.writeDouble(6, 15.21);
      w.writeInt(7, 19655);
      w.writeInt(8, 34200000);
      w.writeBinary(9, "1234567890".getBytes());
      w.writeBinary(10, "20".getBytes());
      w.writeString(11, BinaryString.fromString("1"));
      w.writeString(12, BinaryString.fromString("hello"));
      w.writeDecimal(13, Decimal.fromUnscaledLong(9, 5, 2), 5);
      w.writeDecimal(14, Decimal.fromBigDecimal(new BigDecimal(10), 20, 0), 20);
      w.writeTimestamp(15, Timestamp.fromEpochMillis(MILLIS), 1);
      w.writeTimestamp(16, Timestamp.fromEpochMillis(MILLIS), 5);
      w.writeTimestamp(17, Timestamp.fromEpochMillis(MILLIS, 45678), 1);
      w.writeTimestamp(18, Timestamp.fromEpochMillis(MILLIS, 123456), 6);
    });
    // One INT, the keys of the cluster test's tables.
    for (int id : new int[] {0, 1, 42, -7, 1000}) {
      emit("int_" + id, row(DataTypes.INT().copy(false)), GenericRow.of(id), 1, w -> w.writeInt(0, id));
    }
    // One BIGINT.
    emit("bigint_1234567890123", row(DataTypes.BIGINT().copy(false)), GenericRow.of(1234567890123L), 1,
        w -> w.writeLong(0, 1234567890123L));
    // INT and a short (inline) STRING; INT and a long (variable-part) STRING.
    for (String s : new String[] {"hi", "this_is_a_long_string"}) {
      emit("int_string_" + s, row(DataTypes.INT().copy(false), DataTypes.STRING().copy(false)),
          GenericRow.of(7, org.apache.fluss.row.BinaryString.fromString(s)), 2, w -> {
            w.writeInt(0, 7);
            w.writeString(1, BinaryString.fromString(s));
          });
    }
    // A null in a nullable key column, then an INT.
    emit("null_int", row(DataTypes.INT(), DataTypes.INT().copy(false)), GenericRow.of(null, 7), 2, w -> {
      w.setNullAt(0);
      w.writeInt(1, 7);
    });
    // A negative DECIMAL(20, 0) in the variable part; a TIMESTAMP(6) with nanos.
    BigDecimal neg = new BigDecimal("-12345678901234567890");
    emit("decimal20_neg", row(DataTypes.DECIMAL(20, 0).copy(false)),
        GenericRow.of(org.apache.fluss.row.Decimal.fromBigDecimal(neg, 20, 0)), 1,
        w -> w.writeDecimal(0, Decimal.fromBigDecimal(neg, 20, 0), 20));
    emit("timestamp6", row(DataTypes.TIMESTAMP(6).copy(false)),
        GenericRow.of(org.apache.fluss.row.TimestampNtz.fromMillis(MILLIS, 123456)), 1,
        w -> w.writeTimestamp(0, Timestamp.fromEpochMillis(MILLIS, 123456), 6));
  }
}
