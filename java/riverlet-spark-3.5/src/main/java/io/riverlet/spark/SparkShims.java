package io.riverlet.spark;

import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.JavaConverters;
import scala.collection.Seq;
import scala.runtime.AbstractFunction1;

/**
 * The calls whose signatures differ between Spark 3.5 (Scala 2.12) and Spark 4 (Scala 2.13):
 * this is the Spark 3.5 copy; riverlet-spark-4.x has the other. Everything else is shared.
 */
final class SparkShims {
  private SparkShims() {}

  /** A table-function registration for {@code SparkSessionExtensions.injectTableFunction}. */
  static Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, LogicalPlan>>
      tableFunction(
          String name,
          ExpressionInfo info,
          java.util.function.Function<List<Expression>, LogicalPlan> builder) {
    Function1<Seq<Expression>, LogicalPlan> f =
        new AbstractFunction1<Seq<Expression>, LogicalPlan>() {
          @Override
          public LogicalPlan apply(Seq<Expression> args) {
            return builder.apply(JavaConverters.seqAsJavaList(args));
          }
        };
    return new Tuple3<>(new FunctionIdentifier(name), info, f);
  }

  /** A resolved relation over {@code table} that carries per-read {@code options}. */
  static LogicalPlan relation(
      Table table, CatalogPlugin catalog, Identifier ident, CaseInsensitiveStringMap options) {
    return DataSourceV2Relation.create(table, Option.apply(catalog), Option.apply(ident), options);
  }

  /** The parts of a multi-part identifier ({@code a.b.c}), as Spark's SQL parser splits it. */
  static List<String> parseIdentifier(SparkSession spark, String text) {
    try {
      return JavaConverters.seqAsJavaList(spark.sessionState().sqlParser().parseMultipartIdentifier(text));
    } catch (Exception e) {
      throw new IllegalArgumentException("Cannot parse table name '" + text + "': " + e, e);
    }
  }
}
