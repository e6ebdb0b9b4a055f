//! [`UpsertWriter`]: upserts, deletes and partial updates on a primary-key table.

use std::collections::HashSet;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::core::{KvEntry, Piece, PiecePayload, WriteKind, WriterHandle};
use super::route::{conform_column, Partitioning};
use super::WriteFuture;
use crate::client::Table;
use crate::metadata::DataType;
use crate::row::Datum;
use crate::{Error, Result};

/// Writes to a primary-key table: each row is encoded as a CompactedRow, keyed by the bytes of
/// its primary key (minus partition columns), and routed to the bucket of its bucket key; key
/// bytes and buckets are the table's [`crate::row::TableKeys`] (Fluss's, or its lake format's). With partial-update columns, upserts change only those columns.
pub struct UpsertWriter {
    table: Table,
    schema: SchemaRef,
    types: Vec<DataType>,
    names: Vec<String>,
    /// All primary-key columns (checked for nulls).
    pk_cols: Vec<usize>,
    /// The primary-key and bucket-key encoders and the bucketing.
    keys: crate::row::TableKeys,
    partitioning: Option<Partitioning>,
    target: Option<HashSet<usize>>,
    buckets: i32,
    batch_size: usize,
    handle: WriterHandle,
}

impl std::fmt::Debug for UpsertWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpsertWriter")
            .field("table", &self.table.path().to_string())
            .finish()
    }
}

impl UpsertWriter {
    pub(crate) fn new(table: Table, partial_columns: Option<&[&str]>) -> Result<Self> {
        let path = table.path().clone();
        let d = &table.info.descriptor;
        let Some(pk) = d.schema.primary_key.clone().filter(|pk| !pk.is_empty()) else {
            return Err(Error::invalid(format!(
                "table '{path}' has no primary key: upsert and delete are only for primary-key tables; use an append writer"
            )));
        };
        let kv_format = d.kv_format()?;
        if kv_format != crate::metadata::KvFormat::Compacted {
            return Err(Error::unsupported(format!(
                "table '{path}' uses kv format {kv_format}; Riverlet writes COMPACTED only"
            )));
        }
        let cols = &d.schema.columns;
        let names: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
        let types: Vec<DataType> = cols.iter().map(|c| c.data_type.clone()).collect();
        let index = |name: &str, what: &str| {
            d.schema.column_index(name).ok_or_else(|| {
                Error::invalid(format!("{what} '{name}' is not a column of table '{path}'"))
            })
        };
        let mut pk_cols = Vec::new();
        for k in &pk {
            pk_cols.push(index(k, "primary key column")?);
        }
        for k in d.effective_bucket_keys() {
            index(&k, "bucket key")?;
        }
        let keys = crate::row::TableKeys::of(d).map_err(|e| crate::client::name_table(e, &path))?;
        let target = match partial_columns {
            None => None,
            Some(names) => {
                let mut set = HashSet::new();
                for n in names {
                    set.insert(index(n, "partial-update column")?);
                }
                for (k, i) in pk.iter().zip(&pk_cols) {
                    if !set.contains(i) {
                        crate::bail_invalid!(
                            "partial-update columns {names:?} of table '{path}' must include the primary key column '{k}'"
                        );
                    }
                }
                for (i, c) in cols.iter().enumerate() {
                    if !pk_cols.contains(&i) && !c.data_type.nullable {
                        crate::bail_invalid!(
                            "partial update of table '{path}' needs every non-key column to be nullable, but column '{}' is NOT NULL",
                            c.name
                        );
                    }
                }
                Some(set)
            }
        };
        let target_columns = target.as_ref().map(|s| {
            let mut v: Vec<i32> = s.iter().map(|i| *i as i32).collect();
            v.sort_unstable();
            v
        });
        let config = table.conn.config().writer.clone();
        let batch_size = config.batch_size;
        let handle = WriterHandle::start(&table, WriteKind::Kv { target_columns }, config)?;
        Ok(UpsertWriter {
            schema: d.schema.to_arrow(),
            partitioning: Partitioning::of(&table)?,
            buckets: d.bucket_count.unwrap_or(1).max(1),
            table,
            types,
            names,
            pk_cols,
            keys,
            target,
            batch_size,
            handle,
        })
    }

    /// The table written to.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The table's Arrow schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Queues upserts of the rows of an Arrow batch (columns matched by name; for a
    /// partial update the batch needs the partial-update columns, others are ignored).
    pub fn upsert_batch(&self, batch: &RecordBatch) -> WriteFuture {
        match self
            .batch_rows(batch, false)
            .and_then(|rows| self.encode(&rows, false))
        {
            Ok(p) => self.handle.submit(p),
            Err(e) => WriteFuture::failed(e),
        }
    }

    /// Queues deletes of the keys in an Arrow batch (it needs the primary-key columns; other
    /// columns are ignored).
    pub fn delete_batch(&self, batch: &RecordBatch) -> WriteFuture {
        match self
            .batch_rows(batch, true)
            .and_then(|rows| self.encode(&rows, true))
        {
            Ok(p) => self.handle.submit(p),
            Err(e) => WriteFuture::failed(e),
        }
    }

    /// Queues upserts of rows given as values in table column order (for a partial update,
    /// values of the other columns are ignored).
    pub fn upsert_rows(&self, rows: &[Vec<Datum>]) -> WriteFuture {
        match self
            .full_rows(rows, false)
            .and_then(|rows| self.encode(&rows, false))
        {
            Ok(p) => self.handle.submit(p),
            Err(e) => WriteFuture::failed(e),
        }
    }

    /// Queues one upsert.
    pub fn upsert_row(&self, row: &[Datum]) -> WriteFuture {
        self.upsert_rows(&[row.to_vec()])
    }

    /// Queues deletes; each row is either a full row in table column order or just the primary
    /// key values in primary-key order.
    pub fn delete_rows(&self, rows: &[Vec<Datum>]) -> WriteFuture {
        match self
            .full_rows(rows, true)
            .and_then(|rows| self.encode(&rows, true))
        {
            Ok(p) => self.handle.submit(p),
            Err(e) => WriteFuture::failed(e),
        }
    }

    /// Queues one delete (a full row or the primary key values).
    pub fn delete_row(&self, row: &[Datum]) -> WriteFuture {
        self.delete_rows(&[row.to_vec()])
    }

    fn full_rows(&self, rows: &[Vec<Datum>], delete: bool) -> Result<Vec<Vec<Datum>>> {
        let path = self.table.path();
        let n = self.types.len();
        rows.iter()
            .enumerate()
            .map(|(r, row)| {
                if row.len() == n {
                    Ok(row.clone())
                } else if delete && row.len() == self.pk_cols.len() {
                    let mut full = vec![Datum::Null; n];
                    for (v, i) in row.iter().zip(&self.pk_cols) {
                        full[*i] = v.clone();
                    }
                    Ok(full)
                } else {
                    Err(Error::invalid(format!(
                        "row {r} has {} values but table '{path}' has {n} columns{}",
                        row.len(),
                        if delete {
                            format!(" (or {} primary key values)", self.pk_cols.len())
                        } else {
                            String::new()
                        }
                    )))
                }
            })
            .collect()
    }

    /// The batch's rows as full-width values (columns not in the batch are null).
    fn batch_rows(&self, batch: &RecordBatch, delete: bool) -> Result<Vec<Vec<Datum>>> {
        let path = self.table.path();
        let src = batch.schema();
        let mut mapping: Vec<(usize, arrow_array::ArrayRef)> = Vec::new();
        let mut present = HashSet::new();
        for (j, f) in src.fields().iter().enumerate() {
            let Some(i) = self.names.iter().position(|n| n == f.name()) else {
                crate::bail_invalid!(
                    "column '{}' of the batch is not in table '{path}' (columns: {})",
                    f.name(),
                    self.names.join(", ")
                );
            };
            let needed = if delete {
                self.pk_cols.contains(&i)
            } else {
                self.target.as_ref().is_none_or(|t| t.contains(&i))
            };
            if !needed {
                continue;
            }
            let tf = self.schema.field(i);
            let arr = conform_column(path, f.name(), batch.column(j), tf.data_type(), true)?;
            present.insert(i);
            mapping.push((i, arr));
        }
        let required: Vec<usize> = if delete {
            self.pk_cols.clone()
        } else {
            match &self.target {
                Some(t) => {
                    let mut v: Vec<usize> = t.iter().copied().collect();
                    v.sort_unstable();
                    v
                }
                None => (0..self.names.len()).collect(),
            }
        };
        for i in required {
            if !present.contains(&i) {
                crate::bail_invalid!(
                    "the batch has no column '{}' of table '{path}' (needed for {})",
                    self.names[i],
                    if delete { "a delete" } else { "an upsert" }
                );
            }
        }
        let n = self.types.len();
        let mut rows = vec![vec![Datum::Null; n]; batch.num_rows()];
        for (i, arr) in &mapping {
            for (r, row) in rows.iter_mut().enumerate() {
                row[*i] =
                    crate::row::arrow_rows::datum_from_array(arr.as_ref(), r, &self.types[*i])?;
            }
        }
        Ok(rows)
    }

    fn encode(&self, rows: &[Vec<Datum>], delete: bool) -> Result<Vec<Piece>> {
        let path = self.table.path();
        let mut pieces: Vec<Piece> = Vec::new();
        let mut open: std::collections::HashMap<(Option<String>, i32), usize> =
            std::collections::HashMap::new();
        for (r, row) in rows.iter().enumerate() {
            for i in &self.pk_cols {
                if matches!(row[*i], Datum::Null) {
                    crate::bail_invalid!(
                        "primary key column '{}' of table '{path}' is null in row {r}",
                        self.names[*i]
                    );
                }
            }
            let value = if delete {
                None
            } else {
                for (i, (v, t)) in row.iter().zip(&self.types).enumerate() {
                    let written = self.target.as_ref().is_none_or(|s| s.contains(&i));
                    if written && matches!(v, Datum::Null) && !t.nullable {
                        crate::bail_invalid!(
                            "column '{}' of table '{path}' is NOT NULL but row {r} has null",
                            self.names[i]
                        );
                    }
                }
                let masked: Vec<Datum>;
                let values = match &self.target {
                    None => row,
                    Some(t) => {
                        masked = row
                            .iter()
                            .enumerate()
                            .map(|(i, v)| {
                                if t.contains(&i) {
                                    v.clone()
                                } else {
                                    Datum::Null
                                }
                            })
                            .collect();
                        &masked
                    }
                };
                Some(
                    crate::row::compacted::encode_compacted_row(&self.types, values)
                        .map_err(|e| crate::client::name_table(e, path))?,
                )
            };
            let (primary, bucket_key) = match (self.keys.primary(), self.keys.bucket_key()) {
                (Some(p), Some(b)) => (p, b),
                _ => return Err(Error::internal("a primary-key table without key encoders")),
            };
            let key = primary
                .encode_row(row)
                .map_err(|e| crate::client::name_table(e, path))?;
            let bucket_bytes;
            let bk: &[u8] = if self.keys.bucket_is_primary() {
                &key
            } else {
                bucket_bytes = bucket_key
                    .encode_row(row)
                    .map_err(|e| crate::client::name_table(e, path))?;
                &bucket_bytes
            };
            let bucket = self
                .keys
                .bucket_of(bk, self.buckets)
                .map_err(|e| crate::client::name_table(e, path))?;
            let partition = match &self.partitioning {
                Some(p) => Some(p.of_datums(path, row)?),
                None => None,
            };
            let size = key.len() + value.as_ref().map_or(0, |v| v.len()) + 16;
            let entry = KvEntry { key, value };
            // Extend the open piece of the same partition and bucket while it has room (row order
            // is kept per bucket, which is all the server sees).
            let group = (partition.as_ref().map(|p| p.0.clone()), bucket);
            if let Some(&at) = open.get(&group) {
                let last = &mut pieces[at];
                if last.size + size <= self.batch_size {
                    if let PiecePayload::Kv(v) = &mut last.payload {
                        v.push(entry);
                        last.size += size;
                        continue;
                    }
                }
            }
            open.insert(group, pieces.len());
            pieces.push(Piece {
                partition,
                bucket: Some(bucket),
                payload: PiecePayload::Kv(vec![entry]),
                size,
            });
        }
        Ok(pieces)
    }

    /// Bytes written but not yet acknowledged.
    pub fn buffered_bytes(&self) -> usize {
        self.handle.buffered_bytes()
    }

    /// Waits until the writer's buffer is below its memory bound.
    pub async fn ready(&self) {
        self.handle.ready().await
    }

    /// Sends everything queued and waits for the acks; returns the first write error since the
    /// previous flush.
    pub async fn flush(&self) -> Result<()> {
        self.handle.flush().await
    }

    /// Flushes and stops the writer.
    pub async fn close(&self) -> Result<()> {
        self.handle.close().await
    }

    /// Stops the writer at once, without waiting for the server: for a caller that will write
    /// the rows again anyway, e.g. a stream processor that is cancelled and will restore from
    /// its last checkpoint, where [`UpsertWriter::close`] would wait for acknowledgements nobody
    /// needs (up to the delivery timeout while a server is unreachable).
    ///
    /// Every write not acknowledged yet (queued, being encoded, or sent and unanswered) fails
    /// with [`crate::ErrorKind::Closed`] saying it was discarded by an abort: it may or may not
    /// have reached the table (a batch already sent can still be appended). Writes acknowledged
    /// before stay written. Its buffered bytes are released, a pending `flush` or `close` fails
    /// the same way, and later calls fail with [`crate::ErrorKind::Closed`]. The writer's id
    /// goes with it: a new writer gets a new one. Returns once the writer has stopped; calling
    /// it again, or after `close`, does nothing.
    pub async fn abort(&self) {
        self.handle.abort().await
    }
}
