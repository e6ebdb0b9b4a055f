//! The aggregation merge engine (`table.merge-engine = aggregation`): each non-key column of a
//! primary-key table folds the values written for a key with its aggregate function, as Apache
//! Fluss 0.9 does it (`AggregateRowMerger` and the `Field*Agg` functions).
//!
//! A column's function comes from its schema entry (`agg_function` in the schema JSON; Flink's
//! `'fields.<col>.agg'` options are turned into it by the client). Primary-key columns keep the
//! last value; a column without a function uses `last_value_ignore_nulls`. Functions, with
//! Fluss's null handling:
//! - `sum`, `product` (numeric types), `max`, `min` (numbers, strings, temporal types),
//!   `listagg` / `string_agg` (strings, parameter `delimiter`, default `,`), `bool_and`,
//!   `bool_or`: a null on either side leaves the other side;
//! - `last_value`: the new value, null included; `last_value_ignore_nulls`: the new value
//!   unless it is null;
//! - `first_value`, `first_value_ignore_nulls`: the kept value unless it is null (in Fluss 0.9
//!   both keep the first non-null value).
//!
//! The first write of a key stores the row as written. A partial update aggregates the target
//! columns and keeps the others. A decimal `sum` or `product` that needs more digits than the
//! column's precision gives null, as Fluss's `Decimal.fromBigDecimal`; integer sums wrap like
//! Java arithmetic. `rbm32` (BYTES holding a serialized 32-bit RoaringBitmap in the portable
//! Roaring format) gives the union, run-optimized and serialized again as Fluss's
//! `FieldRoaringBitmap32Agg` does; a null on either side leaves the other side, and bytes that
//! are not a bitmap are an error naming their length. `rbm64` (Java's own `Roaring64Bitmap`
//! serialization, which has no portable specification) is rejected at creation.

use std::cmp::Ordering;

use riverlet::error::codes;
use riverlet::metadata::{DataType, Schema};
use riverlet::row::Datum;
use riverlet::{Error, Result};

/// One column's aggregate function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AggFn {
    /// `sum`.
    Sum,
    /// `product`.
    Product,
    /// `max`.
    Max,
    /// `min`.
    Min,
    /// `last_value`.
    LastValue,
    /// `last_value_ignore_nulls` (the default).
    LastValueIgnoreNulls,
    /// `first_value`.
    FirstValue,
    /// `first_value_ignore_nulls`.
    FirstValueIgnoreNulls,
    /// `listagg` / `string_agg` with its delimiter.
    Listagg(String),
    /// `bool_and`.
    BoolAnd,
    /// `bool_or`.
    BoolOr,
    /// `rbm32`: union of serialized 32-bit RoaringBitmaps.
    Rbm32,
}

/// The type families a function accepts, named as Fluss names them in its error message.
fn supported_roots(name: &str) -> &'static [&'static str] {
    const NUMERIC: &[&str] = &[
        "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL",
    ];
    const ORDERED: &[&str] = &[
        "CHAR",
        "STRING",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL",
        "DATE",
        "TIME_WITHOUT_TIME_ZONE",
        "TIMESTAMP_WITHOUT_TIME_ZONE",
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
    ];
    match name {
        "sum" | "product" => NUMERIC,
        "max" | "min" => ORDERED,
        "listagg" | "string_agg" => &["STRING", "CHAR"],
        "bool_and" | "bool_or" => &["BOOLEAN"],
        _ => &[],
    }
}

fn config_error(column: &str, reason: impl std::fmt::Display) -> Error {
    Error::from_fluss(
        codes::INVALID_CONFIG_EXCEPTION,
        format!("Invalid aggregation function for column '{column}': {reason}"),
    )
}

/// The per-column functions of an aggregation table, checked against the column types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregation {
    functions: Vec<AggFn>,
}

impl Aggregation {
    /// Reads and validates the functions of `schema` (INVALID_CONFIG naming the column on an
    /// unknown function, a parameter it does not take, or a type it does not accept).
    pub fn from_schema(schema: &Schema) -> Result<Aggregation> {
        let pk = schema.primary_key_indexes();
        let mut functions = Vec::with_capacity(schema.columns.len());
        for (i, column) in schema.columns.iter().enumerate() {
            if pk.contains(&i) {
                functions.push(AggFn::LastValue);
                continue;
            }
            let Some(agg) = &column.agg_function else {
                functions.push(AggFn::LastValueIgnoreNulls);
                continue;
            };
            let name = agg.function.trim().to_ascii_lowercase();
            let takes_delimiter = matches!(name.as_str(), "listagg" | "string_agg");
            for (param, value) in &agg.parameters {
                if !(takes_delimiter && param == "delimiter") {
                    return Err(config_error(
                        &column.name,
                        format!(
                            "Parameter '{param}' is not supported for aggregation function \
                             '{name}'. Supported parameters: {}",
                            if takes_delimiter {
                                "[delimiter]"
                            } else {
                                "none"
                            }
                        ),
                    ));
                }
                if value.is_empty() {
                    return Err(config_error(
                        &column.name,
                        format!(
                            "Parameter 'delimiter' for aggregation function '{name}' must be a \
                             non-empty string"
                        ),
                    ));
                }
            }
            let f = match name.as_str() {
                "sum" => AggFn::Sum,
                "product" => AggFn::Product,
                "max" => AggFn::Max,
                "min" => AggFn::Min,
                "last_value" => AggFn::LastValue,
                "last_value_ignore_nulls" => AggFn::LastValueIgnoreNulls,
                "first_value" => AggFn::FirstValue,
                "first_value_ignore_nulls" => AggFn::FirstValueIgnoreNulls,
                "listagg" | "string_agg" => AggFn::Listagg(
                    agg.parameters
                        .iter()
                        .find(|(k, _)| k == "delimiter")
                        .map_or_else(|| ",".to_string(), |(_, v)| v.clone()),
                ),
                "bool_and" => AggFn::BoolAnd,
                "bool_or" => AggFn::BoolOr,
                "rbm32" => AggFn::Rbm32,
                "rbm64" => {
                    return Err(config_error(
                        &column.name,
                        "the aggregation function 'rbm64' (Java's Roaring64Bitmap \
                         serialization) is not supported by the Riverlet embedded server",
                    ))
                }
                other => {
                    return Err(config_error(
                        &column.name,
                        format!(
                            "unknown aggregation function '{other}'; supported: bool_and, \
                             bool_or, first_value, first_value_ignore_nulls, last_value, \
                             last_value_ignore_nulls, listagg, max, min, product, rbm32, \
                             string_agg, sum"
                        ),
                    ))
                }
            };
            if f == AggFn::Rbm32 && column.data_type.type_root_name() != "BYTES" {
                return Err(config_error(
                    &column.name,
                    format!(
                        "Data type for rbm32 column must be 'BytesType' but was '{}'.",
                        column.data_type
                    ),
                ));
            }
            let roots = supported_roots(&name);
            let root = column.data_type.type_root_name();
            if !roots.is_empty() && !roots.contains(&root) {
                return Err(config_error(
                    &column.name,
                    format!(
                        "Data type for {name} column must be part of [{}] but was '{}'.",
                        roots.join(", "),
                        column.data_type
                    ),
                ));
            }
            functions.push(f);
        }
        Ok(Aggregation { functions })
    }

    /// The function of column `i`.
    pub fn function(&self, i: usize) -> Option<&AggFn> {
        self.functions.get(i)
    }

    /// Folds a written row into the stored one: every column (or, for a partial update, every
    /// column of `target`; the others keep their stored value) gets its function's result.
    pub fn merge(
        &self,
        types: &[DataType],
        old: &[Datum],
        new: &[Datum],
        target: Option<&[bool]>,
    ) -> Result<Vec<Datum>> {
        let mut out = Vec::with_capacity(old.len());
        for (i, (acc, input)) in old.iter().zip(new).enumerate() {
            if target.is_some_and(|t| !t.get(i).copied().unwrap_or(false)) {
                out.push(acc.clone());
                continue;
            }
            let f = self
                .functions
                .get(i)
                .unwrap_or(&AggFn::LastValueIgnoreNulls);
            out.push(aggregate(f, &types[i], acc, input)?);
        }
        Ok(out)
    }
}

/// One column's fold of `input` into `acc`.
fn aggregate(f: &AggFn, t: &DataType, acc: &Datum, input: &Datum) -> Result<Datum> {
    match f {
        AggFn::LastValue => return Ok(input.clone()),
        AggFn::LastValueIgnoreNulls => {
            return Ok((if input.is_null() { acc } else { input }).clone())
        }
        AggFn::FirstValue | AggFn::FirstValueIgnoreNulls => {
            return Ok((if acc.is_null() { input } else { acc }).clone())
        }
        _ => {}
    }
    // The remaining functions ignore nulls on either side.
    if acc.is_null() {
        return Ok(input.clone());
    }
    if input.is_null() {
        return Ok(acc.clone());
    }
    let mismatch = || {
        Error::from_fluss(
            codes::UNKNOWN_SERVER_ERROR,
            format!(
                "aggregation {f:?} cannot combine {} and {} for a column of type {t}",
                acc.kind_name(),
                input.kind_name()
            ),
        )
    };
    Ok(match f {
        AggFn::Sum | AggFn::Product => {
            let sum = matches!(f, AggFn::Sum);
            match (acc, input) {
                (Datum::TinyInt(a), Datum::TinyInt(b)) => Datum::TinyInt(if sum {
                    a.wrapping_add(*b)
                } else {
                    a.wrapping_mul(*b)
                }),
                (Datum::SmallInt(a), Datum::SmallInt(b)) => Datum::SmallInt(if sum {
                    a.wrapping_add(*b)
                } else {
                    a.wrapping_mul(*b)
                }),
                (Datum::Int(a), Datum::Int(b)) => Datum::Int(if sum {
                    a.wrapping_add(*b)
                } else {
                    a.wrapping_mul(*b)
                }),
                (Datum::BigInt(a), Datum::BigInt(b)) => Datum::BigInt(if sum {
                    a.wrapping_add(*b)
                } else {
                    a.wrapping_mul(*b)
                }),
                (Datum::Float(a), Datum::Float(b)) => Datum::Float(if sum { a + b } else { a * b }),
                (Datum::Double(a), Datum::Double(b)) => {
                    Datum::Double(if sum { a + b } else { a * b })
                }
                (
                    Datum::Decimal {
                        unscaled: a,
                        precision,
                        scale,
                    },
                    Datum::Decimal { unscaled: b, .. },
                ) => decimal_result(
                    if sum {
                        a.checked_add(*b)
                    } else {
                        a.checked_mul(*b).map(|p| rescale_half_up(p, *scale))
                    },
                    *precision,
                    *scale,
                ),
                _ => return Err(mismatch()),
            }
        }
        AggFn::Max | AggFn::Min => {
            let ord = compare(acc, input).ok_or_else(mismatch)?;
            let keep_input = if matches!(f, AggFn::Max) {
                ord == Ordering::Less
            } else {
                ord == Ordering::Greater
            };
            (if keep_input { input } else { acc }).clone()
        }
        AggFn::Listagg(delimiter) => match (acc, input) {
            (Datum::String(a), Datum::String(b)) => Datum::String(format!("{a}{delimiter}{b}")),
            _ => return Err(mismatch()),
        },
        AggFn::BoolAnd | AggFn::BoolOr => match (acc, input) {
            (Datum::Boolean(a), Datum::Boolean(b)) => {
                Datum::Boolean(if matches!(f, AggFn::BoolAnd) {
                    *a && *b
                } else {
                    *a || *b
                })
            }
            _ => return Err(mismatch()),
        },
        AggFn::Rbm32 => match (acc, input) {
            (Datum::Binary(a), Datum::Binary(b)) => Datum::Binary(rbm32_union(a, b)?),
            _ => return Err(mismatch()),
        },
        AggFn::LastValue
        | AggFn::LastValueIgnoreNulls
        | AggFn::FirstValue
        | AggFn::FirstValueIgnoreNulls => input.clone(),
    })
}

/// The union of two serialized 32-bit RoaringBitmaps, run-optimized and serialized in the
/// portable format (Fluss: `RoaringBitmap.or`, `runOptimize`, `serialize`).
fn rbm32_union(acc: &[u8], input: &[u8]) -> Result<Vec<u8>> {
    let read = |bytes: &[u8], which: &str| {
        roaring::RoaringBitmap::deserialize_from(bytes).map_err(|e| {
            Error::from_fluss(
                codes::UNKNOWN_SERVER_ERROR,
                format!(
                    "rbm32: the {which} value ({} bytes) is not a serialized RoaringBitmap: {e}",
                    bytes.len()
                ),
            )
        })
    };
    let mut union = read(acc, "stored")?;
    union |= read(input, "written")?;
    union.optimize();
    let mut out = Vec::with_capacity(union.serialized_size());
    union
        .serialize_into(&mut out)
        .map_err(|e| Error::from_fluss(codes::UNKNOWN_SERVER_ERROR, format!("rbm32: {e}")))?;
    Ok(out)
}

/// `v` (scaled by `10^(2 * scale)`) back to `scale` digits, rounding half up as BigDecimal does.
fn rescale_half_up(v: i128, scale: u32) -> i128 {
    let Some(d) = 10i128.checked_pow(scale) else {
        return 0;
    };
    if d == 1 {
        return v;
    }
    let q = v / d;
    let r = (v % d).abs();
    if r * 2 >= d {
        q + v.signum()
    } else {
        q
    }
}

/// A decimal result, or null when it needs more digits than the precision (Fluss's
/// `Decimal.fromBigDecimal`), or on overflow.
fn decimal_result(v: Option<i128>, precision: u32, scale: u32) -> Datum {
    let fits = |v: i128| {
        10i128
            .checked_pow(precision)
            .is_none_or(|limit| v.unsigned_abs() < limit.unsigned_abs())
    };
    match v {
        Some(v) if fits(v) => Datum::Decimal {
            unscaled: v,
            precision,
            scale,
        },
        _ => Datum::Null,
    }
}

/// Order of two values of one column (None for values that have no order here).
fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    Some(match (a, b) {
        (Datum::TinyInt(x), Datum::TinyInt(y)) => x.cmp(y),
        (Datum::SmallInt(x), Datum::SmallInt(y)) => x.cmp(y),
        (Datum::Int(x), Datum::Int(y)) => x.cmp(y),
        (Datum::BigInt(x), Datum::BigInt(y)) => x.cmp(y),
        (Datum::Float(x), Datum::Float(y)) => x.total_cmp(y),
        (Datum::Double(x), Datum::Double(y)) => x.total_cmp(y),
        (Datum::Decimal { unscaled: x, .. }, Datum::Decimal { unscaled: y, .. }) => x.cmp(y),
        (Datum::String(x), Datum::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Datum::Date(x), Datum::Date(y)) => x.cmp(y),
        (Datum::Time(x), Datum::Time(y)) => x.cmp(y),
        (Datum::Timestamp(x), Datum::Timestamp(y)) => x.cmp(y),
        (Datum::TimestampLtz(x), Datum::TimestampLtz(y)) => x.cmp(y),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use riverlet::metadata::schema::AggFunction;
    use riverlet::metadata::Column;

    fn agg(name: &str, params: &[(&str, &str)]) -> Option<AggFunction> {
        Some(AggFunction {
            function: name.to_string(),
            parameters: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
    }

    fn schema(cols: Vec<(&str, DataType, Option<AggFunction>)>) -> Schema {
        let columns = cols
            .into_iter()
            .map(|(n, t, a)| {
                let mut c = Column::new(n, t);
                c.agg_function = a;
                c
            })
            .collect();
        Schema::builder()
            .from_columns(columns)
            .primary_key(["id"])
            .build()
            .unwrap()
    }

    #[test]
    fn functions_fold_as_fluss_defines_them() {
        let s = schema(vec![
            ("id", DataType::int(), None),
            ("total", DataType::bigint(), agg("sum", &[])),
            ("hi", DataType::double(), agg("max", &[])),
            ("lo", DataType::string(), agg("min", &[])),
            ("last", DataType::int(), agg("last_value", &[])),
            ("last_nn", DataType::int(), None),
            ("first", DataType::int(), agg("first_value", &[])),
            (
                "tags",
                DataType::string(),
                agg("listagg", &[("delimiter", ";")]),
            ),
            ("all", DataType::boolean(), agg("bool_and", &[])),
            ("any", DataType::boolean(), agg("bool_or", &[])),
            ("amount", DataType::decimal(4, 2), agg("sum", &[])),
        ]);
        let a = Aggregation::from_schema(&s).unwrap();
        let types = s.data_types();
        let s_ = |v: &str| Datum::String(v.into());
        let dec = |v: i128| Datum::Decimal {
            unscaled: v,
            precision: 4,
            scale: 2,
        };
        let old = vec![
            Datum::Int(1),
            Datum::BigInt(10),
            Datum::Double(2.5),
            s_("m"),
            Datum::Int(7),
            Datum::Int(8),
            Datum::Null,
            s_("a"),
            Datum::Boolean(true),
            Datum::Boolean(false),
            dec(9000),
        ];
        let new = vec![
            Datum::Int(1),
            Datum::BigInt(5),
            Datum::Null,
            s_("b"),
            Datum::Null,
            Datum::Null,
            Datum::Int(3),
            s_("b"),
            Datum::Boolean(false),
            Datum::Null,
            dec(1000),
        ];
        assert_eq!(
            a.merge(&types, &old, &new, None).unwrap(),
            vec![
                Datum::Int(1),
                Datum::BigInt(15),
                Datum::Double(2.5),
                s_("b"),
                Datum::Null,
                Datum::Int(8),
                Datum::Int(3),
                s_("a;b"),
                Datum::Boolean(false),
                Datum::Boolean(false),
                // 90.00 + 10.00 needs 5 digits: null, as Fluss.
                Datum::Null,
            ]
        );
        // A partial update folds only its columns.
        let mut target = vec![false; old.len()];
        target[0] = true;
        target[1] = true;
        let merged = a.merge(&types, &old, &new, Some(&target)).unwrap();
        assert_eq!(merged[1], Datum::BigInt(15));
        assert_eq!(merged[2..], old[2..]);
        // Integer sums wrap as Java's do.
        assert_eq!(
            aggregate(
                &AggFn::Sum,
                &DataType::int(),
                &Datum::Int(i32::MAX),
                &Datum::Int(1)
            )
            .unwrap(),
            Datum::Int(i32::MIN)
        );
        assert_eq!(rescale_half_up(12345, 2), 123);
        assert_eq!(rescale_half_up(12350, 2), 124);
        assert_eq!(rescale_half_up(-12350, 2), -124);
    }

    #[test]
    fn rbm32_unions_bitmaps_as_the_fluss_docs_state() {
        // Fluss 0.9.1's aggregation page: {1,2} and {2,3} give {1,2,3}, with these bytes.
        let hex = |h: &str| {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect::<Vec<u8>>()
        };
        let a = Datum::Binary(hex("3A30000001000000000001001000000001000200"));
        let b = Datum::Binary(hex("3A30000001000000000001001000000002000300"));
        let t = DataType::bytes();
        assert_eq!(
            aggregate(&AggFn::Rbm32, &t, &a, &b).unwrap(),
            Datum::Binary(hex("3A300000010000000000020010000000010002000300"))
        );
        assert_eq!(aggregate(&AggFn::Rbm32, &t, &a, &Datum::Null).unwrap(), a);
        assert_eq!(aggregate(&AggFn::Rbm32, &t, &Datum::Null, &b).unwrap(), b);
        let e = aggregate(&AggFn::Rbm32, &t, &a, &Datum::Binary(vec![1, 2, 3])).unwrap_err();
        assert!(e.message().contains("written value (3 bytes)"), "{e}");
    }

    #[test]
    fn bad_functions_are_rejected_naming_the_column() {
        let bad = [
            (
                DataType::string(),
                agg("sum", &[]),
                "Data type for sum column",
            ),
            (
                DataType::int(),
                agg("median", &[]),
                "unknown aggregation function 'median'",
            ),
            (
                DataType::int(),
                agg("max", &[("delimiter", ",")]),
                "Parameter 'delimiter'",
            ),
            (
                DataType::string(),
                agg("listagg", &[("delimiter", "")]),
                "non-empty",
            ),
            (DataType::bytes(), agg("rbm64", &[]), "Roaring64Bitmap"),
            (
                DataType::string(),
                agg("rbm32", &[]),
                "Data type for rbm32 column must be 'BytesType'",
            ),
        ];
        for (t, f, needle) in bad {
            let s = schema(vec![("id", DataType::int(), None), ("v", t, f)]);
            let e = Aggregation::from_schema(&s).unwrap_err();
            assert_eq!(e.fluss_code(), Some(codes::INVALID_CONFIG_EXCEPTION));
            assert!(e.message().contains("column 'v'"), "{e}");
            assert!(e.message().contains(needle), "{e}");
        }
    }
}
