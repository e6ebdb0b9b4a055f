//! DataFusion filter expressions to the core's [`riverlet::scan::Expr`]: the subset the core
//! evaluates exactly (and prunes partitions with). Anything else is left to DataFusion.

use chrono::NaiveDate;
use datafusion::logical_expr::{expr::InList, BinaryExpr, Expr, Like, Operator};
use datafusion::scalar::ScalarValue;
use riverlet::scan::{CompareOp, Expr as CoreExpr, Literal};

/// The core form of `e`, when every part of it has one (then the core's result is exact).
pub fn to_core(e: &Expr) -> Option<CoreExpr> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => Some(CoreExpr::And(vec![to_core(left)?, to_core(right)?])),
            Operator::Or => Some(CoreExpr::Or(vec![to_core(left)?, to_core(right)?])),
            _ => {
                let op = compare_op(*op)?;
                match (column(left), column(right)) {
                    (Some(c), None) => Some(CoreExpr::compare(c, op, literal(right)?)),
                    (None, Some(c)) => Some(CoreExpr::compare(c, op.flip(), literal(left)?)),
                    _ => None,
                }
            }
        },
        Expr::Not(inner) => Some(CoreExpr::Not(Box::new(to_core(inner)?))),
        Expr::IsNull(inner) => Some(CoreExpr::IsNull(column(inner)?)),
        Expr::IsNotNull(inner) => Some(CoreExpr::IsNotNull(column(inner)?)),
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            let column = column(expr)?;
            let values = list.iter().map(literal).collect::<Option<Vec<_>>>()?;
            Some(if *negated {
                CoreExpr::NotIn { column, values }
            } else {
                CoreExpr::In { column, values }
            })
        }
        Expr::Between(b) => {
            let between = CoreExpr::Between {
                column: column(&b.expr)?,
                low: literal(&b.low)?,
                high: literal(&b.high)?,
            };
            Some(if b.negated {
                CoreExpr::Not(Box::new(between))
            } else {
                between
            })
        }
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char,
            case_insensitive,
        }) => {
            // The core's LIKE is case-sensitive with `\` as its escape, as DataFusion's default.
            if *case_insensitive || !matches!(escape_char, None | Some('\\')) {
                return None;
            }
            let pattern = match literal(pattern)? {
                Literal::String(p) => p,
                _ => return None,
            };
            let like = CoreExpr::Like {
                column: column(expr)?,
                pattern,
            };
            Some(if *negated {
                CoreExpr::Not(Box::new(like))
            } else {
                like
            })
        }
        _ => None,
    }
}

fn compare_op(op: Operator) -> Option<CompareOp> {
    Some(match op {
        Operator::Eq => CompareOp::Eq,
        Operator::NotEq => CompareOp::NotEq,
        Operator::Lt => CompareOp::Lt,
        Operator::LtEq => CompareOp::LtEq,
        Operator::Gt => CompareOp::Gt,
        Operator::GtEq => CompareOp::GtEq,
        _ => return None,
    })
}

fn column(e: &Expr) -> Option<String> {
    match e {
        Expr::Column(c) => Some(c.name.clone()),
        _ => None,
    }
}

/// Splits a timestamp in `unit_per_second` units into the core's millis + nanos of the milli.
fn split_timestamp(v: i64, nanos_per_unit: i64) -> (i64, u32) {
    let nanos = v as i128 * nanos_per_unit as i128;
    let millis = nanos.div_euclid(1_000_000) as i64;
    let rest = nanos.rem_euclid(1_000_000) as u32;
    (millis, rest)
}

fn literal(e: &Expr) -> Option<Literal> {
    let v = match e {
        Expr::Literal(v, _) => v,
        _ => return None,
    };
    if v.is_null() {
        return Some(Literal::Null);
    }
    let timestamp = |v: i64, nanos_per_unit: i64, tz: &Option<std::sync::Arc<str>>| {
        let (millis, nanos_of_milli) = split_timestamp(v, nanos_per_unit);
        if tz.is_some() {
            Literal::TimestampLtz {
                millis,
                nanos_of_milli,
            }
        } else {
            Literal::Timestamp {
                millis,
                nanos_of_milli,
            }
        }
    };
    Some(match v {
        ScalarValue::Boolean(Some(b)) => Literal::Boolean(*b),
        ScalarValue::Int8(Some(i)) => Literal::Int(*i as i64),
        ScalarValue::Int16(Some(i)) => Literal::Int(*i as i64),
        ScalarValue::Int32(Some(i)) => Literal::Int(*i as i64),
        ScalarValue::Int64(Some(i)) => Literal::Int(*i),
        ScalarValue::UInt8(Some(i)) => Literal::Int(*i as i64),
        ScalarValue::UInt16(Some(i)) => Literal::Int(*i as i64),
        ScalarValue::UInt32(Some(i)) => Literal::Int(*i as i64),
        ScalarValue::UInt64(Some(i)) => Literal::Int(i64::try_from(*i).ok()?),
        ScalarValue::Float32(Some(f)) => Literal::Float(*f as f64),
        ScalarValue::Float64(Some(f)) => Literal::Float(*f),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Literal::String(s.clone()),
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b)) => Literal::Binary(b.clone()),
        ScalarValue::Date32(Some(d)) => Literal::Date(*d),
        ScalarValue::Decimal128(Some(v), _, s) => Literal::decimal(*v, *s),
        ScalarValue::Time32Second(Some(t)) => Literal::Time(*t as i64 * 1_000_000_000),
        ScalarValue::Time32Millisecond(Some(t)) => Literal::Time(*t as i64 * 1_000_000),
        ScalarValue::Time64Microsecond(Some(t)) => Literal::Time(t * 1_000),
        ScalarValue::Time64Nanosecond(Some(t)) => Literal::Time(*t),
        ScalarValue::TimestampSecond(Some(t), tz) => timestamp(*t, 1_000_000_000, tz),
        ScalarValue::TimestampMillisecond(Some(t), tz) => timestamp(*t, 1_000_000, tz),
        ScalarValue::TimestampMicrosecond(Some(t), tz) => timestamp(*t, 1_000, tz),
        ScalarValue::TimestampNanosecond(Some(t), tz) => timestamp(*t, 1, tz),
        _ => return None,
    })
}

/// The date of a DataFusion `Date32` value.
pub fn date32(days: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(1970, 1, 1)?.checked_add_signed(chrono::Duration::days(days as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    #[test]
    fn converts_what_the_core_evaluates() {
        let e = col("a")
            .gt_eq(lit(900i64))
            .and(col("dt").in_list(vec![lit("x")], false));
        assert_eq!(
            to_core(&e),
            Some(CoreExpr::And(vec![
                CoreExpr::gt_eq("a", 900i64),
                CoreExpr::In {
                    column: "dt".into(),
                    values: vec![Literal::String("x".into())]
                }
            ]))
        );
        // A literal on the left flips the operator.
        assert_eq!(
            to_core(&lit(5i32).lt(col("a"))),
            Some(CoreExpr::gt("a", 5i64))
        );
    }

    #[test]
    fn leaves_the_rest_to_datafusion() {
        // `amount % 2 = 0`: an arithmetic operand has no core form.
        let e = (col("amount") % lit(2i32)).eq(lit(0i32));
        assert_eq!(to_core(&e), None);
        // One unsupported side makes the whole disjunction unsupported.
        let e = col("a").eq(lit(1i64)).or(col("a").eq(col("b")));
        assert_eq!(to_core(&e), None);
        assert_eq!(to_core(&col("s").ilike(lit("x%"))), None);
    }

    #[test]
    fn timestamps_split_into_millis_and_nanos() {
        assert_eq!(split_timestamp(-1, 1), (-1, 999_999));
        assert_eq!(split_timestamp(1_500, 1_000), (1, 500_000));
    }
}
