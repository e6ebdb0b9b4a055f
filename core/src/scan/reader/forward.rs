//! Runs a planned read as Arrow IPC messages ([`crate::scan::IpcStream`]): the rule deciding
//! which log batches go out as Fluss stored them.

use std::sync::Arc;

use bytes::Bytes;

use super::fetch::decode_batch;
use super::log_read::{Job, LogReader, LogSource};
use super::plan::{Mode, Plan};
use super::{log_source, run};
use crate::record::arrow_payload::split_message;
use crate::record::LogRecordBatch;
use crate::scan::ipc::{IpcBodies, IpcCounts, IpcMessage, IpcStream};
use crate::{Error, Result};

/// Whether every batch the plan reads can be handed out whole: a log read of log buckets with
/// no row-level work left to the client (no filter, no limit, no lake part, and the output
/// columns exactly the fetched ones, in order, so a projection is the server's). A time-range
/// read qualifies: the window keeps or drops whole batches (commit time is per batch).
fn forwardable(plan: &Plan) -> bool {
    plan.mode == Mode::Log
        && plan.lake_snapshot.is_none()
        && plan.filter.is_none()
        && plan.limit.is_none()
        && plan
            .output_cols
            .iter()
            .copied()
            .eq(0..plan.fetch_schema.fields().len())
}

/// Starts a planned read that hands out IPC messages.
pub(crate) fn run_ipc(plan: Plan, bodies: IpcBodies) -> IpcStream {
    if !forwardable(&plan) {
        return IpcStream::encoding(run(plan));
    }
    let counts = Arc::new(IpcCounts::default());
    let c = counts.clone();
    let job: Job<IpcMessage> = Arc::new(move |source, bytes, offset, end| {
        forward_or_encode(source, bytes, offset, end, bodies, &c)
    });
    let mut reader = LogReader::start_job(log_source(&plan), plan.buckets.clone(), job);
    IpcStream::spawn(plan.output_schema.clone(), counts, move |out| async move {
        while let Some(m) = reader.next().await? {
            if !out.send(m).await {
                break;
            }
        }
        Ok(())
    })
}

/// One batch of a forwardable read: its stored Arrow message when the read wants all of its
/// rows as written (inside `[offset, end)`, append-only, the table's current schema), checked
/// as a decode would check it (and, for [`IpcBodies::Uncompressed`], stored uncompressed);
/// otherwise its wanted rows decoded and encoded again.
fn forward_or_encode(
    source: &LogSource,
    bytes: Bytes,
    offset: i64,
    end: i64,
    bodies: IpcBodies,
    counts: &IpcCounts,
) -> Result<Option<IpcMessage>> {
    let batch = LogRecordBatch::new(&bytes)?;
    if batch.record_count() == 0 {
        return Ok(None);
    }
    let whole = batch.base_offset() >= offset && batch.next_offset() <= end;
    if whole
        && batch.is_append_only()
        && i32::from(batch.schema_id()) == source.table.info.schema_id
    {
        // A projected batch keeps the stored header while its payload was re-encoded by the
        // server, so its CRC cannot match (as in decode_batch).
        if !source.projected {
            batch.ensure_valid()?;
        }
        let payload = batch.arrow_payload()?;
        let parts = split_message(payload)?;
        // What a decode refuses must not reach the client undecoded: a message whose row count
        // is not the batch header's, or whose field nodes are not the output schema's.
        if parts.rows != i64::from(batch.record_count()) {
            return Err(Error::corrupt(format!(
                "log batch at offset {} declares {} records but its Arrow payload has {} rows",
                batch.base_offset(),
                batch.record_count(),
                parts.rows
            )));
        }
        let nodes = field_nodes(source.schema.fields());
        if parts.field_nodes != nodes {
            return Err(Error::corrupt(format!(
                "log batch at offset {} carries {} Arrow field nodes, its schema has {nodes}",
                batch.base_offset(),
                parts.field_nodes
            )));
        }
        if bodies == IpcBodies::Uncompressed && parts.compressed {
            return encode_rows(source, &batch, offset, end, counts);
        }
        let at = (payload.as_ptr() as usize)
            .checked_sub(bytes.as_ptr() as usize)
            .ok_or_else(|| Error::internal("arrow payload outside its batch"))?;
        let slice = |r: std::ops::Range<usize>| bytes.slice(at + r.start..at + r.end);
        let message = IpcMessage {
            header: slice(parts.header),
            body: slice(parts.body),
        };
        counts.forwarded();
        return Ok(Some(message));
    }
    encode_rows(source, &batch, offset, end, counts)
}

/// The field nodes an Arrow IPC record batch of `fields` carries: one per field, each nested
/// type's children after it (depth first), as the IPC format lays them out.
fn field_nodes(fields: &arrow_schema::Fields) -> usize {
    use arrow_schema::DataType as D;
    fields
        .iter()
        .map(|f| {
            1 + match f.data_type() {
                D::List(c) | D::LargeList(c) | D::FixedSizeList(c, _) | D::Map(c, _) => {
                    field_nodes(&arrow_schema::Fields::from(vec![c.clone()]))
                }
                D::Struct(children) => field_nodes(children),
                _ => 0,
            }
        })
        .sum()
}

/// The wanted rows of `batch`, decoded as a read decodes them, encoded once uncompressed.
fn encode_rows(
    source: &LogSource,
    batch: &LogRecordBatch<'_>,
    offset: i64,
    end: i64,
    counts: &IpcCounts,
) -> Result<Option<IpcMessage>> {
    let Some(fb) = decode_batch(&source.table, batch, offset, Some(end), &source.columns())? else {
        return Ok(None);
    };
    counts.encoded();
    IpcMessage::encode(&fb.rows).map(Some)
}
