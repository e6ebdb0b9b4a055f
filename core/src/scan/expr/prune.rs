//! Partition pruning: which partitions can hold rows matching an [`Expr`], decided from the
//! partition values alone.

use super::types::date_from_days;
use super::{CompareOp, Expr, Literal};

/// Three-valued answer of a predicate over what is known about a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Unknown,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// Whether a partition with these partition-column values can hold rows matching `expr`.
///
/// `partition_keys[i]` has the value `values[i]` (Fluss's partition value text). Only `=`, `!=`
/// and `IN` / `NOT IN` on partition columns (combined with AND / OR / NOT) decide; anything else
/// counts as "maybe", so a partition is dropped only when it certainly cannot match.
pub fn partition_may_match(expr: &Expr, partition_keys: &[String], values: &[String]) -> bool {
    partition_tri(expr, partition_keys, values) != Tri::False
}

fn partition_tri(expr: &Expr, keys: &[String], values: &[String]) -> Tri {
    let value_of = |column: &str| -> Option<&str> {
        keys.iter()
            .position(|k| k == column)
            .and_then(|i| values.get(i))
            .map(String::as_str)
    };
    let eq = |column: &str, lit: &Literal| -> Tri {
        match (value_of(column), lit) {
            (None, _) => Tri::Unknown,
            // NULL = x is never true; as a whole the row is dropped, so "false" is safe.
            (Some(_), Literal::Null) => Tri::False,
            (Some(v), lit) => match lit.partition_text() {
                Some(text) if text == v => Tri::True,
                Some(text) => {
                    // Integers may be written with a sign or leading zeros; only answer when the
                    // partition value reads back to the same canonical text.
                    if let (Literal::Int(_), Ok(parsed)) = (lit, v.parse::<i64>()) {
                        if parsed.to_string() == text {
                            return Tri::True;
                        }
                        return Tri::False;
                    }
                    if matches!(lit, Literal::Boolean(_)) && v.eq_ignore_ascii_case(&text) {
                        return Tri::True;
                    }
                    if matches!(lit, Literal::Int(_)) {
                        return Tri::Unknown;
                    }
                    Tri::False
                }
                None => Tri::Unknown,
            },
        }
    };
    let in_list = |column: &str, list: &[Literal]| -> Tri {
        let mut any_unknown = false;
        for lit in list {
            match eq(column, lit) {
                Tri::True => return Tri::True,
                Tri::Unknown => any_unknown = true,
                Tri::False => {}
            }
        }
        if any_unknown {
            Tri::Unknown
        } else {
            Tri::False
        }
    };
    match expr {
        Expr::Compare {
            column,
            op: CompareOp::Eq,
            value,
        } => eq(column, value),
        Expr::Compare {
            column,
            op: CompareOp::NotEq,
            value,
        } => match value {
            Literal::Null if value_of(column).is_some() => Tri::False,
            _ => eq(column, value).not(),
        },
        Expr::In { column, values } => in_list(column, values),
        Expr::NotIn { column, values } => {
            if value_of(column).is_some() && values.iter().any(|v| matches!(v, Literal::Null)) {
                return Tri::False;
            }
            in_list(column, values).not()
        }
        Expr::And(parts) => {
            let mut out = Tri::True;
            for p in parts {
                match partition_tri(p, keys, values) {
                    Tri::False => return Tri::False,
                    Tri::Unknown => out = Tri::Unknown,
                    Tri::True => {}
                }
            }
            out
        }
        Expr::Or(parts) => {
            let mut out = Tri::False;
            for p in parts {
                match partition_tri(p, keys, values) {
                    Tri::True => return Tri::True,
                    Tri::Unknown => out = Tri::Unknown,
                    Tri::False => {}
                }
            }
            out
        }
        Expr::Not(e) => partition_tri(e, keys, values).not(),
        _ => Tri::Unknown,
    }
}

/// Keeps the partitions that may hold rows matching `expr`; `values_of` gives a partition's
/// values in the order of `partition_keys`.
pub fn prune_partitions<P, F>(
    partition_keys: &[String],
    partitions: impl IntoIterator<Item = P>,
    expr: &Expr,
    values_of: F,
) -> Vec<P>
where
    F: Fn(&P) -> Vec<String>,
{
    partitions
        .into_iter()
        .filter(|p| partition_may_match(expr, partition_keys, &values_of(p)))
        .collect()
}

impl Literal {
    /// The literal rendered as a partition value would be (None when it has no plain text form).
    fn partition_text(&self) -> Option<String> {
        match self {
            Literal::Boolean(b) => Some(b.to_string()),
            Literal::Int(i) => Some(i.to_string()),
            Literal::String(s) => Some(s.clone()),
            Literal::Date(d) => date_from_days(*d).map(|d| d.format("%Y-%m-%d").to_string()),
            _ => None,
        }
    }
}
