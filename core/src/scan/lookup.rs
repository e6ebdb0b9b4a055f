//! [`Lookuper`]: point lookups by primary key and prefix lookups by bucket key, batched per
//! bucket.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;

use super::reader::{table_name, values_to_batch};
use crate::client::Table;
use crate::error::codes;
use crate::metadata::PartitionSpec;
use crate::proto::{
    LookupRequest, PbLookupReqForBucket, PbPrefixLookupReqForBucket, PrefixLookupRequest,
};
use crate::row::Datum;
use crate::{Error, Result};

/// Name of the key-index column of [`Lookuper::lookup_with_key_index`] (INT32: the row of the
/// keys batch each found row answers).
pub const KEY_INDEX_COLUMN: &str = "_key_index";

/// Looks rows of a primary-key table up by key.
#[derive(Debug, Clone)]
pub struct Lookuper {
    table: Table,
    /// Primary-key column indexes, in primary-key order.
    pk_cols: Vec<usize>,
    /// Encoded-key columns (the primary key minus partition keys) as positions in `pk_cols`.
    key_pos: Vec<usize>,
    /// Bucket-key columns (table indexes).
    bucket_cols: Vec<usize>,
    /// The primary-key, bucket-key and prefix-key encoders and the bucketing (Fluss's, or the
    /// table's lake format's).
    keys: crate::row::TableKeys,
    /// Partition-key column indexes, in partition-key order.
    partition_cols: Vec<usize>,
    /// Prefix-lookup columns (table indexes, schema order): partition keys and bucket keys.
    prefix_cols: Vec<usize>,
    /// Missing keys are inserted by the server (see [`Lookuper::insert_if_not_exists`]).
    insert_if_not_exists: bool,
}

type Group = (Option<i64>, i32);

impl Lookuper {
    /// How long a lookup keeps asking while its bucket's leader is changing or unreachable:
    /// as long as a write may take to be delivered (`client.writer.delivery-timeout`, 120 s),
    /// so a lookup beside a writer outlasts the same failover the writer does.
    fn retry_limit(&self) -> std::time::Duration {
        self.table.conn.config().writer.delivery_timeout
    }

    /// Sends a one-bucket lookup request to the bucket's leader and returns the bucket's
    /// answer, retrying while the leader is changing or unreachable ([`Lookuper::retry_limit`]);
    /// a bucket-level error is returned as an error naming the table and bucket.
    async fn ask_leader<R: crate::rpc::RpcRequest, B>(
        &self,
        pid: Option<i64>,
        bucket: i32,
        req: &R,
        api: &str,
        buckets: impl Fn(R::Response) -> Vec<B>,
        error: impl Fn(&B) -> (Option<i32>, Option<String>),
    ) -> Result<B> {
        let table_id = self.table.info.table_id;
        let limit = self.retry_limit();
        self.table
            .conn
            .read_from_leader(table_id, pid, bucket, req, limit, |resp| {
                let b = buckets(resp).into_iter().next().ok_or_else(|| {
                    Error::corrupt(format!("{api} response without a bucket result"))
                })?;
                let (code, message) = error(&b);
                check_bucket_error(&self.table, code, message, bucket)?;
                Ok(b)
            })
            .await
    }

    pub(crate) fn new(table: Table) -> Result<Lookuper> {
        let info = table.info.clone();
        let d = &info.descriptor;
        if !d.has_primary_key() {
            crate::bail_invalid!(
                "table '{}' has no primary key; lookups need a primary-key table",
                info.table_path
            );
        }
        let schema = info.schema();
        let pk_cols = schema.primary_key_indexes();
        let partition_cols = schema.indexes_of(&d.partition_keys)?;
        let key_pos: Vec<usize> = pk_cols
            .iter()
            .enumerate()
            .filter(|(_, c)| !partition_cols.contains(c))
            .map(|(i, _)| i)
            .collect();
        let bucket_cols = schema.indexes_of(&d.effective_bucket_keys())?;
        let keys = crate::row::TableKeys::of(d)
            .map_err(|e| e.context(format!("table '{}'", info.table_path)))?;
        let mut prefix_cols: Vec<usize> =
            partition_cols.iter().chain(&bucket_cols).copied().collect();
        prefix_cols.sort_unstable();
        prefix_cols.dedup();
        Ok(Lookuper {
            table,
            pk_cols,
            key_pos,
            bucket_cols,
            keys,
            partition_cols,
            prefix_cols,
            insert_if_not_exists: false,
        })
    }

    /// The same lookuper, but a key that does not exist is inserted by the server (only its
    /// primary-key columns; other columns null, an auto-increment column assigned) and its new
    /// row returned: Fluss's lookup with insert-if-not-exists, the dictionary-encoding pattern
    /// with an auto-increment column. Fails, as Fluss's client does, when the table has NOT NULL
    /// columns outside the primary key and the auto-increment column (nothing could fill them).
    pub fn insert_if_not_exists(mut self, enabled: bool) -> Result<Lookuper> {
        if enabled {
            let schema = self.table.info.schema();
            let not_null: Vec<&str> = schema
                .columns
                .iter()
                .enumerate()
                .filter(|(i, c)| {
                    !c.data_type.nullable
                        && !self.pk_cols.contains(i)
                        && !schema.auto_increment_columns.contains(&c.name)
                })
                .map(|(_, c)| c.name.as_str())
                .collect();
            if !not_null.is_empty() {
                crate::bail_invalid!(
                    "Lookup with insertIfNotExists enabled cannot be created for table '{}', \
                     because it contains non-nullable columns that are not primary key columns \
                     or auto increment columns: [{}].",
                    self.table.info.table_path,
                    not_null.join(", ")
                );
            }
        }
        self.insert_if_not_exists = enabled;
        Ok(self)
    }

    /// The primary-key column names, the order of values in [`Lookuper::lookup_rows`].
    pub fn key_columns(&self) -> Vec<String> {
        self.names(&self.pk_cols)
    }

    /// The columns of a prefix lookup (partition keys and bucket keys, in schema order).
    pub fn prefix_columns(&self) -> Vec<String> {
        self.names(&self.prefix_cols)
    }

    fn names(&self, cols: &[usize]) -> Vec<String> {
        let s = self.table.info.schema();
        cols.iter().map(|c| s.columns[*c].name.clone()).collect()
    }

    /// Partition id of a key (None: the table is not partitioned; Err(None) inside: the
    /// partition does not exist).
    async fn partition_of(&self, values: &[(usize, &Datum)]) -> Result<Option<Option<i64>>> {
        if self.partition_cols.is_empty() {
            return Ok(Some(None));
        }
        let path = &self.table.info.table_path;
        let mut parts = Vec::new();
        for c in &self.partition_cols {
            let d = values
                .iter()
                .find(|(i, _)| i == c)
                .map(|(_, d)| *d)
                .ok_or_else(|| Error::internal("partition column missing from the key"))?;
            parts.push(partition_value(&self.table, *c, d)?);
        }
        let keys = &self.table.info.descriptor.partition_keys;
        let name = PartitionSpec::new(keys.iter().cloned().zip(parts)).partition_name();
        Ok(self.table.conn.partition_id(path, &name).await?.map(Some))
    }

    /// The bucket of a key or prefix given by column, and (for a prefix lookup, `prefix`) the
    /// prefix's key bytes.
    fn bucket_of(&self, values: &[(usize, &Datum)], prefix: bool) -> Result<(i32, Vec<u8>)> {
        let vals: Vec<Datum> = self
            .bucket_cols
            .iter()
            .map(|c| {
                values
                    .iter()
                    .find(|(i, _)| i == c)
                    .map(|(_, d)| (*d).clone())
                    .unwrap_or(Datum::Null)
            })
            .collect();
        let name = || table_name(&self.table);
        let encoder = self
            .keys
            .bucket_key()
            .ok_or_else(|| Error::internal(format!("table '{}' has no bucket key", name())))?;
        let bytes = encoder
            .encode_values(&vals)
            .map_err(|e| e.context(format!("bucket key of table '{}'", name())))?;
        let bucket = self
            .keys
            .bucket_of(&bytes, self.table.info.num_buckets())
            .map_err(|e| e.context(format!("bucket key of table '{}'", name())))?;
        if !prefix {
            return Ok((bucket, Vec::new()));
        }
        let prefix_bytes = match self.keys.prefix() {
            Some(p) if p.format() != encoder.format() => p
                .encode_values(&vals)
                .map_err(|e| e.context(format!("prefix key of table '{}'", name())))?,
            _ => bytes,
        };
        Ok((bucket, prefix_bytes))
    }

    /// Looks up rows by primary key: each key is the values of [`Lookuper::key_columns`] in
    /// that order. Returns the full row of every key, `None` where there is none.
    pub async fn lookup_rows(&self, keys: &[Vec<Datum>]) -> Result<Vec<Option<Vec<Datum>>>> {
        let path = table_name(&self.table);
        let mut groups: BTreeMap<Group, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
        for (i, key) in keys.iter().enumerate() {
            if key.len() != self.pk_cols.len() {
                crate::bail_invalid!(
                    "a lookup key of table '{path}' needs {} values ({}), got {}",
                    self.pk_cols.len(),
                    self.key_columns().join(", "),
                    key.len()
                );
            }
            let named: Vec<(usize, &Datum)> =
                self.pk_cols.iter().copied().zip(key.iter()).collect();
            let Some(pid) = self.partition_of(&named).await? else {
                continue;
            };
            let key_vals: Vec<Datum> = self.key_pos.iter().map(|p| key[*p].clone()).collect();
            let key_bytes = self
                .keys
                .primary()
                .ok_or_else(|| Error::internal(format!("table '{path}' has no primary key")))?
                .encode_values(&key_vals)
                .map_err(|e| e.context(format!("primary key of table '{path}'")))?;
            let (bucket, _) = self.bucket_of(&named, false)?;
            groups
                .entry((pid, bucket))
                .or_default()
                .push((i, key_bytes));
        }
        let mut values: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
        for ((pid, bucket), items) in groups {
            let req = LookupRequest {
                table_id: self.table.info.table_id,
                buckets_req: vec![PbLookupReqForBucket {
                    partition_id: pid,
                    bucket_id: bucket,
                    keys: items.iter().map(|(_, k)| k.clone()).collect(),
                    ..Default::default()
                }],
                // Fluss needs acks and a timeout for the write an insert makes.
                insert_if_not_exists: self.insert_if_not_exists.then_some(true),
                acks: self.insert_if_not_exists.then_some(-1),
                timeout_ms: self.insert_if_not_exists.then_some(30_000),
            };
            let b = self
                .ask_leader(
                    pid,
                    bucket,
                    &req,
                    "Lookup",
                    |r| r.buckets_resp,
                    |b| (b.error_code, b.error_message.clone()),
                )
                .await?;
            if b.values.len() != items.len() {
                return Err(Error::corrupt(format!(
                    "Lookup response has {} values for {} keys",
                    b.values.len(),
                    items.len()
                )));
            }
            for ((i, _), v) in items.iter().zip(b.values) {
                values[*i] = v.values.filter(|v| !v.is_empty());
            }
        }
        let mut out = Vec::with_capacity(keys.len());
        for v in values {
            out.push(match v {
                None => None,
                Some(bytes) => Some(decode_row(&self.table, &bytes)?),
            });
        }
        Ok(out)
    }

    /// Looks up the keys in `keys` (a batch holding at least the primary-key columns, by name)
    /// and returns the rows found, in key order, with the table's Arrow schema.
    pub async fn lookup(&self, keys: &RecordBatch) -> Result<RecordBatch> {
        let rows = self.key_rows(keys, &self.pk_cols).await?;
        let found: Vec<Vec<u8>> = Vec::new();
        let _ = found;
        let results = self.lookup_rows(&rows).await?;
        let rows: Vec<Vec<Datum>> = results.into_iter().flatten().collect();
        let info = &self.table.info;
        crate::row::rows_to_record_batch(
            &info.schema().to_arrow(),
            &info.schema().data_types(),
            &rows,
        )
    }

    /// [`Lookuper::lookup`] that says which key each row answers: the rows found, with an
    /// INT32 column [`KEY_INDEX_COLUMN`] (the row of `keys` it was found for) first. Engines
    /// that batch the keys of several probes (a lookup join) use it to route each row back.
    pub async fn lookup_with_key_index(&self, keys: &RecordBatch) -> Result<RecordBatch> {
        let rows = self.key_rows(keys, &self.pk_cols).await?;
        let results = self.lookup_rows(&rows).await?;
        let mut index = Vec::new();
        let mut found = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            if let Some(row) = r {
                index.push(
                    i32::try_from(i).map_err(|_| {
                        Error::invalid(format!("too many lookup keys ({i} and more)"))
                    })?,
                );
                found.push(row);
            }
        }
        let info = &self.table.info;
        let rows = crate::row::rows_to_record_batch(
            &info.schema().to_arrow(),
            &info.schema().data_types(),
            &found,
        )?;
        let mut fields = vec![arrow_schema::Field::new(
            KEY_INDEX_COLUMN,
            arrow_schema::DataType::Int32,
            false,
        )];
        fields.extend(rows.schema().fields().iter().map(|f| f.as_ref().clone()));
        let mut columns: Vec<arrow_array::ArrayRef> =
            vec![std::sync::Arc::new(arrow_array::Int32Array::from(index))];
        columns.extend(rows.columns().iter().cloned());
        Ok(RecordBatch::try_new(
            std::sync::Arc::new(arrow_schema::Schema::new(fields)),
            columns,
        )?)
    }

    async fn key_rows(&self, keys: &RecordBatch, cols: &[usize]) -> Result<Vec<Vec<Datum>>> {
        let schema = self.table.info.schema();
        let mut arrays = Vec::new();
        let mut types = Vec::new();
        for c in cols {
            let name = &schema.columns[*c].name;
            let i = keys.schema().index_of(name).map_err(|_| {
                Error::invalid(format!(
                    "the lookup keys of table '{}' have no column '{name}'",
                    table_name(&self.table)
                ))
            })?;
            arrays.push(keys.column(i).clone());
            types.push(schema.columns[*c].data_type.clone());
        }
        let fields: Vec<arrow_schema::Field> = cols
            .iter()
            .map(|c| {
                crate::metadata::schema::to_arrow_field(
                    &schema.columns[*c].name,
                    &schema.columns[*c].data_type,
                )
            })
            .collect();
        let mut casted = Vec::new();
        for (a, f) in arrays.iter().zip(&fields) {
            casted.push(if a.data_type() == f.data_type() {
                a.clone()
            } else {
                arrow_cast::cast(a, f.data_type())?
            });
        }
        let fields: Vec<arrow_schema::Field> =
            fields.into_iter().map(|f| f.with_nullable(true)).collect();
        let batch = RecordBatch::try_new(
            std::sync::Arc::new(arrow_schema::Schema::new(fields)),
            casted,
        )?;
        crate::row::record_batch_to_rows(&batch, &types)
    }

    /// Prefix lookups: each prefix is the values of [`Lookuper::prefix_columns`] in that order.
    /// Returns, per prefix, every row whose key starts with it.
    pub async fn prefix_lookup_rows(
        &self,
        prefixes: &[Vec<Datum>],
    ) -> Result<Vec<Vec<Vec<Datum>>>> {
        let path = table_name(&self.table);
        if self.insert_if_not_exists {
            crate::bail_invalid!(
                "insertIfNotExists cannot be enabled for prefix key lookup, as currently we only \
                 support insertIfNotExists for primary key lookup (table '{path}')."
            );
        }
        let pk_minus_part: Vec<usize> = self.key_pos.iter().map(|p| self.pk_cols[*p]).collect();
        if self.bucket_cols == pk_minus_part {
            crate::bail_invalid!(
                "table '{path}' is bucketed by its whole primary key; a prefix lookup needs a \
                 bucket key that is a proper prefix of the primary key (use lookup instead)"
            );
        }
        let mut groups: BTreeMap<Group, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
        for (i, p) in prefixes.iter().enumerate() {
            if p.len() != self.prefix_cols.len() {
                crate::bail_invalid!(
                    "a prefix lookup of table '{path}' needs {} values ({}), got {}",
                    self.prefix_cols.len(),
                    self.prefix_columns().join(", "),
                    p.len()
                );
            }
            let named: Vec<(usize, &Datum)> =
                self.prefix_cols.iter().copied().zip(p.iter()).collect();
            let Some(pid) = self.partition_of(&named).await? else {
                continue;
            };
            let (bucket, bytes) = self.bucket_of(&named, true)?;
            groups.entry((pid, bucket)).or_default().push((i, bytes));
        }
        let mut out: Vec<Vec<Vec<Datum>>> = vec![Vec::new(); prefixes.len()];
        for ((pid, bucket), items) in groups {
            let req = PrefixLookupRequest {
                table_id: self.table.info.table_id,
                buckets_req: vec![PbPrefixLookupReqForBucket {
                    partition_id: pid,
                    bucket_id: bucket,
                    keys: items.iter().map(|(_, k)| k.clone()).collect(),
                }],
            };
            let b = self
                .ask_leader(
                    pid,
                    bucket,
                    &req,
                    "PrefixLookup",
                    |r| r.buckets_resp,
                    |b| (b.error_code, b.error_message.clone()),
                )
                .await?;
            for ((i, _), list) in items.iter().zip(b.value_lists) {
                for v in list.values {
                    out[*i].push(decode_row(&self.table, &v)?);
                }
            }
        }
        Ok(out)
    }

    /// Prefix lookups of the prefixes in `prefixes` (a batch with the
    /// [`Lookuper::prefix_columns`] by name); all matching rows in one batch.
    pub async fn prefix_lookup(&self, prefixes: &RecordBatch) -> Result<RecordBatch> {
        let rows = self.key_rows(prefixes, &self.prefix_cols.clone()).await?;
        let rows: Vec<Vec<Datum>> = self
            .prefix_lookup_rows(&rows)
            .await?
            .into_iter()
            .flatten()
            .collect();
        let info = &self.table.info;
        crate::row::rows_to_record_batch(
            &info.schema().to_arrow(),
            &info.schema().data_types(),
            &rows,
        )
    }
}

fn check_bucket_error(
    table: &Table,
    code: Option<i32>,
    message: Option<String>,
    bucket: i32,
) -> Result<()> {
    if let Some(code) = code.filter(|c| *c != codes::NONE) {
        if code == codes::NOT_LEADER_OR_FOLLOWER || code == codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION
        {
            table.conn.invalidate_table(table.info.table_id);
        }
        return Err(Error::from_fluss(
            code,
            format!(
                "lookup in bucket {bucket} of table '{}': {}",
                table_name(table),
                message.unwrap_or_default()
            ),
        ));
    }
    Ok(())
}

fn decode_row(table: &Table, value: &[u8]) -> Result<Vec<Datum>> {
    let batch = values_to_batch(table, &[value])?;
    let types = table.info.schema().data_types();
    let mut rows = crate::row::record_batch_to_rows(&batch, &types)?;
    rows.pop()
        .ok_or_else(|| Error::internal("decoded value gave no row"))
}

/// The partition value text of one partition column's value (as the writers name partitions).
fn partition_value(table: &Table, col: usize, d: &Datum) -> Result<String> {
    let name = &table.info.schema().columns[col].name;
    crate::row::partition_value::datum_partition_value(&table.info.table_path, name, d)
}
