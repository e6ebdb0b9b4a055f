package io.riverlet.flink.sink;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.expressions.CallExpression;
import org.apache.flink.table.expressions.FieldReferenceExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.expressions.ValueLiteralExpression;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Recognises a WHERE clause that is exactly one equality with a literal per primary-key column
 * (in any order, ANDed) and turns it into the key row, with the other columns null.
 */
final class KeyEquality {

    private KeyEquality() {}

    static Optional<RowData> fullKey(List<ResolvedExpression> filters, RowType rowType, List<String> key) {
        Map<String, Object> values = new HashMap<>();
        for (ResolvedExpression f : filters) {
            if (!collect(f, values)) {
                return Optional.empty();
            }
        }
        if (!values.keySet().equals(new java.util.HashSet<>(key))) {
            return Optional.empty();
        }
        GenericRowData row = new GenericRowData(rowType.getFieldCount());
        for (Map.Entry<String, Object> e : values.entrySet()) {
            row.setField(rowType.getFieldIndex(e.getKey()), e.getValue());
        }
        return Optional.of(row);
    }

    private static boolean collect(ResolvedExpression e, Map<String, Object> values) {
        if (!(e instanceof CallExpression)) {
            return false;
        }
        CallExpression call = (CallExpression) e;
        List<ResolvedExpression> args = call.getResolvedChildren();
        if (call.getFunctionDefinition() == BuiltInFunctionDefinitions.AND) {
            for (ResolvedExpression a : args) {
                if (!collect(a, values)) {
                    return false;
                }
            }
            return true;
        }
        if (call.getFunctionDefinition() != BuiltInFunctionDefinitions.EQUALS || args.size() != 2) {
            return false;
        }
        FieldReferenceExpression field;
        ValueLiteralExpression literal;
        if (args.get(0) instanceof FieldReferenceExpression && args.get(1) instanceof ValueLiteralExpression) {
            field = (FieldReferenceExpression) args.get(0);
            literal = (ValueLiteralExpression) args.get(1);
        } else if (args.get(1) instanceof FieldReferenceExpression
                && args.get(0) instanceof ValueLiteralExpression) {
            field = (FieldReferenceExpression) args.get(1);
            literal = (ValueLiteralExpression) args.get(0);
        } else {
            return false;
        }
        if (literal.isNull() || values.containsKey(field.getName())) {
            return false;
        }
        Optional<Object> value = internal(literal, field.getOutputDataType().getLogicalType());
        if (!value.isPresent()) {
            return false;
        }
        values.put(field.getName(), value.get());
        return true;
    }

    /** The literal as Flink's internal value of the column's type, if it is a simple one. */
    private static Optional<Object> internal(ValueLiteralExpression v, LogicalType t) {
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return v.getValueAs(Boolean.class).map(x -> x);
            case TINYINT:
                return v.getValueAs(Byte.class).map(x -> x);
            case SMALLINT:
                return v.getValueAs(Short.class).map(x -> x);
            case INTEGER:
                return v.getValueAs(Integer.class).map(x -> x);
            case BIGINT:
                return v.getValueAs(Long.class).map(x -> x);
            case CHAR:
            case VARCHAR:
                return v.getValueAs(String.class).map(StringData::fromString);
            case DECIMAL:
                DecimalType d = (DecimalType) t;
                return v.getValueAs(BigDecimal.class)
                        .map(x -> DecimalData.fromBigDecimal(x, d.getPrecision(), d.getScale()));
            case DATE:
                return v.getValueAs(LocalDate.class).map(x -> (int) x.toEpochDay());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return v.getValueAs(LocalDateTime.class).map(TimestampData::fromLocalDateTime);
            default:
                return Optional.empty();
        }
    }
}
