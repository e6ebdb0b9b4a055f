package io.riverlet.spark.read;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Spark's data source V2 predicates written in the core's filter text ({@code a = 1 AND (b IN
 * ('x', 'y') OR c IS NULL)}), which the core evaluates exactly, with SQL's three-valued logic.
 *
 * <p>A predicate is translated only when every part of it has the same meaning in the core as in
 * Spark: comparisons, {@code IN}, {@code IS [NOT] NULL}, {@code STARTS_WITH} / {@code ENDS_WITH} /
 * {@code CONTAINS} (as {@code LIKE}), {@code AND}, {@code OR} and {@code NOT} over top-level
 * columns of the types listed in {@code columns} and non-null literals. Anything else (arithmetic,
 * casts, nested fields, NaN) is left to Spark. The translation decides nothing about which rows
 * match: that is the core's job.
 */
public final class FilterTranslator {
  private final Map<String, DataType> columns;

  /**
   * @param columns the columns predicates may name, with their Spark types; a column whose
   *     values the core compares differently from Spark (TIME read as INT) must be left out
   */
  public FilterTranslator(Map<String, DataType> columns) {
    this.columns = columns;
  }

  /** The filter text of {@code p}, or null when it cannot be pushed. */
  public String translate(Predicate p) {
    Expression[] c = p.children();
    switch (p.name()) {
      case "AND":
      case "OR": {
        String l = translateChild(c[0]);
        String r = translateChild(c[1]);
        return l == null || r == null ? null : "(" + l + ") " + p.name() + " (" + r + ")";
      }
      case "NOT": {
        String inner = translateChild(c[0]);
        return inner == null ? null : "NOT (" + inner + ")";
      }
      case "IS_NULL":
      case "IS_NOT_NULL": {
        String col = column(c[0]);
        return col == null ? null : col + (p.name().equals("IS_NULL") ? " IS NULL" : " IS NOT NULL");
      }
      case "=":
      case "<=>":
      case "<>":
      case "<":
      case "<=":
      case ">":
      case ">=":
        return comparison(p.name(), c[0], c[1]);
      case "IN": {
        String col = column(c[0]);
        if (col == null || c.length < 2) {
          return null;
        }
        DataType t = columns.get(name(c[0]));
        List<String> values = new ArrayList<>();
        for (int i = 1; i < c.length; i++) {
          String v = literal(c[i], t);
          if (v == null) {
            return null;
          }
          values.add(v);
        }
        return col + " IN (" + String.join(", ", values) + ")";
      }
      case "STARTS_WITH":
      case "ENDS_WITH":
      case "CONTAINS": {
        String col = column(c[0]);
        if (col == null || !(columns.get(name(c[0])) instanceof StringType)) {
          return null;
        }
        if (!(c[1] instanceof Literal) || ((Literal<?>) c[1]).value() == null) {
          return null;
        }
        String text = likeEscape(((Literal<?>) c[1]).value().toString());
        String pattern =
            p.name().equals("STARTS_WITH")
                ? text + "%"
                : p.name().equals("ENDS_WITH") ? "%" + text : "%" + text + "%";
        return col + " LIKE " + quote(pattern);
      }
      default:
        return null;
    }
  }

  private String translateChild(Expression e) {
    return e instanceof Predicate ? translate((Predicate) e) : null;
  }

  private String comparison(String op, Expression left, Expression right) {
    if (left instanceof Literal && right instanceof NamedReference) {
      return comparison(flip(op), right, left);
    }
    String col = column(left);
    if (col == null) {
      return null;
    }
    String lit = literal(right, columns.get(name(left)));
    if (lit == null) {
      return null;
    }
    // A null-safe equality with a non-null literal keeps the same rows as '=' (a null column
    // value makes both not-true).
    String coreOp = op.equals("<=>") ? "=" : op.equals("<>") ? "!=" : op;
    return col + " " + coreOp + " " + lit;
  }

  private static String flip(String op) {
    switch (op) {
      case "<":
        return ">";
      case "<=":
        return ">=";
      case ">":
        return "<";
      case ">=":
        return "<=";
      default:
        return op;
    }
  }

  private static String name(Expression e) {
    return ((NamedReference) e).fieldNames()[0];
  }

  /** The quoted column of a top-level reference to a known column, else null. */
  private String column(Expression e) {
    if (!(e instanceof NamedReference)) {
      return null;
    }
    String[] parts = ((NamedReference) e).fieldNames();
    if (parts.length != 1 || !columns.containsKey(parts[0])) {
      return null;
    }
    return "`" + parts[0].replace("`", "``") + "`";
  }

  /** A literal of Spark type {@code t} in the core's syntax, or null. */
  static String literal(Expression e, DataType t) {
    if (!(e instanceof Literal)) {
      return null;
    }
    Literal<?> l = (Literal<?>) e;
    Object v = l.value();
    if (v == null || t == null || !l.dataType().sameType(t)) {
      return null;
    }
    if (t instanceof BooleanType) {
      return ((Boolean) v) ? "TRUE" : "FALSE";
    }
    if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
        || t instanceof LongType) {
      return v.toString();
    }
    if (t instanceof FloatType || t instanceof DoubleType) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        return null;
      }
      // The exact binary value in decimal: the core reads it back to the same float.
      return new BigDecimal(d).toPlainString();
    }
    if (t instanceof DecimalType) {
      return ((Decimal) v).toJavaBigDecimal().toPlainString();
    }
    if (t instanceof StringType) {
      return quote(v.toString());
    }
    if (t instanceof BinaryType) {
      StringBuilder sb = new StringBuilder("X'");
      for (byte b : (byte[]) v) {
        sb.append(String.format("%02X", b & 0xff));
      }
      return sb.append('\'').toString();
    }
    if (t instanceof DateType) {
      LocalDate d = LocalDate.ofEpochDay((Integer) v);
      return inPrintableYears(d.getYear()) ? "DATE '" + d + "'" : null;
    }
    if (t instanceof TimestampType || t instanceof TimestampNTZType) {
      // Both are microseconds: since the epoch (TIMESTAMP) or of a UTC wall clock
      // (TIMESTAMP_NTZ); the core stores both as such a number, so one text fits both.
      long micros = (Long) v;
      LocalDateTime dt =
          LocalDateTime.ofEpochSecond(
              Math.floorDiv(micros, 1_000_000L),
              (int) Math.floorMod(micros, 1_000_000L) * 1000,
              ZoneOffset.UTC);
      if (!inPrintableYears(dt.getYear())) {
        return null;
      }
      return String.format(
          "TIMESTAMP '%04d-%02d-%02d %02d:%02d:%02d.%06d'",
          dt.getYear(), dt.getMonthValue(), dt.getDayOfMonth(), dt.getHour(), dt.getMinute(),
          dt.getSecond(), dt.getNano() / 1000);
    }
    return null;
  }

  private static boolean inPrintableYears(int year) {
    return year >= 1 && year <= 9999;
  }

  static String quote(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  /** {@code text} as a LIKE pattern that matches exactly itself. */
  static String likeEscape(String text) {
    StringBuilder sb = new StringBuilder();
    for (char ch : text.toCharArray()) {
      if (ch == '%' || ch == '_' || ch == '\\') {
        sb.append('\\');
      }
      sb.append(ch);
    }
    return sb.toString();
  }
}
