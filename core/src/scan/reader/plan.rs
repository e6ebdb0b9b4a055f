//! Planning a bounded read: options checked, columns and partitions chosen, and the offset
//! bounds of every bucket taken at planning time.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_schema::{Field, Schema as ArrowSchema, SchemaRef};

use super::super::expr::{prune_partitions, Expr};
use super::super::time::{now_millis, retention_warning, PinnedRange, TimeRange};
use super::super::{changelog_meta_fields, resolve_projection, PartitionSelector, ScanBuilder};
use crate::client::{OffsetSpec, PartitionInfo, Table};
use crate::error::codes;
use crate::metadata::{DataType, LogFormat};
use crate::record::batch_memory::BatchMemory;
use crate::{Error, Result};

use super::fetch::FetchColumns;
use super::snapshot::{latest_snapshots, SnapshotRef};

/// One bucket to read: `[start, end)` in offsets, or the piece of it a
/// [`super::split::ReadSplit`] cut (`from`, `to`).
#[derive(Debug, Clone)]
pub(crate) struct BucketRead {
    pub partition_id: Option<i64>,
    pub partition_name: Option<String>,
    pub bucket: i32,
    pub start: i64,
    pub end: i64,
    /// A piece's cut: only the batches whose base offset is at or after `from` and before `to`
    /// are read, each whole within `[start, end)` (see [`super::split`]). None: uncut.
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl BucketRead {
    /// The offset the first fetch asks for.
    pub(crate) fn fetch_start(&self) -> i64 {
        self.from.map_or(self.start, |f| f.max(self.start))
    }

    /// The offset from which on no batch is read (a batch starting below it is read whole,
    /// up to `end`).
    pub(crate) fn fetch_end(&self) -> i64 {
        self.to.map_or(self.end, |t| t.min(self.end))
    }

    /// Whether a batch starting at `base_offset` belongs to the piece before this one.
    pub(crate) fn before_cut(&self, base_offset: i64) -> bool {
        self.from.is_some_and(|f| base_offset < f)
    }

    /// "bucket N" or "bucket N of partition 'p'", as error messages name it.
    pub(crate) fn describe(&self) -> String {
        match &self.partition_name {
            Some(p) => format!("bucket {} of partition '{p}'", self.bucket),
            None => format!("bucket {}", self.bucket),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Log records as they are.
    Log,
    /// Log records with the changelog metadata columns.
    Changelog,
    /// The window's changelog folded per key.
    PkFold,
    /// The latest view through ScanKv.
    Kv,
    /// Read-optimized: each bucket's latest KV snapshot, without the log after it.
    Snapshot,
}

/// A planned read.
pub(crate) struct Plan {
    pub table: Table,
    pub mode: Mode,
    /// Table columns fetched (ascending), what FetchLog's projection asks for.
    pub fetch_cols: Vec<usize>,
    /// The Arrow schema of the fetched columns.
    pub fetch_schema: SchemaRef,
    /// Whether the fetch projects (fewer columns than the table).
    pub projected: bool,
    /// For each output column, its index in the working batch.
    pub output_cols: Vec<usize>,
    pub output_schema: SchemaRef,
    pub filter: Option<Expr>,
    pub buckets: Vec<BucketRead>,
    pub range: Option<PinnedRange>,
    pub limit: Option<usize>,
    /// Primary-key columns within the fetched columns (fold) and their types.
    pub key_cols: Vec<usize>,
    pub key_types: Vec<DataType>,
    /// What the caller should be told about this read (e.g. a window reaching past retention).
    pub warnings: Vec<crate::Warning>,
    /// Read-optimized reads: the snapshot of each bucket that has one, by (partition, bucket),
    /// taken at planning time.
    pub snapshots: HashMap<(Option<i64>, i32), SnapshotRef>,
    /// A union read: the lake snapshot whose rows come first (each bucket's log is then read
    /// from the offset it recorded). Never set for a time-range read.
    pub lake_snapshot: Option<i64>,
    /// A primary-key table's union read: the lake snapshot whose merged state of each bucket
    /// the bucket's changelog from the recorded offset is folded over (see
    /// [`pk_union_candidate`]), with that state's read planned once for every bucket.
    pub kv_lake: Option<KvLake>,
    /// The buckets a union read's lake rows are kept of (None: all).
    pub lake_buckets: Option<Vec<i32>>,
    /// The partitions (Fluss's names) a union read's lake rows are kept of (None: all).
    pub lake_partitions: Option<Vec<String>>,
    /// The caller keeps every batch (see `ReadRequest::keep_batches`).
    pub keep_batches: bool,
    /// The rows the read returns, when its bounds alone tell (see [`expected_rows`]).
    pub expected_rows: Option<u64>,
}

/// The lake half of a primary-key union read: the lake snapshot (each bucket's recorded
/// offset) and its buckets' merged states, planned once per read so every bucket reads the
/// same snapshot from one scan plan.
pub(crate) struct KvLake {
    // without `lake` a plan never has one (see `pk_union_candidate`)
    #[cfg_attr(not(feature = "lake"), allow(dead_code))]
    pub snapshot: crate::client::LakeSnapshot,
    #[cfg(feature = "lake")]
    pub states: crate::lake::BucketStates,
}

/// Whether a plain read of `table` is a union read when the table has a lake snapshot: a
/// lake-enabled log table opened as itself (not as a lake view). Primary-key tables read
/// their latest view from the KV store, which holds every key the lake does.
pub(crate) fn union_candidate(table: &Table) -> bool {
    table.view == crate::client::TableView::Table
        && !table.info.descriptor.has_primary_key()
        && table.info.descriptor.lake_enabled()
}

/// Whether the latest view of `table` is a union read when the table has a lake snapshot: a
/// lake-enabled primary-key table opened as itself whose lake merges rows by key (Paimon).
/// As Fluss's batch union read: each bucket's lake state with the changelog after the lake's
/// offset folded over it, the log winning by key (a delete removes the key). The latest view
/// is the same with or without the lake; reading it this way needs no ScanKv, and no
/// changelog from offset 0 on Apache Fluss 0.9.x.
pub(crate) fn pk_union_candidate(table: &Table) -> bool {
    #[cfg(feature = "lake")]
    {
        table.view == crate::client::TableView::Table
            && table.info.descriptor.has_primary_key()
            && crate::lake::merges_by_key(&table.info)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = table;
        false
    }
}

/// The latest readable lake snapshot of a union read, as Fluss's union reads take it (None:
/// the table has none yet, read the log only).
#[cfg(feature = "lake")]
pub(crate) async fn union_snapshot(table: &Table) -> Result<Option<crate::client::LakeSnapshot>> {
    table
        .conn
        .admin()
        .find_lake_snapshot(&table.info.table_path, None, true)
        .await
}

/// Without feature `lake` a plain read is the Fluss log's.
#[cfg(not(feature = "lake"))]
pub(crate) async fn union_snapshot(_: &Table) -> Result<Option<crate::client::LakeSnapshot>> {
    Ok(None)
}

/// The lake half of `table`'s latest view when it is a union read (see
/// [`pk_union_candidate`]) and the table has a readable lake snapshot; None otherwise (the view
/// comes from the KV store alone).
pub(crate) async fn pk_union_lake(table: &Table) -> Result<Option<KvLake>> {
    if !pk_union_candidate(table) {
        return Ok(None);
    }
    match union_snapshot(table).await? {
        Some(snapshot) => Ok(Some(kv_lake_of(table, snapshot).await?)),
        None => Ok(None),
    }
}

/// [`KvLake`] of `snapshot`: the merged states of the table's buckets in it, planned once.
#[cfg(feature = "lake")]
async fn kv_lake_of(table: &Table, snapshot: crate::client::LakeSnapshot) -> Result<KvLake> {
    let full = table.info.schema().to_arrow();
    let states =
        crate::lake::bucket_states(table, snapshot.snapshot_id, &full, &table.view_name()).await?;
    Ok(KvLake { snapshot, states })
}

/// Without feature `lake` no read has a lake half.
#[cfg(not(feature = "lake"))]
async fn kv_lake_of(_: &Table, snapshot: crate::client::LakeSnapshot) -> Result<KvLake> {
    Ok(KvLake { snapshot })
}

pub(crate) fn table_name(table: &Table) -> String {
    table.info.table_path.to_string()
}

/// The partitions to read: all (or the selected ones), pruned by the filter. `[None]` for a
/// table without partitions.
pub(crate) async fn select_partitions(
    table: &Table,
    selected: Option<&[PartitionSelector]>,
    filter: Option<&Expr>,
) -> Result<Vec<Option<PartitionInfo>>> {
    let keys = &table.info.descriptor.partition_keys;
    if keys.is_empty() {
        if let Some(sel) = selected.filter(|s| !s.is_empty()) {
            crate::bail_invalid!(
                "table '{}' is not partitioned, but the read names partitions {:?}",
                table_name(table),
                sel
            );
        }
        return Ok(vec![None]);
    }
    let all = table.conn.partitions(&table.info.table_path).await?;
    let mut parts: Vec<PartitionInfo> =
        match selected {
            None => all,
            Some(sel) => {
                let mut out = Vec::new();
                for s in sel {
                    let name = match s {
                        PartitionSelector::Name(n) => n.clone(),
                        PartitionSelector::Spec(spec) => spec.resolve(keys)?.partition_name(),
                    };
                    match all.iter().find(|p| p.name == name) {
                        Some(p) => {
                            if !out
                                .iter()
                                .any(|o: &PartitionInfo| o.partition_id == p.partition_id)
                            {
                                out.push(p.clone())
                            }
                        }
                        None => {
                            return Err(Error::from_fluss(
                                codes::PARTITION_NOT_EXISTS,
                                format!(
                                "partition '{name}' of table '{}' does not exist; its partitions \
                                 are: {}",
                                table_name(table),
                                all.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                            ),
                            ))
                        }
                    }
                }
                out
            }
        };
    if let Some(f) = filter {
        parts = prune_partitions(keys, parts, f, |p| {
            keys.iter()
                .map(|k| p.spec.get(k).unwrap_or_default().to_string())
                .collect()
        });
    }
    Ok(parts.into_iter().map(Some).collect())
}

/// Offsets of every bucket of one partition (or of the table).
async fn offsets(
    table: &Table,
    partition_id: Option<i64>,
    spec: OffsetSpec,
) -> Result<BTreeMap<i32, i64>> {
    let buckets: Vec<i32> = (0..table.info.num_buckets()).collect();
    table
        .conn
        .admin()
        .list_offsets_by_id(table.info.table_id, partition_id, &buckets, spec)
        .await
}

fn future_start_error(e: Error, table: &Table, range: &PinnedRange) -> Error {
    if e.fluss_code() == Some(codes::INVALID_TIMESTAMP_EXCEPTION) {
        Error::invalid(format!(
            "time-range read of table '{}': the start timestamp {} is in the future for the \
             server (its clock is behind ours or the start is past now): {}",
            table_name(table),
            range.start_ms,
            e.message()
        ))
    } else {
        e
    }
}

/// Validates the options and takes the bounds of every bucket.
pub(crate) async fn plan(b: ScanBuilder) -> Result<Plan> {
    if let Some(e) = b.deferred {
        return Err(e);
    }
    let table = b.table;
    let info = table.info.clone();
    let name = table_name(&table);
    let has_pk = info.descriptor.has_primary_key();
    let full = info.schema().to_arrow();

    // --- options, all checked before any data is read
    let out_cols = resolve_projection(&table, &full, b.projection.as_deref())?;
    if let Some(f) = &b.filter {
        if b.changelog {
            let mut fields: Vec<Field> = changelog_meta_fields();
            fields.extend(full.fields().iter().map(|f| f.as_ref().clone()));
            f.validate(&ArrowSchema::new(fields))?;
        } else {
            f.validate(&full)?;
        }
    }
    let window = match b.between {
        None => None,
        Some((start, end)) => {
            if has_pk && b.read_optimized {
                crate::bail_invalid!(
                    "table '{name}': read-optimized mode must not be enabled for a time-range \
                     read: it skips log changes and reads only snapshots, so it cannot tell what \
                     changed in the window"
                );
            }
            TimeRange::from_options(start, end, &b.time_zone, "start", "end")?
        }
    };
    let now = now_millis();
    let mut warnings = Vec::new();
    let range = match &window {
        Some(w) => {
            let p = w.pin(now)?;
            let ttl = info.descriptor.log_ttl_ms().ok();
            warnings.extend(retention_warning(&name, &p, ttl, now));
            Some(p)
        }
        None => None,
    };

    if has_pk && b.read_optimized && b.changelog {
        crate::bail_invalid!(
            "table '{name}': read-optimized mode must not be enabled for a changelog read: it \
             reads only snapshots, which carry no changes"
        );
    }
    let mode = if b.changelog {
        Mode::Changelog
    } else if !has_pk {
        Mode::Log
    } else if range.is_some() {
        Mode::PkFold
    } else if b.read_optimized {
        Mode::Snapshot
    } else {
        Mode::Kv
    };
    if matches!(mode, Mode::Log | Mode::Changelog | Mode::PkFold) {
        let format = info.descriptor.log_format()?;
        if format != LogFormat::Arrow {
            return Err(Error::unsupported(format!(
                "table '{name}' has table.log.format {format}; Riverlet reads ARROW logs only"
            )));
        }
    }

    // --- which columns to fetch
    let filter_cols: Vec<usize> = match &b.filter {
        Some(f) => f
            .columns()
            .iter()
            .filter_map(|c| full.index_of(c).ok())
            .collect(),
        None => vec![],
    };
    let pk_cols: Vec<usize> = if mode == Mode::PkFold {
        info.schema().primary_key_indexes()
    } else {
        vec![]
    };
    let mut fetch_cols: Vec<usize> = out_cols
        .iter()
        .chain(&filter_cols)
        .chain(&pk_cols)
        .copied()
        .collect();
    fetch_cols.sort_unstable();
    fetch_cols.dedup();
    if matches!(mode, Mode::Kv | Mode::Snapshot) || !info.older_schemas.is_empty() {
        // ScanKv and snapshots return whole rows; batches of an older schema are fetched
        // whole and widened to the current one (see decode_batch).
        fetch_cols = (0..full.fields().len()).collect();
    }
    let projected = fetch_cols.len() < full.fields().len();
    let fetch_schema = Arc::new(full.project(&fetch_cols)?);
    let meta = if mode == Mode::Changelog { 3 } else { 0 };
    let output_cols: Vec<usize> = (0..meta)
        .chain(
            out_cols
                .iter()
                .map(|c| meta + fetch_cols.iter().position(|f| f == c).unwrap_or_default()),
        )
        .collect();
    let output_schema = {
        let mut fields: Vec<Field> = if meta > 0 {
            changelog_meta_fields()
        } else {
            vec![]
        };
        fields.extend(out_cols.iter().map(|i| full.field(*i).clone()));
        Arc::new(ArrowSchema::new(fields))
    };
    let types = info.schema().data_types();
    let key_cols: Vec<usize> = pk_cols
        .iter()
        .map(|c| fetch_cols.iter().position(|f| f == c).unwrap_or_default())
        .collect();
    let key_types: Vec<DataType> = pk_cols.iter().map(|c| types[*c].clone()).collect();

    // --- a union read: the lake snapshot's rows, then each bucket's log from the offset the
    // snapshot recorded. The snapshot is taken before the log ends are, so every row up to
    // them is in exactly one of the two. A time-range read never reads the lake.
    let lake = if mode == Mode::Log && range.is_none() && union_candidate(&table) {
        union_snapshot(&table).await?
    } else {
        None
    };
    let kv_lake = if mode == Mode::Kv {
        pk_union_lake(&table).await?
    } else {
        None
    };
    // --- partitions and bucket bounds
    let bucket_ids = super::super::request::select_buckets(&table, b.buckets.as_deref())?;
    let parts = select_partitions(&table, b.partitions.as_deref(), b.filter.as_ref()).await?;
    let part_names: Vec<String> = parts.iter().flatten().map(|p| p.name.clone()).collect();
    let mut buckets = Vec::new();
    let mut snapshots = HashMap::new();
    for p in parts {
        let (pid, pname) = match &p {
            Some(p) => (Some(p.partition_id), Some(p.name.clone())),
            None => (None, None),
        };
        if mode == Mode::Snapshot {
            let latest = latest_snapshots(&table, pname.as_deref()).await?;
            for (bucket, s) in latest {
                snapshots.insert((pid, bucket), s);
            }
        }
        if matches!(mode, Mode::Kv | Mode::Snapshot) {
            for &bucket in &bucket_ids {
                buckets.push(BucketRead {
                    partition_id: pid,
                    partition_name: pname.clone(),
                    bucket,
                    start: 0,
                    end: 0,
                    from: None,
                    to: None,
                });
            }
            continue;
        }
        let ends = offsets(&table, pid, OffsetSpec::Latest).await?;
        let starts = match &range {
            Some(r) => offsets(&table, pid, OffsetSpec::Timestamp(r.start_ms))
                .await
                .map_err(|e| future_start_error(e, &table, r))?,
            None => offsets(&table, pid, OffsetSpec::Earliest).await?,
        };
        for &bucket in &bucket_ids {
            let end = ends.get(&bucket).copied().unwrap_or(0);
            let mut start = starts.get(&bucket).copied().unwrap_or(end);
            if let Some(s) = &lake {
                start = start.max(s.start_offset(pid, bucket));
            }
            if start >= end {
                continue;
            }
            buckets.push(BucketRead {
                partition_id: pid,
                partition_name: pname.clone(),
                bucket,
                start,
                end,
                from: None,
                to: None,
            });
        }
    }
    let lake_buckets = match (&lake, &b.buckets) {
        (Some(_), Some(_)) => Some(bucket_ids.clone()),
        _ => None,
    };
    // A union read of selected partitions keeps those partitions' lake rows, matched by
    // Fluss's partition name (each partition's log is read from its own recorded offsets
    // above). Without a selection every lake row is read, those of partitions already dropped
    // from Fluss too, as Fluss's union read does.
    let lake_partitions = match (&lake, &b.partitions) {
        (Some(_), Some(_)) if info.descriptor.is_partitioned() => Some(part_names),
        _ => None,
    };
    let expected_rows = expected_rows(
        mode,
        b.filter.is_some(),
        lake.is_some(),
        range.as_ref(),
        now,
        &buckets,
        b.limit,
    );
    let mut plan = Plan {
        table,
        mode,
        fetch_cols,
        fetch_schema,
        projected,
        output_cols,
        output_schema,
        filter: b.filter,
        buckets,
        range,
        limit: b.limit,
        key_cols,
        key_types,
        warnings,
        snapshots,
        lake_buckets,
        lake_partitions,
        kv_lake,
        keep_batches: b.keep_batches,
        lake_snapshot: lake.map(|s| s.snapshot_id),
        expected_rows,
    };
    if let Some(split) = &b.split {
        super::split::restrict(&mut plan, split)?;
    }
    Ok(plan)
}

/// The rows a planned read returns, when its bounds alone tell: a read of log records (a log
/// table, or any table's changelog) without a filter and without lake rows returns one row per
/// offset in each bucket's `[start, end)`, so the sum over its buckets (at most `limit`). A
/// time window must end after `now` (an open end does): the end offsets taken at planning then
/// hold only records committed before its end, so none of them is left out. `None` otherwise:
/// a filter, a window ending in the past (it stops inside the offsets), a primary-key table's
/// latest view or folded window (one row per key, not per record), a union read's lake rows.
pub(crate) fn expected_rows(
    mode: Mode,
    filtered: bool,
    lake: bool,
    range: Option<&PinnedRange>,
    now: i64,
    buckets: &[BucketRead],
    limit: Option<usize>,
) -> Option<u64> {
    let records = matches!(mode, Mode::Log | Mode::Changelog);
    if !records || filtered || lake || range.is_some_and(|r| r.end_ms <= now) {
        return None;
    }
    let n: u64 = buckets
        .iter()
        .map(|b| (b.end - b.start).max(0) as u64)
        .sum();
    Some(limit.map_or(n, |l| n.min(l as u64)))
}

impl Plan {
    pub(super) fn fetch_columns(&self) -> FetchColumns<'_> {
        FetchColumns {
            cols: &self.fetch_cols,
            projected: self.projected,
            schema: &self.fetch_schema,
            memory: BatchMemory::PerBatch,
        }
    }
}

/// The number of records of a log table (of the selected partitions and buckets), from the
/// offsets of every bucket rather than by reading the records.
pub(crate) async fn log_count(
    table: &Table,
    partitions: Option<&[PartitionSelector]>,
    buckets: Option<&[i32]>,
) -> Result<u64> {
    let bucket_ids = super::super::request::select_buckets(table, buckets)?;
    let parts = select_partitions(table, partitions, None).await?;
    let mut total = 0u64;
    for p in parts {
        let pid = p.map(|p| p.partition_id);
        let ends = offsets(table, pid, OffsetSpec::Latest).await?;
        let starts = offsets(table, pid, OffsetSpec::Earliest).await?;
        for bucket in &bucket_ids {
            let end = ends.get(bucket).copied().unwrap_or(0);
            let start = starts.get(bucket).copied().unwrap_or(0);
            total += (end - start).max(0) as u64;
        }
    }
    Ok(total)
}
