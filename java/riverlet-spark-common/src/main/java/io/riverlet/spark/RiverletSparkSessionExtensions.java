package io.riverlet.spark;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The session extension ({@code spark.sql.extensions=io.riverlet.spark.RiverletSparkSessionExtensions})
 * that adds Fluss's table-valued function {@code fluss_incremental_between_timestamp(table,
 * start[, end])} (see {@link IncrementalBetweenTimestamp}).
 */
public final class RiverletSparkSessionExtensions
    extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    String fn = IncrementalBetweenTimestamp.NAME;
    ExpressionInfo info =
        new ExpressionInfo(
            IncrementalBetweenTimestamp.class.getName(),
            null,
            fn,
            fn + "(table, start[, end]) - the rows committed to a Fluss table in [start, end)",
            "\n    Arguments:\n"
                + "      * table - 'table', 'database.table' or 'catalog.database.table'\n"
                + "      * start - epoch milliseconds or 'yyyy-MM-dd HH:mm:ss' (session time"
                + " zone), a DATE, a TIMESTAMP or any constant expression of them\n"
                + "      * end - the same forms; omitted: the moment the query is analyzed\n",
            "",
            "",
            "",
            "",
            "",
            "");
    extensions.injectTableFunction(
        SparkShims.tableFunction(fn, info, IncrementalBetweenTimestamp::resolve));
    return BoxedUnit.UNIT;
  }
}
