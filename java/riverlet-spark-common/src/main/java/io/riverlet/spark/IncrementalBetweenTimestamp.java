package io.riverlet.spark;

import io.riverlet.InvalidArgumentException;
import io.riverlet.TimeBound;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.CurrentTimestamp;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.RuntimeReplaceable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.runtime.AbstractPartialFunction;

/**
 * {@code fluss_incremental_between_timestamp(table, start[, end])}: the rows committed to a Fluss
 * table in {@code [start, end)}, as an ordinary relation over the table that carries the per-read
 * options {@code scan.incremental.start.timestamp} / {@code .end.timestamp}.
 *
 * <p>Runs while the statement is analyzed: the arguments must be constant expressions (literals,
 * {@code now()}, {@code unix_timestamp()}, {@code date_format(...)}, ...). A STRING is passed to
 * the core as written (epoch milliseconds or {@code yyyy-MM-dd HH:mm:ss}, read in {@code
 * spark.sql.session.timeZone}); an integral value is epoch milliseconds; a DATE is the start of
 * that day and a TIMESTAMP_NTZ a wall clock, both in the session time zone (resolved by the
 * core); a TIMESTAMP is an instant. An omitted end is pinned to the analysis time. The window is checked by the core
 * right away, so an invalid one fails the statement before anything runs.
 */
public final class IncrementalBetweenTimestamp {
  /** The function's name. */
  public static final String NAME = "fluss_incremental_between_timestamp";

  private IncrementalBetweenTimestamp() {}

  /** Builds the relation of one call (Spark passes the resolved arguments). */
  public static LogicalPlan resolve(List<Expression> args) {
    if (args.size() != 2 && args.size() != 3) {
      throw new IllegalArgumentException(
          NAME + " takes a table followed by a start timestamp and an optional end timestamp, "
              + "e.g. " + NAME + "('db.t', '2026-01-01 00:00:00', '2026-01-02 00:00:00'); got "
              + args.size() + " argument(s)");
    }
    String zone = SQLConf.get().sessionLocalTimeZone();
    // The bounds first: an argument error does not depend on the table.
    String start = bound(args.get(1), "start", zone);
    String end =
        args.size() == 3
            ? bound(args.get(2), "end", zone)
            : Long.toString(Math.floorDiv((Long) new CurrentTimestamp().eval(null), 1000L));
    Object tableArg = evaluate(args.get(0), "table");
    if (tableArg == null || tableArg.toString().isBlank()) {
      throw new IllegalArgumentException(
          "The first argument of " + NAME + " must be a table name: 'table', 'database.table' "
              + "or 'catalog.database.table'");
    }
    SparkSession spark = SparkSession.active();
    String tableText = tableArg.toString();
    List<String> parts = SparkShims.parseIdentifier(spark, tableText);
    CatalogManager catalogs = spark.sessionState().catalogManager();
    CatalogPlugin catalog;
    String[] namespace;
    String name;
    switch (parts.size()) {
      case 1:
        catalog = catalogs.currentCatalog();
        namespace = catalogs.currentNamespace();
        name = parts.get(0);
        break;
      case 2:
        catalog = catalogs.currentCatalog();
        namespace = new String[] {parts.get(0)};
        name = parts.get(1);
        break;
      case 3:
        catalog = catalogs.catalog(parts.get(0));
        namespace = new String[] {parts.get(1)};
        name = parts.get(2);
        break;
      default:
        throw new IllegalArgumentException(
            "Invalid table '" + tableText + "' for " + NAME
                + ": expected 'table', 'database.table' or 'catalog.database.table'");
    }
    if (!(catalog instanceof TableCatalog)) {
      throw new IllegalArgumentException(
          NAME + " needs a Fluss catalog, but catalog '" + catalog.name() + "' of '" + tableText
              + "' is " + catalog.getClass().getName());
    }
    Identifier ident = Identifier.of(namespace, name);
    Table table;
    try {
      table = ((TableCatalog) catalog).loadTable(ident);
    } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
      throw new IllegalArgumentException(
          NAME + ": table '" + tableText + "' (" + catalog.name() + "." + ident
              + ") does not exist", e);
    }
    if (!(table instanceof RiverletTable)) {
      throw new IllegalArgumentException(
          NAME + " reads Fluss tables only, but '" + tableText + "' is a "
              + table.getClass().getName());
    }
    Map<String, String> options = new HashMap<>();
    options.put(FlussOptions.INCREMENTAL_START, start);
    options.put(FlussOptions.INCREMENTAL_END, end);
    CaseInsensitiveStringMap readOptions = new CaseInsensitiveStringMap(options);
    // Analysis-time check of the window (and of read-optimized mode) by the core.
    WindowCheck.validate((RiverletTable) table, readOptions);
    return SparkShims.relation(table, catalog, ident, readOptions);
  }

  /**
   * A timestamp argument as the text the core reads: a STRING as written (the core reads it when
   * the read is planned); other types as epoch milliseconds, a DATE or TIMESTAMP_NTZ resolved by
   * the core as a date or wall clock in the session zone.
   */
  private static String bound(Expression arg, String which, String zone) {
    Object v = evaluate(arg, which);
    if (v == null) {
      throw new IllegalArgumentException(
          "The " + which + " timestamp of " + NAME + " must not be null");
    }
    DataType t = arg.dataType();
    if (t instanceof StringType) {
      return v.toString();
    } else if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
        || t instanceof LongType) {
      return v.toString();
    } else if (t instanceof DateType) {
      return inZone(LocalDate.ofEpochDay((Integer) v).toString(), which, zone);
    } else if (t instanceof TimestampType) {
      return Long.toString(Math.floorDiv((Long) v, 1000L));
    } else if (t instanceof TimestampNTZType) {
      long micros = (Long) v;
      LocalDateTime wall =
          LocalDateTime.ofEpochSecond(
              Math.floorDiv(micros, 1_000_000L),
              (int) Math.floorMod(micros, 1_000_000L) * 1000,
              ZoneOffset.UTC);
      return inZone(wall.toString(), which, zone);
    }
    throw new IllegalArgumentException(
        "The " + which + " timestamp of " + NAME + " has type " + t.catalogString()
            + "; use a STRING (epoch milliseconds or 'yyyy-MM-dd HH:mm:ss'), an integral "
            + "epoch-milliseconds value, a DATE or a TIMESTAMP");
  }

  /** Epoch milliseconds (as text) of a date or wall-clock text in {@code zone}, by the core. */
  private static String inZone(String text, String which, String zone) {
    try {
      return Long.toString(TimeBound.text(text).resolve(zone));
    } catch (InvalidArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid " + which + " timestamp of " + NAME + ": " + e.getMessage(), e);
    }
  }

  /** The value of a constant argument expression. */
  private static Object evaluate(Expression arg, String which) {
    // Expressions only the optimizer rewrites (now() - INTERVAL ...) are foldable once replaced.
    Expression evaluable = arg.transformUp(REPLACE_RUNTIME_REPLACEABLE);
    if (!evaluable.foldable()) {
      throw new IllegalArgumentException(
          "The " + which + " argument of " + NAME + " must be a constant expression (literals "
              + "and functions such as now() or unix_timestamp()); '" + arg.sql()
              + "' is not (column references are not allowed)");
    }
    try {
      return evaluable.eval(null);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "Cannot evaluate the " + which + " argument '" + arg.sql() + "' of " + NAME + ": " + e,
          e);
    }
  }

  /**
   * Replaces expressions that only the optimizer would rewrite (e.g. the {@code -} of {@code
   * now() - INTERVAL 1 HOUR}) by their evaluable form.
   */
  private static final AbstractPartialFunction<Expression, Expression>
      REPLACE_RUNTIME_REPLACEABLE =
          new AbstractPartialFunction<Expression, Expression>() {
            @Override
            public boolean isDefinedAt(Expression e) {
              return e instanceof RuntimeReplaceable;
            }

            @Override
            public Expression apply(Expression e) {
              return ((RuntimeReplaceable) e).replacement();
            }
          };
}
