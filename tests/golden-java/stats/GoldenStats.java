import java.math.BigDecimal;
import org.apache.fluss.memory.MemorySegmentOutputView;
import org.apache.fluss.record.LogRecordBatchStatisticsCollector;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.RowType;

/**
 * Prints, as hex, the statistics block Apache Fluss's own LogRecordBatchStatisticsCollector
 * writes for the rows of core/src/stats/tests.rs (statistics_are_computed_from_the_rows):
 * the Java side of core/tests/golden/stats/statistics_block.hex. Needs fluss-common from
 * Fluss's source (1.0-SNAPSHOT; no released jar has the class): see gen.sh.
 */
public class GoldenStats {
  public static void main(String[] args) throws Exception {
    RowType type = RowType.of(DataTypes.INT(), DataTypes.STRING(), DataTypes.BYTES(),
        DataTypes.DECIMAL(10, 2), DataTypes.DECIMAL(20, 2), DataTypes.TIMESTAMP(6),
        DataTypes.BOOLEAN());
    LogRecordBatchStatisticsCollector stats =
        new LogRecordBatchStatisticsCollector(type, new int[] {0, 1, 3, 4, 5, 6});
    stats.processRow(GenericRow.of(3, BinaryString.fromString("banana-split"), new byte[] {'x'},
        Decimal.fromUnscaledLong(150, 10, 2),
        Decimal.fromBigDecimal(new BigDecimal("100.00"), 20, 2),
        TimestampNtz.fromMillis(1_700_000_000_000L, 123_000), null));
    stats.processRow(GenericRow.of(1, BinaryString.fromString("apple"), null,
        Decimal.fromUnscaledLong(-225, 10, 2),
        Decimal.fromBigDecimal(new BigDecimal("-1.00"), 20, 2),
        TimestampNtz.fromMillis(-1L, 999_000), null));
    stats.processRow(GenericRow.of(2, null, null, Decimal.fromUnscaledLong(0, 10, 2),
        Decimal.fromBigDecimal(new BigDecimal("0.05"), 20, 2), TimestampNtz.fromMillis(0L, 0),
        null));
    MemorySegmentOutputView out = new MemorySegmentOutputView(64);
    int written = stats.writeStatistics(out);
    byte[] bytes = out.getCopyOfBuffer();
    StringBuilder hex = new StringBuilder();
    for (int i = 0; i < written; i++) {
      hex.append(String.format("%02x", bytes[i]));
    }
    System.out.println(hex);
  }
}
