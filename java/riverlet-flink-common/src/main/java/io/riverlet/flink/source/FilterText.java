package io.riverlet.flink.source;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.flink.table.expressions.CallExpression;
import org.apache.flink.table.expressions.FieldReferenceExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.expressions.ValueLiteralExpression;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.flink.table.functions.FunctionDefinition;

/**
 * Writes Flink filter expressions in the core's filter text ({@code a = 1 AND (b IN ('x', 'y')
 * OR c IS NULL)}); what the text means is the core's business. Expressions with no such form
 * (functions, casts, column-to-column comparisons) are not translated and stay with Flink.
 */
public final class FilterText {

    private FilterText() {}

    /** The filter text of {@code e}, if it has one. */
    public static Optional<String> of(ResolvedExpression e) {
        try {
            return Optional.of(text(e));
        } catch (UnsupportedOperationException ex) {
            return Optional.empty();
        }
    }

    private static String text(ResolvedExpression e) {
        if (!(e instanceof CallExpression)) {
            throw new UnsupportedOperationException();
        }
        CallExpression call = (CallExpression) e;
        FunctionDefinition f = call.getFunctionDefinition();
        List<ResolvedExpression> args = call.getResolvedChildren();
        if (f == BuiltInFunctionDefinitions.AND || f == BuiltInFunctionDefinitions.OR) {
            List<String> parts = new ArrayList<>();
            for (ResolvedExpression a : args) {
                parts.add("(" + text(a) + ")");
            }
            return String.join(f == BuiltInFunctionDefinitions.AND ? " AND " : " OR ", parts);
        }
        if (f == BuiltInFunctionDefinitions.NOT) {
            return "NOT (" + text(args.get(0)) + ")";
        }
        if (f == BuiltInFunctionDefinitions.IS_NULL) {
            return field(args.get(0)) + " IS NULL";
        }
        if (f == BuiltInFunctionDefinitions.IS_NOT_NULL) {
            return field(args.get(0)) + " IS NOT NULL";
        }
        if (f == BuiltInFunctionDefinitions.IN) {
            List<String> values = new ArrayList<>();
            for (int i = 1; i < args.size(); i++) {
                values.add(literal(args.get(i)));
            }
            return field(args.get(0)) + " IN (" + String.join(", ", values) + ")";
        }
        if (f == BuiltInFunctionDefinitions.LIKE && args.size() == 2) {
            return field(args.get(0)) + " LIKE " + literal(args.get(1));
        }
        if (f == BuiltInFunctionDefinitions.BETWEEN && args.size() == 3) {
            return field(args.get(0)) + " BETWEEN " + literal(args.get(1)) + " AND " + literal(args.get(2));
        }
        String op = comparison(f);
        if (op != null && args.size() == 2) {
            if (args.get(0) instanceof FieldReferenceExpression
                    && args.get(1) instanceof ValueLiteralExpression) {
                return field(args.get(0)) + " " + op + " " + literal(args.get(1));
            }
            if (args.get(1) instanceof FieldReferenceExpression
                    && args.get(0) instanceof ValueLiteralExpression) {
                return field(args.get(1)) + " " + flip(op) + " " + literal(args.get(0));
            }
        }
        throw new UnsupportedOperationException();
    }

    private static String comparison(FunctionDefinition f) {
        if (f == BuiltInFunctionDefinitions.EQUALS) {
            return "=";
        } else if (f == BuiltInFunctionDefinitions.NOT_EQUALS) {
            return "<>";
        } else if (f == BuiltInFunctionDefinitions.GREATER_THAN) {
            return ">";
        } else if (f == BuiltInFunctionDefinitions.GREATER_THAN_OR_EQUAL) {
            return ">=";
        } else if (f == BuiltInFunctionDefinitions.LESS_THAN) {
            return "<";
        } else if (f == BuiltInFunctionDefinitions.LESS_THAN_OR_EQUAL) {
            return "<=";
        }
        return null;
    }

    private static String flip(String op) {
        switch (op) {
            case ">":
                return "<";
            case ">=":
                return "<=";
            case "<":
                return ">";
            case "<=":
                return ">=";
            default:
                return op;
        }
    }

    private static String field(ResolvedExpression e) {
        if (!(e instanceof FieldReferenceExpression)) {
            throw new UnsupportedOperationException();
        }
        return "`" + ((FieldReferenceExpression) e).getName().replace("`", "``") + "`";
    }

    private static String literal(ResolvedExpression e) {
        if (!(e instanceof ValueLiteralExpression)) {
            throw new UnsupportedOperationException();
        }
        ValueLiteralExpression v = (ValueLiteralExpression) e;
        if (v.isNull()) {
            throw new UnsupportedOperationException();
        }
        switch (v.getOutputDataType().getLogicalType().getTypeRoot()) {
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case DECIMAL:
            case FLOAT:
            case DOUBLE:
                return v.getValueAs(BigDecimal.class).map(BigDecimal::toPlainString)
                        .orElseThrow(UnsupportedOperationException::new);
            case CHAR:
            case VARCHAR:
                return quote(v.getValueAs(String.class).orElseThrow(UnsupportedOperationException::new));
            case DATE:
                return quote(v.getValueAs(LocalDate.class).map(LocalDate::toString)
                        .orElseThrow(UnsupportedOperationException::new));
            case TIME_WITHOUT_TIME_ZONE:
                return quote(v.getValueAs(LocalTime.class).map(LocalTime::toString)
                        .orElseThrow(UnsupportedOperationException::new));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return quote(v.getValueAs(LocalDateTime.class).map(t -> t.toString().replace('T', ' '))
                        .orElseThrow(UnsupportedOperationException::new));
            default:
                throw new UnsupportedOperationException();
        }
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }
}
