//! Bounded reads: planning a read, running it (log buckets fetched in a pipeline, time
//! windows, the primary-key fold), and the latest view of primary-key tables.
//!
//! `plan` validates the options and takes every bucket's bounds; `fetch` builds FetchLogs and
//! decodes log batches (shared with subscriptions); `log_read` runs the fetches of a read ahead
//! of its parallel decoding; `pk_view` folds a primary-key changelog and
//! reads the latest view (ScanKv, or on Apache Fluss 0.9.x a replay of the changelog folded
//! per key) and KV snapshots' states, which `snapshot` finds and reads; `split` cuts a planned
//! log read into pieces read apart and `forward` hands a read out as Arrow IPC messages. This
//! module runs a plan.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

use super::expr::filter_batch;
use super::stream::BatchStream;
use crate::Result;

mod fetch;
mod forward;
mod log_read;
mod pk_view;
mod plan;
mod snapshot;
mod split;

pub(crate) use fetch::{fetch_once, with_changelog_columns, FetchColumns, FetchedBatch};
pub(crate) use forward::run_ipc;
pub(crate) use pk_view::{latest_view_bucket, values_to_batch};
pub(crate) use plan::{
    log_count, pk_union_lake, plan, select_partitions, table_name, union_candidate, union_snapshot,
    BucketRead, Plan,
};

pub use split::ReadSplit;
pub(crate) use split::{cut as cut_splits, splittable};

use log_read::{Finish, LogReader, LogSource, ReadMemory};
use pk_view::{fold_bucket, read_kv_bucket, read_snapshot_bucket};
use plan::Mode;

/// Starts a planned read.
pub(crate) fn run(plan: Plan) -> BatchStream {
    let schema = plan.output_schema.clone();
    let limit = plan.limit;
    BatchStream::spawn(schema, limit, move |mut emit| async move {
        let plan = Arc::new(plan);
        if matches!(plan.mode, Mode::Log | Mode::Changelog) {
            // Without feature `lake` the plan never has a lake part.
            #[cfg(not(feature = "lake"))]
            debug_assert!(
                plan.lake_snapshot.is_none()
                    && plan.lake_buckets.is_none()
                    && plan.lake_partitions.is_none()
            );
            #[cfg(feature = "lake")]
            if let Some(id) = plan.lake_snapshot {
                // The lake's rows first; the buckets' log reads start where it ends.
                debug_assert!(
                    plan.range.is_none(),
                    "a time-range read never reads the lake"
                );
                use futures::StreamExt as _;
                let name = plan.table.view_name();
                let mut lake = crate::lake::snapshot_batches(
                    &plan.table,
                    Some(id),
                    plan.lake_buckets.as_deref(),
                    plan.lake_partitions.as_deref(),
                    &plan.fetch_schema,
                    &name,
                )
                .await?;
                while let Some(b) = lake.next().await {
                    let out = finish_batch(&plan, b?)?;
                    if out.num_rows() > 0 && !emit.emit(out).await {
                        return Ok(());
                    }
                }
            }
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
        pushed: pushed_filter(plan),
        memory: ReadMemory::for_read(plan.keep_batches),
    }
}

/// The part of a log read's filter the server can decide from batch statistics (Fluss 1.0):
/// only for plain log reads of log tables, and only on columns of `table.statistics.columns`.
fn pushed_filter(plan: &Plan) -> Option<fetch::PushedFilter> {
    let filter = plan.filter.as_ref()?;
    let info = &plan.table.info;
    let d = &info.descriptor;
    if plan.mode != Mode::Log || d.has_primary_key() {
        return None;
    }
    let schema = &d.schema;
    let types = schema.data_types();
    let option = d
        .properties
        .get(crate::stats::STATISTICS_COLUMNS_OPTION)
        .map(String::as_str);
    let columns =
        crate::stats::statistics_columns(option, &schema.column_names(), &types, false).ok()??;
    let f = crate::stats::StatsFilter::from_expr(filter, schema, &columns)?;
    let predicate = f.to_proto(schema).ok()?;
    Some(fetch::PushedFilter {
        predicate,
        schema_id: info.schema_id,
    })
}
