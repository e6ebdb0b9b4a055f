//! [`AppendWriter`]: rows and Arrow batches appended to a log table.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use std::sync::Arc;

use super::core::{StatisticsSpec, WriteKind, WriterHandle};
use super::route::{conform_batch, pieces_from_batch, Partitioning};
use super::WriteFuture;
use crate::client::Table;
use crate::metadata::DataType;
use crate::row::Datum;
use crate::{Error, Result};

/// Appends to a log table (no primary key). Each write returns a [`WriteFuture`] that resolves
/// when the server acknowledged it; [`AppendWriter::flush`] waits for everything written so far.
pub struct AppendWriter {
    table: Table,
    schema: SchemaRef,
    types: Vec<DataType>,
    partitioning: Option<Partitioning>,
    /// The bucket key's encoder and bucketing (Fluss's, or the table's lake format's); no
    /// bucket-key encoder for a keyless table (sticky or round-robin).
    keys: crate::row::TableKeys,
    buckets: i32,
    batch_size: usize,
    handle: WriterHandle,
}

impl std::fmt::Debug for AppendWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppendWriter")
            .field("table", &self.table.path().to_string())
            .finish()
    }
}

impl AppendWriter {
    pub(crate) fn new(table: Table) -> Result<Self> {
        let info = &table.info;
        let d = &info.descriptor;
        if d.has_primary_key() {
            return Err(Error::invalid(format!(
                "table '{}' has a primary key ({}): append is only for log tables; use an upsert writer",
                table.path(),
                d.schema.primary_key.clone().unwrap_or_default().join(", ")
            )));
        }
        let log_format = d.log_format()?;
        if log_format != crate::metadata::LogFormat::Arrow {
            return Err(Error::unsupported(format!(
                "table '{}' uses log format {log_format}; Riverlet writes ARROW log tables only",
                table.path()
            )));
        }
        let compression = d.log_compression()?;
        let schema = d.schema.to_arrow();
        let types: Vec<DataType> = d
            .schema
            .columns
            .iter()
            .map(|c| c.data_type.clone())
            .collect();
        let keys =
            crate::row::TableKeys::of(d).map_err(|e| crate::client::name_table(e, table.path()))?;
        let config = table.conn.config().writer.clone();
        let batch_size = config.batch_size;
        let names = d.schema.column_names();
        let statistics = crate::stats::statistics_columns(
            d.properties
                .get(crate::stats::STATISTICS_COLUMNS_OPTION)
                .map(String::as_str),
            &names,
            &types,
            false,
        )?
        .map(|columns| {
            Arc::new(StatisticsSpec {
                columns,
                types: types.clone(),
            })
        });
        let handle = WriterHandle::start(
            &table,
            WriteKind::Log {
                compression,
                statistics,
            },
            config,
        )?;
        Ok(AppendWriter {
            partitioning: Partitioning::of(&table)?,
            buckets: d.bucket_count.unwrap_or(1).max(1),
            table,
            schema,
            types,
            keys,
            batch_size,
            handle,
        })
    }

    /// The table written to.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The Arrow schema batches must have (columns may come in another order and in lossless
    /// compatible types: other string/binary encodings, dictionaries).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn route(&self, batch: &RecordBatch) -> Result<Vec<super::core::Piece>> {
        let path = self.table.path();
        let batch = conform_batch(path, &self.schema, batch)?;
        let partitions = match &self.partitioning {
            Some(p) => Some(p.of_batch(path, &batch)?),
            None => None,
        };
        let buckets = match self.keys.bucket_key() {
            None => None,
            Some(encoder) => {
                let keys = encoder
                    .encode_batch(&batch)
                    .map_err(|e| crate::client::name_table(e, path))?;
                Some(
                    keys.iter()
                        .map(|k| self.keys.bucket_of(k, self.buckets))
                        .collect::<Result<Vec<i32>>>()
                        .map_err(|e| crate::client::name_table(e, path))?,
                )
            }
        };
        pieces_from_batch(&batch, partitions, buckets, self.batch_size)
    }

    /// Queues an Arrow batch; the future resolves when all its rows are acknowledged. The batch
    /// is checked against the table's schema first (errors name the column).
    pub fn append_batch(&self, batch: &RecordBatch) -> WriteFuture {
        match self.route(batch) {
            Ok(pieces) => self.handle.submit(pieces),
            Err(e) => WriteFuture::failed(e),
        }
    }

    /// Queues rows given as values in table column order.
    pub fn append_rows(&self, rows: &[Vec<Datum>]) -> WriteFuture {
        let batch = match self.rows_to_batch(rows) {
            Ok(b) => b,
            Err(e) => return WriteFuture::failed(e),
        };
        self.append_batch(&batch)
    }

    /// Queues one row given as values in table column order.
    pub fn append_row(&self, row: &[Datum]) -> WriteFuture {
        self.append_rows(&[row.to_vec()])
    }

    fn rows_to_batch(&self, rows: &[Vec<Datum>]) -> Result<RecordBatch> {
        let path = self.table.path();
        let cols = &self.table.info.descriptor.schema.columns;
        for (r, row) in rows.iter().enumerate() {
            if row.len() != cols.len() {
                crate::bail_invalid!(
                    "row {r} has {} values but table '{path}' has {} columns",
                    row.len(),
                    cols.len()
                );
            }
            for (c, v) in cols.iter().zip(row) {
                if matches!(v, Datum::Null) && !c.data_type.nullable {
                    crate::bail_invalid!(
                        "column '{}' of table '{path}' is NOT NULL but row {r} has null",
                        c.name
                    );
                }
            }
        }
        crate::row::arrow_rows::rows_to_record_batch(&self.schema, &self.types, rows)
            .map_err(|e| crate::client::name_table(e, path))
    }

    /// Bytes written but not yet acknowledged.
    pub fn buffered_bytes(&self) -> usize {
        self.handle.buffered_bytes()
    }

    /// Waits until the writer's buffer is below its memory bound (call before a write to get
    /// backpressure; the blocking facade does this for you).
    pub async fn ready(&self) {
        self.handle.ready().await
    }

    /// Sends everything queued and waits for the acks. Returns the first write error since the
    /// previous flush (each write's own future reports its error too).
    pub async fn flush(&self) -> Result<()> {
        self.handle.flush().await
    }

    /// Flushes and stops the writer; later writes fail with [`crate::ErrorKind::Closed`].
    pub async fn close(&self) -> Result<()> {
        self.handle.close().await
    }

    /// Stops the writer at once, without waiting for the server: for a caller that will write
    /// the rows again anyway, e.g. a stream processor that is cancelled and will restore from
    /// its last checkpoint, where [`AppendWriter::close`] would wait for acknowledgements nobody
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
