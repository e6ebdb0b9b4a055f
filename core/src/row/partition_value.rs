//! The text of a partition value (the part of a partition name one column contributes), as
//! writers name partitions and lookups find them; names are joined by
//! [`PartitionSpec::partition_name`](crate::metadata::PartitionSpec::partition_name).

use crate::metadata::TablePath;
use crate::row::Datum;
use crate::{Error, Result};

/// The partition value text of one value.
pub fn datum_partition_value(path: &TablePath, name: &str, d: &Datum) -> Result<String> {
    Ok(match d {
        Datum::Null => crate::bail_invalid!(
            "partition column '{name}' of table '{path}' is null; partition values must not be null"
        ),
        Datum::String(s) => s.clone(),
        Datum::Boolean(b) => b.to_string(),
        Datum::TinyInt(v) => v.to_string(),
        Datum::SmallInt(v) => v.to_string(),
        Datum::Int(v) => v.to_string(),
        Datum::BigInt(v) => v.to_string(),
        Datum::Date(d) => day_string(*d),
        Datum::Binary(b) => hex(b),
        _ => {
            return Err(Error::unsupported(format!(
                "partition column '{name}' of table '{path}' has a type Riverlet cannot turn into a partition value yet"
            )))
        }
    })
}

/// A `DATE` (days since 1970-01-01) as partition value text: `yyyy-MM-dd` (the day count
/// itself when out of chrono's range).
pub fn day_string(days: i32) -> String {
    chrono::NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|e| e.checked_add_signed(chrono::Duration::days(days as i64)))
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| days.to_string())
}

/// Bytes as partition value text: lower-case hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
