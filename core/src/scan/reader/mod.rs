//! Bounded reads: planning a read, running it (log buckets fetched in a pipeline, time
//! windows, the primary-key fold), and the latest view of primary-key tables.
//!
//! `plan` validates the options and takes every bucket's bounds; `fetch` builds FetchLogs and
//! decodes log batches (shared with subscriptions); `log_read` runs the fetches of a read ahead
//! of its parallel decoding; `pk_view` folds a primary-key changelog and
//! reads the latest view (ScanKv, or on Apache Fluss 0.9.x a replay of the changelog folded
//! per key) and KV snapshots' states, which `snapshot` finds and reads. This module runs a
//! plan.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

use super::expr::filter_batch;
use super::stream::BatchStream;
use crate::Result;

mod fetch;
mod log_read;
mod pk_view;
mod plan;
mod snapshot;

pub(crate) use fetch::{fetch_once, with_changelog_columns, FetchColumns, FetchedBatch};
pub(crate) use pk_view::{latest_view_bucket, values_to_batch};
pub(crate) use plan::{log_count, plan, select_partitions, table_name, BucketRead, Plan};

use log_read::{Finish, LogReader, LogSource};
use pk_view::{fold_bucket, read_kv_bucket, read_snapshot_bucket};
use plan::Mode;

/// Starts a planned read.
pub(crate) fn run(plan: Plan) -> BatchStream {
    let schema = plan.output_schema.clone();
    let limit = plan.limit;
    BatchStream::spawn(schema, limit, move |mut emit| async move {
        let plan = Arc::new(plan);
        if matches!(plan.mode, Mode::Log | Mode::Changelog) {
            // Buckets are handed out one after the other, each in offset order; the fetches
            // and the decoding of several batches run ahead of the consumer.
            let finishing = plan.clone();
            let finish: Finish<RecordBatch> = Arc::new(move |fb| {
                let working = if finishing.mode == Mode::Changelog {
                    with_changelog_columns(&fb)?
                } else {
                    fb.rows
                };
                Ok(Some(finish_batch(&finishing, working)?))
            });
            let mut reader = LogReader::start(log_source(&plan), plan.buckets.clone(), finish);
            while let Some(out) = reader.next().await? {
                if !emit.emit(out).await {
                    break;
                }
            }
            return Ok(());
        }
        for b in plan.buckets.clone() {
            if emit.is_done() {
                break;
            }
            let more = match plan.mode {
                Mode::Kv => read_kv_bucket(&plan, &b, &mut emit).await?,
                Mode::Snapshot => read_snapshot_bucket(&plan, &b, &mut emit).await?,
                _ => fold_bucket(&plan, &b, &mut emit).await?,
            };
            if !more {
                break;
            }
        }
        Ok(())
    })
}

/// Applies the filter, then keeps the output columns.
fn finish_batch(plan: &Plan, batch: RecordBatch) -> Result<RecordBatch> {
    let batch = match &plan.filter {
        Some(f) => filter_batch(&batch, f)?,
        None => batch,
    };
    project(&batch, &plan.output_cols, &plan.output_schema)
}

fn project(batch: &RecordBatch, cols: &[usize], schema: &SchemaRef) -> Result<RecordBatch> {
    let columns: Vec<ArrayRef> = cols.iter().map(|c| batch.column(*c).clone()).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// What the log fetches of a plan share.
fn log_source(plan: &Plan) -> LogSource {
    LogSource {
        table: plan.table.clone(),
        cols: plan.fetch_cols.clone(),
        projected: plan.projected,
        schema: plan.fetch_schema.clone(),
        window: plan.range,
    }
}
