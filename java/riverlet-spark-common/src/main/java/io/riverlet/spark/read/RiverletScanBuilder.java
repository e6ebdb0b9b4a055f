package io.riverlet.spark.read;

import io.riverlet.TableInfo;
import io.riverlet.spark.FlussOptions;
import io.riverlet.spark.RiverletTable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Negotiates a read with Spark: which columns ({@link #pruneColumns}), which predicates the core
 * applies exactly ({@link #pushPredicates}: those are reported as pushed, the rest Spark applies
 * after the scan), a LIMIT, and {@code COUNT(*)}. Equality and IN predicates on partition
 * columns also select the Fluss partitions to plan splits for.
 */
public final class RiverletScanBuilder
    implements ScanBuilder,
        SupportsPushDownRequiredColumns,
        SupportsPushDownV2Filters,
        SupportsPushDownLimit,
        SupportsPushDownAggregates {
  private final RiverletTable table;
  private final CaseInsensitiveStringMap options;
  private final StructType fullSchema;
  private StructType requiredSchema;
  private final List<Predicate> pushed = new ArrayList<>();
  private final List<String> pushedText = new ArrayList<>();
  /** Partition column -> the values equality / IN predicates allow. */
  private final Map<String, Set<String>> partitionValues = new HashMap<>();
  private long limit = -1;
  private boolean countStar;

  public RiverletScanBuilder(RiverletTable table, CaseInsensitiveStringMap options) {
    this.table = table;
    this.options = options;
    @SuppressWarnings("deprecation")
    StructType s = table.schema();
    this.fullSchema = s;
    this.requiredSchema = s;
  }

  @Override
  public void pruneColumns(StructType required) {
    // Top-level columns only: the core reads whole columns, so a column Spark pruned inside
    // (struct_col.col2 alone) is read with its full type and Spark picks the field it needs.
    StructType out = new StructType();
    for (StructField f : required.fields()) {
      out = out.add(fullSchema.apply(f.name()));
    }
    this.requiredSchema = out;
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    FilterTranslator translator = new FilterTranslator(filterableColumns());
    List<Predicate> rest = new ArrayList<>();
    for (Predicate p : predicates) {
      String text = translator.translate(p);
      if (text == null) {
        rest.add(p);
      } else {
        pushed.add(p);
        pushedText.add(text);
        notePartitionValues(p);
      }
    }
    return rest.toArray(new Predicate[0]);
  }

  @Override
  public Predicate[] pushedPredicates() {
    return pushed.toArray(new Predicate[0]);
  }

  /** Top-level columns whose values the core compares as Spark does. */
  private Map<String, DataType> filterableColumns() {
    Map<String, DataType> out = new LinkedHashMap<>();
    for (Field f : table.arrowSchema().getFields()) {
      switch (f.getType().getTypeID()) {
        case Bool:
        case Int:
        case FloatingPoint:
        case Utf8:
        case LargeUtf8:
        case Binary:
        case LargeBinary:
        case Decimal:
        case Date:
        case Timestamp:
          out.put(f.getName(), fullSchema.apply(f.getName()).dataType());
          break;
        default:
          // TIME (read as INT in Spark), BINARY(n), and nested types stay with Spark.
          break;
      }
    }
    return out;
  }

  /** Records {@code part = lit} / {@code part IN (lits)} on a partition column. */
  private void notePartitionValues(Predicate p) {
    Expression[] c = p.children();
    if (!(p.name().equals("=") || p.name().equals("IN")) || c.length < 2) {
      return;
    }
    if (!(c[0] instanceof org.apache.spark.sql.connector.expressions.NamedReference)) {
      return;
    }
    String[] ref = ((org.apache.spark.sql.connector.expressions.NamedReference) c[0]).fieldNames();
    if (ref.length != 1 || !table.info().partitionKeys().contains(ref[0])) {
      return;
    }
    DataType t = fullSchema.apply(ref[0]).dataType();
    if (!(t instanceof StringType || t instanceof IntegerType || t instanceof LongType
        || t instanceof ShortType || t instanceof ByteType)) {
      return;
    }
    Set<String> values = new LinkedHashSet<>();
    for (int i = 1; i < c.length; i++) {
      if (!(c[i] instanceof org.apache.spark.sql.connector.expressions.Literal)) {
        return;
      }
      Object v = ((org.apache.spark.sql.connector.expressions.Literal<?>) c[i]).value();
      if (v == null) {
        return;
      }
      values.add(v.toString());
    }
    partitionValues.merge(
        ref[0],
        values,
        (a, b) -> {
          Set<String> both = new LinkedHashSet<>(a);
          both.retainAll(b);
          return both;
        });
  }

  @Override
  public boolean pushLimit(int n) {
    this.limit = n;
    return true;
  }

  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    return false;
  }

  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    if (aggregation.groupByExpressions().length != 0) {
      return false;
    }
    AggregateFunc[] fns = aggregation.aggregateExpressions();
    if (fns.length != 1 || !(fns[0] instanceof CountStar)) {
      return false;
    }
    countStar = true;
    return true;
  }

  @Override
  public Scan build() {
    TableInfo info = table.info();
    String start = options.get(FlussOptions.INCREMENTAL_START);
    String end = options.get(FlussOptions.INCREMENTAL_END);
    boolean readOptimized = FlussOptions.readOptimized(options);
    String zone = org.apache.spark.sql.internal.SQLConf.get().sessionLocalTimeZone();
    if (start != null && end == null) {
      // Pin the open end once, on the driver, so that every bucket reads the same window.
      end = Long.toString(System.currentTimeMillis());
    }
    List<String> columns = new ArrayList<>();
    for (StructField f : requiredSchema.fields()) {
      columns.add(f.name());
    }
    boolean empty = columns.isEmpty();
    if (empty) {
      columns.add(fullSchema.fields()[0].name());
    }
    String filter = pushedText.isEmpty() ? null : joinAnd(pushedText);
    ReadSpec spec =
        new ReadSpec(
            table.name(),
            columns,
            empty,
            filter,
            countStar ? -1 : limit,
            start,
            end,
            zone,
            readOptimized);
    StructType readSchema =
        countStar
            ? new StructType().add("count(*)", org.apache.spark.sql.types.DataTypes.LongType, false)
            : requiredSchema;
    return new RiverletScan(
        table, spec, readSchema, countStar, partitionValues, pushed, options);
  }

  private static String joinAnd(List<String> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    StringBuilder sb = new StringBuilder();
    for (String p : parts) {
      if (sb.length() > 0) {
        sb.append(" AND ");
      }
      sb.append('(').append(p).append(')');
    }
    return sb.toString();
  }
}
