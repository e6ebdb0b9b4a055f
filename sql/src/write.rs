//! Writes of Arrow streams (SQL `INSERT INTO`, Flight `DoPut`): appended to a log table,
//! upserted into a primary-key table, through the core's writers (which check every batch
//! against the table's schema).

use arrow_array::RecordBatch;
use datafusion::error::Result as DfResult;
use futures::{Stream, StreamExt};
use riverlet::client::Table;

use crate::core_err;

/// Writes every batch of `batches` and waits for the acknowledgements; returns the row count.
pub async fn write_stream<S>(table: &Table, batches: S) -> DfResult<u64>
where
    S: Stream<Item = DfResult<RecordBatch>> + Send,
{
    let mut batches = std::pin::pin!(batches);
    let mut rows = 0u64;
    if table.info().descriptor.has_primary_key() {
        let writer = table.new_upsert_writer(None).map_err(core_err)?;
        while let Some(batch) = batches.next().await {
            let batch = batch?;
            writer.ready().await;
            rows += batch.num_rows() as u64;
            rejected(writer.upsert_batch(&batch))?;
        }
        writer.flush().await.map_err(core_err)?;
        writer.close().await.map_err(core_err)?;
    } else {
        let writer = table.new_append_writer().map_err(core_err)?;
        while let Some(batch) = batches.next().await {
            let batch = batch?;
            writer.ready().await;
            rows += batch.num_rows() as u64;
            rejected(writer.append_batch(&batch))?;
        }
        writer.flush().await.map_err(core_err)?;
        writer.close().await.map_err(core_err)?;
    }
    Ok(rows)
}

/// The error of a write rejected before it was queued (schema, null key); queued writes report
/// theirs at the flush.
fn rejected(mut write: riverlet::write::WriteFuture) -> DfResult<()> {
    match write.try_result() {
        Some(r) => r.map_err(core_err),
        None => Ok(()),
    }
}
