//! Bounded reads of the lake views `db.t$lake` (the rows of the latest lake snapshot, the
//! table's columns then `__bucket`, `__offset`, `__timestamp`) and `db.t$lake$snapshots` (one
//! row per lake snapshot): which read options they take, their schemas, and the reads
//! (through `crate::lake`, feature `lake`; without it they are refused).
//!
//! They take columns, a filter, a limit and a batch size; a time-range window is refused (a
//! time-range read never reads the lake: it is a read of `db.t`), as are the options that only
//! mean something for the Fluss log (changelog, read-optimized, buckets, partitions).

use arrow_schema::SchemaRef;

use super::stream::BatchStream;
use super::ScanBuilder;
#[cfg(feature = "lake")]
use crate::client::TableView;
use crate::{Error, Result};

/// The full schema of a lake view (before projection).
pub(super) fn full_schema(b: &ScanBuilder) -> Result<SchemaRef> {
    #[cfg(feature = "lake")]
    {
        match b.table.view {
            TableView::LakeSnapshots => crate::lake::snapshots_schema(&b.table.info),
            _ => crate::lake::lake_schema(&b.table.info),
        }
    }
    #[cfg(not(feature = "lake"))]
    {
        Err(not_built(b))
    }
}

#[cfg(not(feature = "lake"))]
fn not_built(b: &ScanBuilder) -> Error {
    Error::unsupported(format!(
        "{}: this Riverlet was built without its `lake` feature (lake reads)",
        b.table.view_name()
    ))
}

/// Refuses the options a lake view does not take.
fn check_options(b: &ScanBuilder) -> Result<()> {
    let name = b.table.view_name();
    let base = &b.table.info.table_path;
    if b.between.is_some() {
        return Err(Error::invalid(format!(
            "{name}: a time-range read never reads the lake; read table '{base}' with the window \
             instead"
        )));
    }
    let refused = [
        (b.changelog, "a changelog read"),
        (b.read_optimized, "read-optimized mode"),
        (b.buckets.is_some(), "a bucket selection"),
        (b.partitions.is_some(), "a partition selection"),
    ];
    if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
        return Err(Error::invalid(format!(
            "{name}: {what} does not apply to a lake view (it reads the Fluss log of '{base}')"
        )));
    }
    Ok(())
}

/// Plans and starts the read of a lake view.
pub(super) async fn execute(b: ScanBuilder) -> Result<BatchStream> {
    if let Some(e) = b.deferred.clone() {
        return Err(e);
    }
    check_options(&b)?;
    let full = full_schema(&b)?;
    let cols = super::resolve_projection(&b.table, &full, b.projection.as_deref())?;
    if let Some(f) = &b.filter {
        f.validate(&full)?;
    }
    let out_schema = std::sync::Arc::new(full.project(&cols)?);
    #[cfg(not(feature = "lake"))]
    {
        let _ = out_schema;
        Err(not_built(&b))
    }
    #[cfg(feature = "lake")]
    {
        let name = b.table.view_name();
        let batch_size = b.batch_size;
        let stream = match b.table.view {
            TableView::LakeSnapshots => {
                let all = crate::lake::snapshots(&b.table, &name).await?;
                let all = match &b.filter {
                    Some(f) => super::filter_batch(&all, f)?,
                    None => all,
                };
                let mut out = all.project(&cols)?;
                if let Some(l) = b.limit {
                    out = out.slice(0, l.min(out.num_rows()));
                }
                BatchStream::from_batches(out_schema, vec![out])
            }
            _ => {
                // Opened now, so a missing catalog or table fails the read, not the stream.
                let mut batches =
                    crate::lake::snapshot_batches(&b.table, None, None, None, &full, &name).await?;
                let filter = b.filter.clone();
                BatchStream::spawn(out_schema, b.limit, move |mut emit| async move {
                    use futures::StreamExt as _;
                    while let Some(batch) = batches.next().await {
                        let batch = match &filter {
                            Some(f) => super::filter_batch(&batch?, f)?,
                            None => batch?,
                        };
                        if batch.num_rows() > 0 && !emit.emit(batch.project(&cols)?).await {
                            break;
                        }
                    }
                    Ok(())
                })
            }
        };
        Ok(stream.with_max_rows(batch_size))
    }
}
