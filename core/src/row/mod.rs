//! Row values and Fluss's binary row encodings: CompactedRow, IndexedRow, compacted keys,
//! bucket assignment (Fluss's, and Paimon's and Iceberg's for lake-formatted tables), KV values,
//! and conversion between Arrow record batches and rows.

pub mod arrow_rows;
pub(crate) mod binary;
pub mod bucketing;
pub mod compacted;
pub mod indexed;
pub mod key;
pub mod lake_key;
pub mod partition_value;
pub mod value;

pub use arrow_rows::{datum_from_array, record_batch_to_rows, rows_to_record_batch};
pub use bucketing::{
    fluss_bucket, iceberg_bucket, paimon_bucket, BucketingFunction, FlussBucketingFunction,
    IcebergBucketingFunction, PaimonBucketingFunction,
};
pub use compacted::{decode_compacted_row, encode_compacted_row};
pub use indexed::{decode_indexed_row, encode_indexed_row};
pub use key::{encode_key, encode_keys_from_batch, CompactedKeyEncoder};
pub use lake_key::{KeyEncoder, KeyFormat, TableKeys};
pub use value::{decode_value, encode_value};

/// A timestamp without time zone: epoch millis of the wall-clock time plus sub-milli nanos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TimestampNtz {
    /// Milliseconds since 1970-01-01T00:00:00 (wall clock).
    pub millis: i64,
    /// Nanoseconds within the millisecond, 0..=999_999.
    pub nanos_of_milli: i32,
}

impl TimestampNtz {
    /// A timestamp with whole milliseconds.
    pub fn from_millis(millis: i64) -> Self {
        TimestampNtz {
            millis,
            nanos_of_milli: 0,
        }
    }
}

/// An instant: epoch millis (UTC) plus sub-milli nanos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TimestampLtz {
    /// Milliseconds since the epoch.
    pub epoch_millis: i64,
    /// Nanoseconds within the millisecond, 0..=999_999.
    pub nanos_of_milli: i32,
}

impl TimestampLtz {
    /// An instant with whole milliseconds.
    pub fn from_millis(epoch_millis: i64) -> Self {
        TimestampLtz {
            epoch_millis,
            nanos_of_milli: 0,
        }
    }
}

/// One value of a row, in Fluss's internal representation.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// SQL NULL.
    Null,
    /// BOOLEAN.
    Boolean(bool),
    /// TINYINT.
    TinyInt(i8),
    /// SMALLINT.
    SmallInt(i16),
    /// INT.
    Int(i32),
    /// BIGINT.
    BigInt(i64),
    /// FLOAT.
    Float(f32),
    /// DOUBLE.
    Double(f64),
    /// DECIMAL: the unscaled integer and the type's precision and scale.
    Decimal {
        /// Unscaled value (value = unscaled / 10^scale).
        unscaled: i128,
        /// Precision of the decimal type.
        precision: u32,
        /// Scale of the decimal type.
        scale: u32,
    },
    /// CHAR / STRING.
    String(String),
    /// BINARY / BYTES.
    Binary(Vec<u8>),
    /// DATE: days since 1970-01-01.
    Date(i32),
    /// TIME: milliseconds of the day.
    Time(i32),
    /// TIMESTAMP (without time zone).
    Timestamp(TimestampNtz),
    /// TIMESTAMP_LTZ.
    TimestampLtz(TimestampLtz),
    /// ARRAY.
    Array(Vec<Datum>),
    /// MAP as ordered (key, value) entries.
    Map(Vec<(Datum, Datum)>),
    /// ROW (nested).
    Row(Vec<Datum>),
}

impl Datum {
    /// Whether this is [`Datum::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// A short name of the variant, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Datum::Null => "NULL",
            Datum::Boolean(_) => "Boolean",
            Datum::TinyInt(_) => "TinyInt",
            Datum::SmallInt(_) => "SmallInt",
            Datum::Int(_) => "Int",
            Datum::BigInt(_) => "BigInt",
            Datum::Float(_) => "Float",
            Datum::Double(_) => "Double",
            Datum::Decimal { .. } => "Decimal",
            Datum::String(_) => "String",
            Datum::Binary(_) => "Binary",
            Datum::Date(_) => "Date",
            Datum::Time(_) => "Time",
            Datum::Timestamp(_) => "Timestamp",
            Datum::TimestampLtz(_) => "TimestampLtz",
            Datum::Array(_) => "Array",
            Datum::Map(_) => "Map",
            Datum::Row(_) => "Row",
        }
    }
}

impl From<bool> for Datum {
    fn from(v: bool) -> Self {
        Datum::Boolean(v)
    }
}
impl From<i8> for Datum {
    fn from(v: i8) -> Self {
        Datum::TinyInt(v)
    }
}
impl From<i16> for Datum {
    fn from(v: i16) -> Self {
        Datum::SmallInt(v)
    }
}
impl From<i32> for Datum {
    fn from(v: i32) -> Self {
        Datum::Int(v)
    }
}
impl From<i64> for Datum {
    fn from(v: i64) -> Self {
        Datum::BigInt(v)
    }
}
impl From<f32> for Datum {
    fn from(v: f32) -> Self {
        Datum::Float(v)
    }
}
impl From<f64> for Datum {
    fn from(v: f64) -> Self {
        Datum::Double(v)
    }
}
impl From<&str> for Datum {
    fn from(v: &str) -> Self {
        Datum::String(v.to_string())
    }
}
impl From<String> for Datum {
    fn from(v: String) -> Self {
        Datum::String(v)
    }
}
impl From<Vec<u8>> for Datum {
    fn from(v: Vec<u8>) -> Self {
        Datum::Binary(v)
    }
}
impl<T: Into<Datum>> From<Option<T>> for Datum {
    fn from(v: Option<T>) -> Self {
        v.map_or(Datum::Null, Into::into)
    }
}

#[cfg(test)]
pub(crate) mod test_support;
