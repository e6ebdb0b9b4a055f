//! Key bytes and buckets of a table whose `table.datalake.format` is set: Fluss buckets the keys
//! of such a table as its lake does, so a lake reader finds a Fluss bucket's rows in the lake's
//! bucket of the same number (bucketing/BucketingFunction.java, row/encode/KeyEncoder.java).
//!
//! - no format, or `lance`: the compacted key encoding ([`super::key`]) and Fluss's bucketing;
//! - `paimon`: the key columns as a Paimon `BinaryRow` (row/encode/paimon/PaimonBinaryRowWriter:
//!   a header byte with the row kind INSERT, the null bits, one 8-byte slot per column holding
//!   the value, or up to 7 bytes inline with `0x80 | len` in the slot's last byte, or an
//!   `offset << 32 | size` pointer into the 8-byte-aligned variable part), bucketed by
//!   `abs(MurmurHashUtils.hashBytes(bytes) % n)`;
//! - `iceberg`: the one key column in the bytes Iceberg's bucket transform hashes
//!   (row/encode/iceberg/IcebergBinaryRowWriter: ints, dates and longs as 8-byte little-endian
//!   longs, TIME and TIMESTAMP in microseconds, decimals as the minimal big-endian unscaled bytes,
//!   strings and binaries as their bytes), bucketed by
//!   `(murmur3_32(bytes, seed 0) & i32::MAX) % n`.
//!
//! Which columns get which encoding is [`TableKeys::of`], the one place that reads the table's
//! format and `table.kv.format-version`: writers (upsert, delete, keyed append), point lookups and
//! prefix lookups all take their key bytes and buckets from it.

use arrow_array::RecordBatch;

use crate::error::{Error, Result};
use crate::metadata::{DataType, Schema, TableDescriptor, TypeKind};

use super::binary::{check_decimal, decimal_to_bytes, mismatch, timestamp_parts};
use super::bucketing::{fluss_bucket, iceberg_bucket, paimon_bucket};
use super::{arrow_rows::datum_from_array, Datum};

/// How a table's keys are encoded and bucketed: Fluss's own way, or its data lake's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyFormat {
    /// Compacted key bytes and Fluss's bucketing (no lake format, or `lance`).
    Fluss,
    /// Paimon `BinaryRow` key bytes and Paimon's bucketing.
    Paimon,
    /// Iceberg's single-column key bytes and Iceberg's bucket transform.
    Iceberg,
}

impl KeyFormat {
    /// The key format of a `table.datalake.format` value (None: no lake format). A format
    /// Fluss has no bucketing for is an `Unsupported` error naming it.
    pub fn parse(format: Option<&str>) -> Result<KeyFormat> {
        let Some(f) = format else {
            return Ok(KeyFormat::Fluss);
        };
        match f.trim().to_ascii_lowercase().as_str() {
            "lance" => Ok(KeyFormat::Fluss),
            "paimon" => Ok(KeyFormat::Paimon),
            "iceberg" => Ok(KeyFormat::Iceberg),
            other => Err(Error::unsupported(format!(
                "keys of data lake format '{other}' (table.datalake.format) cannot be encoded \
                 or bucketed: Fluss defines them for paimon, iceberg and lance only"
            ))),
        }
    }

    /// The key format of a table (its `table.datalake.format`).
    pub fn of(d: &TableDescriptor) -> Result<KeyFormat> {
        KeyFormat::parse(d.datalake_format().as_deref())
    }

    /// The bucket of key bytes of this format among `num_buckets` (positive) buckets.
    pub fn bucket(self, key: &[u8], num_buckets: i32) -> Result<i32> {
        if num_buckets <= 0 {
            return Err(Error::invalid(format!(
                "number of buckets must be positive, got {num_buckets}"
            )));
        }
        if key.is_empty() {
            return Err(Error::invalid("bucket key bytes must not be empty"));
        }
        Ok(match self {
            KeyFormat::Fluss => fluss_bucket(key, num_buckets),
            KeyFormat::Paimon => paimon_bucket(key, num_buckets),
            KeyFormat::Iceberg => iceberg_bucket(key, num_buckets),
        })
    }

    /// Checks that this format can encode keys of these columns (as Fluss's encoders check when
    /// they are created): Iceberg takes exactly one column, and each format its own types.
    fn check_columns(self, names: &[String], types: &[DataType]) -> Result<()> {
        if self == KeyFormat::Iceberg && types.len() != 1 {
            return Err(Error::unsupported(format!(
                "Key fields must have exactly one field for iceberg format, but got: {names:?}"
            )));
        }
        for (n, t) in names.iter().zip(types) {
            let ok = match self {
                KeyFormat::Fluss => true,
                KeyFormat::Paimon => !matches!(
                    t.kind,
                    TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
                ),
                KeyFormat::Iceberg => matches!(
                    t.kind,
                    TypeKind::Int
                        | TypeKind::Date
                        | TypeKind::Time { .. }
                        | TypeKind::BigInt
                        | TypeKind::Float
                        | TypeKind::Double
                        | TypeKind::Timestamp { .. }
                        | TypeKind::Decimal { .. }
                        | TypeKind::Char { .. }
                        | TypeKind::String
                        | TypeKind::Binary { .. }
                        | TypeKind::Bytes
                ),
            };
            if !ok {
                return Err(Error::unsupported(format!(
                    "key column '{n}' of type {t} cannot be a key of a {self:?} lake table"
                )));
            }
        }
        Ok(())
    }

    /// Encodes key values (projected to the key columns, in key order).
    fn encode(self, types: &[DataType], values: &[Datum], names: &[String]) -> Result<Vec<u8>> {
        if types.len() != values.len() {
            return Err(Error::invalid(format!(
                "key has {} values but {} key columns",
                values.len(),
                types.len()
            )));
        }
        match self {
            KeyFormat::Fluss => super::key::encode_key_named(types, values, Some(names)),
            KeyFormat::Paimon => paimon_key(types, values, names),
            KeyFormat::Iceberg => iceberg_key(types, values, names),
        }
    }
}

fn name_of(names: &[String], pos: usize) -> String {
    names.get(pos).cloned().unwrap_or_else(|| format!("#{pos}"))
}

/// Paimon's `BinaryRow` of the key values (PaimonKeyEncoder).
fn paimon_key(types: &[DataType], values: &[Datum], names: &[String]) -> Result<Vec<u8>> {
    const HEADER_BITS: usize = 8;
    let arity = types.len();
    let null_bytes = (arity + 63 + HEADER_BITS) / 64 * 8;
    let mut buf = vec![0u8; null_bytes + 8 * arity];
    // buf[0] is the row kind: INSERT (0).
    for (pos, (t, v)) in types.iter().zip(values).enumerate() {
        let slot = null_bytes + 8 * pos;
        let at = |e: Error| e.context(format!("key column '{}'", name_of(names, pos)));
        if v.is_null() {
            if !t.nullable {
                return Err(Error::invalid(format!(
                    "key column '{}' is NOT NULL ({t}) but its value is null",
                    name_of(names, pos)
                )));
            }
            let bit = pos + HEADER_BITS;
            buf[bit / 8] |= 1 << (bit % 8);
            continue;
        }
        let mut put = |bytes: &[u8]| buf[slot..slot + bytes.len()].copy_from_slice(bytes);
        match (&t.kind, v) {
            (TypeKind::Boolean, Datum::Boolean(b)) => put(&[*b as u8]),
            (TypeKind::TinyInt, Datum::TinyInt(x)) => put(&[*x as u8]),
            (TypeKind::SmallInt, Datum::SmallInt(x)) => put(&x.to_le_bytes()),
            (TypeKind::Int, Datum::Int(x))
            | (TypeKind::Date, Datum::Date(x))
            | (TypeKind::Time { .. }, Datum::Time(x)) => put(&x.to_le_bytes()),
            (TypeKind::BigInt, Datum::BigInt(x)) => put(&x.to_le_bytes()),
            (TypeKind::Float, Datum::Float(x)) => put(&x.to_le_bytes()),
            (TypeKind::Double, Datum::Double(x)) => put(&x.to_le_bytes()),
            (TypeKind::Char { .. } | TypeKind::String, Datum::String(s)) => {
                paimon_bytes(&mut buf, slot, s.as_bytes())
            }
            (TypeKind::Binary { .. } | TypeKind::Bytes, Datum::Binary(b)) => {
                paimon_bytes(&mut buf, slot, b)
            }
            (TypeKind::Decimal { .. }, _) => {
                let unscaled = check_decimal(t, v).map_err(at)?;
                if t.is_compact_decimal() {
                    let l = i64::try_from(unscaled).map_err(|_| at(mismatch(t, v)))?;
                    put(&l.to_le_bytes());
                } else {
                    // 16 bytes of the variable part hold the big-endian unscaled bytes.
                    let bytes = decimal_to_bytes(unscaled);
                    let offset = buf.len();
                    buf.resize(offset + 16, 0);
                    buf[offset..offset + bytes.len()].copy_from_slice(&bytes);
                    set_offset_and_size(&mut buf, slot, offset, bytes.len() as u64);
                }
            }
            (TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. }, _) => {
                let (millis, nanos, compact) = timestamp_parts(t, v).map_err(at)?;
                if compact {
                    put(&millis.to_le_bytes());
                } else {
                    // The millis in the variable part, the nanos of the milli as the "size".
                    let offset = buf.len();
                    buf.extend_from_slice(&millis.to_le_bytes());
                    set_offset_and_size(&mut buf, slot, offset, nanos as u32 as u64);
                }
            }
            _ => return Err(at(mismatch(t, v))),
        }
    }
    Ok(buf)
}

/// A string or binary value: up to 7 bytes inline in the slot (its last byte `0x80 | len`),
/// longer ones in the variable part, padded to a multiple of 8 bytes.
fn paimon_bytes(buf: &mut Vec<u8>, slot: usize, bytes: &[u8]) {
    let len = bytes.len();
    if len <= 7 {
        buf[slot..slot + len].copy_from_slice(bytes);
        buf[slot + 7] = 0x80 | len as u8;
    } else {
        let offset = buf.len();
        buf.extend_from_slice(bytes);
        buf.resize(offset + len.div_ceil(8) * 8, 0);
        set_offset_and_size(buf, slot, offset, len as u64);
    }
}

fn set_offset_and_size(buf: &mut [u8], slot: usize, offset: usize, size: u64) {
    let v = ((offset as u64) << 32) | size;
    buf[slot..slot + 8].copy_from_slice(&v.to_le_bytes());
}

/// The bytes Iceberg's bucket transform hashes for the one key value (IcebergKeyEncoder).
fn iceberg_key(types: &[DataType], values: &[Datum], names: &[String]) -> Result<Vec<u8>> {
    let (Some(t), Some(v)) = (types.first(), values.first()) else {
        return Err(Error::invalid("an iceberg key needs one column"));
    };
    let at = |e: Error| e.context(format!("key column '{}'", name_of(names, 0)));
    if v.is_null() {
        return Err(Error::invalid(format!(
            "key column '{}' ({t}) is null: an iceberg bucket key cannot be null",
            name_of(names, 0)
        )));
    }
    Ok(match (&t.kind, v) {
        (TypeKind::Int, Datum::Int(x)) | (TypeKind::Date, Datum::Date(x)) => {
            i64::from(*x).to_le_bytes().to_vec()
        }
        (TypeKind::Time { .. }, Datum::Time(ms)) => (i64::from(*ms) * 1000).to_le_bytes().to_vec(),
        (TypeKind::BigInt, Datum::BigInt(x)) => x.to_le_bytes().to_vec(),
        (TypeKind::Float, Datum::Float(x)) => x.to_le_bytes().to_vec(),
        (TypeKind::Double, Datum::Double(x)) => x.to_le_bytes().to_vec(),
        (TypeKind::Timestamp { .. }, Datum::Timestamp(ts)) => {
            let micros = ts
                .millis
                .checked_mul(1000)
                .and_then(|m| m.checked_add(i64::from(ts.nanos_of_milli / 1000)))
                .ok_or_else(|| at(Error::invalid(format!("timestamp {ts:?} out of range"))))?;
            micros.to_le_bytes().to_vec()
        }
        (TypeKind::Decimal { .. }, _) => decimal_to_bytes(check_decimal(t, v).map_err(at)?),
        (TypeKind::Char { .. } | TypeKind::String, Datum::String(s)) => s.as_bytes().to_vec(),
        (TypeKind::Binary { .. } | TypeKind::Bytes, Datum::Binary(b)) => b.clone(),
        _ => return Err(at(mismatch(t, v))),
    })
}

/// Encodes the key columns of a table's rows in one [`KeyFormat`]; errors name the column.
#[derive(Debug, Clone)]
pub struct KeyEncoder {
    format: KeyFormat,
    indexes: Vec<usize>,
    names: Vec<String>,
    types: Vec<DataType>,
}

impl KeyEncoder {
    /// An encoder of `key_columns` (in key order) of `schema`; fails, as Fluss's encoders do
    /// when created, for columns the format cannot encode.
    pub fn new(format: KeyFormat, schema: &Schema, key_columns: &[String]) -> Result<Self> {
        let indexes = schema.indexes_of(key_columns)?;
        let types: Vec<DataType> = indexes
            .iter()
            .map(|&i| schema.columns[i].data_type.clone())
            .collect();
        format.check_columns(key_columns, &types)?;
        Ok(KeyEncoder {
            format,
            indexes,
            names: key_columns.to_vec(),
            types,
        })
    }

    /// The encoding.
    pub fn format(&self) -> KeyFormat {
        self.format
    }

    /// Key column indexes in the table's rows, in key order.
    pub fn columns(&self) -> &[usize] {
        &self.indexes
    }

    /// Key column types, in key order.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// Encodes key values already projected to the key columns (in key order).
    pub fn encode_values(&self, values: &[Datum]) -> Result<Vec<u8>> {
        self.format.encode(&self.types, values, &self.names)
    }

    /// Encodes the key of a full row of the table.
    pub fn encode_row(&self, row: &[Datum]) -> Result<Vec<u8>> {
        let values = self
            .indexes
            .iter()
            .map(|&i| {
                row.get(i).cloned().ok_or_else(|| {
                    Error::invalid(format!(
                        "row has {} values, key column {i} missing",
                        row.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.encode_values(&values)
    }

    /// Encodes the key of every row of a record batch whose columns follow the table's schema.
    pub fn encode_batch(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>> {
        if self.format == KeyFormat::Fluss {
            return super::key::encode_keys_from_batch(batch, &self.indexes, &self.types);
        }
        for &c in &self.indexes {
            if c >= batch.num_columns() {
                return Err(Error::invalid(format!(
                    "key column index {c} out of range for a {}-column batch",
                    batch.num_columns()
                )));
            }
        }
        (0..batch.num_rows())
            .map(|r| {
                let values = self
                    .indexes
                    .iter()
                    .zip(&self.types)
                    .map(|(&c, t)| datum_from_array(batch.column(c).as_ref(), r, t))
                    .collect::<Result<Vec<_>>>()?;
                self.encode_values(&values)
                    .map_err(|e| e.context(format!("row {r}")))
            })
            .collect()
    }
}

/// A table's key encoders and bucketing, as Fluss's writers and lookupers choose them from the
/// table's `table.datalake.format` and `table.kv.format-version` (KeyEncoder.ofPrimaryKeyEncoder
/// and ofBucketKeyEncoder, BucketingFunction.of).
#[derive(Debug, Clone)]
pub struct TableKeys {
    format: KeyFormat,
    primary: Option<KeyEncoder>,
    bucket: Option<KeyEncoder>,
    prefix: Option<KeyEncoder>,
    bucket_is_primary: bool,
}

impl TableKeys {
    /// The key encoders and bucketing of a table:
    /// - the bucket key (the table's, or by default its primary key minus partition keys) is
    ///   always encoded in the table's [`KeyFormat`] and hashed by it;
    /// - the primary key (minus partition keys) the server stores and looks up is encoded in the
    ///   lake's format when the table's `table.kv.format-version` is 1 (or unset: tables older
    ///   than the option), or when it is 2 and the bucket key is the primary key; otherwise
    ///   (version 2 with a bucket key that is a prefix of the primary key) compacted, so a
    ///   prefix lookup's key bytes are a prefix of the primary key's;
    /// - a prefix lookup's key (the bucket key) is encoded as the primary key is.
    pub fn of(d: &TableDescriptor) -> Result<TableKeys> {
        let format = KeyFormat::of(d)?;
        let schema = &d.schema;
        let bucket_keys = d.effective_bucket_keys();
        let physical_pk: Option<Vec<String>> = schema.primary_key.as_ref().map(|pk| {
            pk.iter()
                .filter(|k| !d.partition_keys.contains(k))
                .cloned()
                .collect()
        });
        let bucket_is_primary = match &physical_pk {
            Some(pk) => *pk == bucket_keys,
            None => bucket_keys.is_empty(),
        };
        let kv_version = match d.property("table.kv.format-version") {
            None => 1,
            Some(v) => v.trim().parse::<i32>().map_err(|_| {
                Error::invalid(format!(
                    "table.kv.format-version '{v}' of the table is not a number"
                ))
            })?,
        };
        // The format of the primary key (and of a prefix lookup's key).
        let pk_format = match (kv_version, physical_pk.is_some()) {
            (_, false) => format,
            (1, true) => format,
            (2, true) if bucket_is_primary => format,
            (2, true) => KeyFormat::Fluss,
            (v, true) => {
                return Err(Error::unsupported(format!(
                    "Unsupported kv format version: {v} (table.kv.format-version)"
                )))
            }
        };
        let primary = physical_pk
            .as_ref()
            .map(|pk| KeyEncoder::new(pk_format, schema, pk))
            .transpose()
            .map_err(|e| e.context("primary key"))?;
        let bucket = if bucket_keys.is_empty() {
            None
        } else if bucket_is_primary && primary.is_some() {
            primary.clone()
        } else {
            Some(
                KeyEncoder::new(format, schema, &bucket_keys)
                    .map_err(|e| e.context("bucket key"))?,
            )
        };
        let prefix = if physical_pk.is_some() && !bucket_is_primary && !bucket_keys.is_empty() {
            Some(
                KeyEncoder::new(pk_format, schema, &bucket_keys)
                    .map_err(|e| e.context("prefix lookup key"))?,
            )
        } else {
            None
        };
        Ok(TableKeys {
            format,
            primary,
            bucket,
            prefix,
            bucket_is_primary,
        })
    }

    /// The table's key format (its lake's, or Fluss's).
    pub fn format(&self) -> KeyFormat {
        self.format
    }

    /// The primary-key encoder (None for a log table).
    pub fn primary(&self) -> Option<&KeyEncoder> {
        self.primary.as_ref()
    }

    /// The bucket-key encoder (None when the table has no bucket key).
    pub fn bucket_key(&self) -> Option<&KeyEncoder> {
        self.bucket.as_ref()
    }

    /// The encoder of a prefix lookup's key (None when the bucket key is the primary key or the
    /// table has no primary key: no prefix lookup).
    pub fn prefix(&self) -> Option<&KeyEncoder> {
        self.prefix.as_ref()
    }

    /// Whether the bucket key is the primary key minus partition keys (then the primary-key
    /// bytes are also the bucket-key bytes).
    pub fn bucket_is_primary(&self) -> bool {
        self.bucket_is_primary
    }

    /// The bucket of bucket-key bytes among `num_buckets`.
    pub fn bucket_of(&self, bucket_key: &[u8], num_buckets: i32) -> Result<i32> {
        self.format.bucket(bucket_key, num_buckets)
    }
}

#[cfg(test)]
mod tests;
