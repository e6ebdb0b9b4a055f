//! Bounded reads: planning a read, running it (log buckets fetched in a pipeline, time
//! windows, the primary-key fold), and the latest view of primary-key tables.
//!
//! `plan` validates the options and takes every bucket's bounds; `fetch` fetches and decodes
//! log batches (shared with subscriptions); `pk_view` folds a primary-key changelog and
//! reads the latest view (ScanKv, or on Apache Fluss 0.9.x a replay of the changelog folded
//! per key). This module runs a plan.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

use super::expr::filter_batch;
use super::stream::{BatchStream, Emitter};
use crate::Result;

mod fetch;
mod pk_view;
mod plan;

pub(crate) use fetch::{fetch_once, with_changelog_columns, FetchColumns, FetchedBatch};
pub(crate) use pk_view::{latest_view_bucket, values_to_batch};
pub(crate) use plan::{log_count, plan, select_partitions, table_name, BucketRead, Plan};

use fetch::{BucketFetch, BucketPipeline};
use pk_view::{fold_bucket, read_kv_bucket};
use plan::Mode;

/// Starts a planned read.
pub(crate) fn run(plan: Plan) -> BatchStream {
    let schema = plan.output_schema.clone();
    let limit = plan.limit;
    BatchStream::spawn(schema, limit, move |mut emit| async move {
        let plan = Arc::new(plan);
        if matches!(plan.mode, Mode::Log | Mode::Changelog) {
            // Buckets are emitted one after the other (so `limit` stays exact), but the first
            // fetch of the next bucket is sent while the last response of the current one is
            // decoded.
            let mut buckets = plan.buckets.iter();
            let mut current = buckets.next().map(|b| log_pipeline(&plan, b));
            while let Some(mut pipe) = current.take() {
                if emit.is_done() {
                    break;
                }
                let mut next = buckets.next().map(|b| log_pipeline(&plan, b));
                if !read_log_bucket(&plan, &mut pipe, next.as_mut(), &mut emit).await? {
                    break;
                }
                current = next;
            }
            return Ok(());
        }
        for b in plan.buckets.clone() {
            if emit.is_done() {
                break;
            }
            let more = match plan.mode {
                Mode::Kv => read_kv_bucket(&plan, &b, &mut emit).await?,
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

/// The fetch pipeline of one planned log bucket.
fn log_pipeline(plan: &Plan, b: &BucketRead) -> BucketPipeline {
    BucketPipeline::new(BucketFetch {
        table: plan.table.clone(),
        read: b.clone(),
        cols: plan.fetch_cols.clone(),
        projected: plan.projected,
        schema: plan.fetch_schema.clone(),
        window: plan.range,
    })
}

/// Reads one bucket's log; returns false when the whole read should stop. Once the bucket's
/// last fetch is answered, the first fetch of `next` (the bucket read after it) is sent.
async fn read_log_bucket(
    plan: &Plan,
    pipe: &mut BucketPipeline,
    mut next: Option<&mut BucketPipeline>,
    emit: &mut Emitter,
) -> Result<bool> {
    while let Some(batches) = pipe.next_batches().await? {
        if pipe.pending.is_none() {
            if let Some(n) = next.take() {
                n.prime().await;
            }
        }
        for fb in batches {
            if let Some(r) = &plan.range {
                if r.is_after(fb.commit_timestamp) {
                    // Commit time never decreases within a bucket: nothing later is in the window.
                    return Ok(true);
                }
                if !r.contains(fb.commit_timestamp) {
                    continue;
                }
            }
            let working = if plan.mode == Mode::Changelog {
                with_changelog_columns(&fb)?
            } else {
                fb.rows
            };
            let out = finish_batch(plan, working)?;
            if !emit.emit(out).await {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
