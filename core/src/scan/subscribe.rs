//! [`Subscription`]: an unbounded stream of a table's changes from a startup mode.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::reader::{
    fetch_once, latest_view_bucket, select_partitions, table_name, union_candidate, union_snapshot,
    with_changelog_columns, BucketRead, FetchColumns, FetchedBatch,
};
use super::request::{select_buckets, BucketOffset, SubscribeRequest};
use super::resolve_projection;
use super::time::{parse_timestamp, TimeZoneSpec};
use crate::client::{OffsetSpec, Table};
use crate::record::batch_memory::BatchMemory;
use crate::record::ChangeType;
use crate::{Error, Result};

/// Where a subscription starts (Fluss's `scan.startup.mode`; the default is `full`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartupMode {
    /// Log tables: from the earliest offset; a lake-enabled log table without partitions that
    /// has a lake snapshot (feature `lake`): the snapshot's rows (as inserts), then each
    /// bucket's log from the offset the snapshot recorded. Primary-key tables: a snapshot of the current state (as
    /// inserts, through ScanKv), then the log from the snapshot's offset.
    #[default]
    Full,
    /// From the earliest retained offset.
    Earliest,
    /// From the high watermark: only changes committed after subscribing.
    Latest,
    /// From the first batch committed at or after this epoch-millisecond timestamp.
    Timestamp(i64),
}

const STARTUP_WORDS: &str = "'full', 'earliest', 'latest' and 'timestamp'";

impl StartupMode {
    /// Parses `full`, `earliest`, `latest` or `timestamp:<epoch ms>` (any case).
    pub fn parse(text: &str) -> Result<StartupMode> {
        match Self::parse_word(text)? {
            Some(m) => Ok(m),
            None => Err(Error::invalid(format!(
                "Unsupported scan start up mode: {text}. Supported values are 'full', \
                 'earliest', 'latest' and 'timestamp:<epoch ms>'. For a time-range batch \
                 read use between(start, end) instead."
            ))),
        }
    }

    /// A startup word (`full`, `earliest`, `latest`, `timestamp:<epoch ms>`), None when the
    /// text is none of them; an error for `timestamp:` followed by something else.
    fn parse_word(text: &str) -> Result<Option<StartupMode>> {
        let t = text.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "full" => Some(StartupMode::Full),
            "earliest" => Some(StartupMode::Earliest),
            "latest" => Some(StartupMode::Latest),
            _ => match t.strip_prefix("timestamp:") {
                Some(v) => Some(StartupMode::Timestamp(v.trim().parse::<i64>().map_err(
                    |_| {
                        Error::invalid(format!(
                            "Unsupported scan start up mode: {text}. 'timestamp:' must be \
                             followed by epoch milliseconds"
                        ))
                    },
                )?)),
                None => None,
            },
        })
    }

    /// A startup word as [`StartupMode::parse`] takes it, or else a timestamp text (epoch
    /// milliseconds, `yyyy-MM-dd HH:mm:ss`, ...) read in `tz`: the one-argument form bindings
    /// offer (`subscribe(start="latest")`, `subscribe(start="2024-01-01 08:00:00")`).
    pub fn from_text(text: &str, tz: &TimeZoneSpec) -> Result<StartupMode> {
        if let Some(m) = Self::parse_word(text)? {
            return Ok(m);
        }
        match parse_timestamp(text, tz) {
            Ok(ms) => Ok(StartupMode::Timestamp(ms)),
            Err(e) => Err(Error::invalid(format!(
                "Unsupported scan start up mode: {text}. Give one of {STARTUP_WORDS} or a \
                 timestamp ({})",
                e.message()
            ))),
        }
    }

    /// Fluss's option pair: `scan.startup.mode` (`full` when None, `earliest`, `latest`,
    /// `timestamp`) and `scan.startup.timestamp` (epoch milliseconds or `yyyy-MM-dd HH:mm:ss`
    /// in `tz`), which `timestamp` requires and the other modes must not be given.
    pub fn from_options(
        mode: Option<&str>,
        timestamp: Option<&str>,
        tz: &TimeZoneSpec,
    ) -> Result<StartupMode> {
        let word = mode.unwrap_or("full").trim().to_ascii_lowercase();
        let mode = match word.as_str() {
            "timestamp" => {
                let Some(ts) = timestamp else {
                    crate::bail_invalid!(
                        "'scan.startup.timestamp' is required when 'scan.startup.mode' is \
                         'timestamp'"
                    );
                };
                let ms = super::time::TimePoint::from(ts).resolve(tz, "scan.startup.timestamp")?;
                return Ok(StartupMode::Timestamp(ms));
            }
            "full" | "earliest" | "latest" => Self::parse(&word)?,
            _ => crate::bail_invalid!(
                "Unsupported scan start up mode: {}. Supported values are {STARTUP_WORDS}",
                mode.unwrap_or_default()
            ),
        };
        if let Some(ts) = timestamp {
            crate::bail_invalid!(
                "'scan.startup.timestamp' ({ts}) is only used with 'scan.startup.mode' = \
                 'timestamp', not '{word}'"
            );
        }
        Ok(mode)
    }
}

/// One batch of changes of one bucket.
#[derive(Debug, Clone)]
pub struct ChangeBatch {
    /// The partition id (None for a table without partitions).
    pub partition_id: Option<i64>,
    /// The partition name.
    pub partition_name: Option<String>,
    /// The bucket.
    pub bucket: i32,
    /// The log offset of the first row (-1 for snapshot rows of a full startup).
    pub first_offset: i64,
    /// The commit timestamp of the rows (-1 for snapshot rows).
    pub commit_timestamp: i64,
    /// One change type per row.
    pub change_types: Vec<ChangeType>,
    /// The rows (the subscription's projected schema).
    pub batch: RecordBatch,
}

impl ChangeBatch {
    /// The log offset of each row (all -1 for snapshot rows).
    pub fn offsets(&self) -> Vec<i64> {
        let n = self.batch.num_rows() as i64;
        if self.first_offset < 0 {
            return vec![-1; n as usize];
        }
        (0..n).map(|i| self.first_offset + i).collect()
    }

    /// The rows with `_change_type`, `_log_offset`, `_commit_timestamp` columns in front.
    pub fn to_changelog_batch(&self) -> Result<RecordBatch> {
        with_changelog_columns(&FetchedBatch {
            commit_timestamp: self.commit_timestamp,
            first_offset: self.first_offset,
            change_types: Some(self.change_types.clone()),
            rows: self.batch.clone(),
        })
    }
}

#[derive(Debug, Clone)]
struct Position {
    read: BucketRead,
    offset: i64,
}

/// An unbounded reader of a table's changes. [`Subscription::poll`] returns what arrived.
#[derive(Debug)]
pub struct Subscription {
    table: Table,
    positions: Vec<Position>,
    fetch_cols: Vec<usize>,
    out_pos: Vec<usize>,
    fetch_schema: SchemaRef,
    schema: SchemaRef,
    projected: bool,
    pending: VecDeque<ChangeBatch>,
    next_bucket: usize,
}

impl Subscription {
    pub(crate) async fn start(table: Table, request: &SubscribeRequest) -> Result<Subscription> {
        let info = table.info.clone();
        let full = info.schema().to_arrow();
        let out_cols = resolve_projection(&table, &full, request.columns.as_deref())?;
        let mut fetch_cols = out_cols.clone();
        fetch_cols.sort_unstable();
        fetch_cols.dedup();
        if !info.older_schemas.is_empty() {
            // Batches of an older schema are fetched whole and widened here (see decode_batch).
            fetch_cols = (0..full.fields().len()).collect();
        }
        let out_pos: Vec<usize> = out_cols
            .iter()
            .map(|c| fetch_cols.iter().position(|f| f == c).unwrap_or_default())
            .collect();
        let projected = fetch_cols.len() < full.fields().len();
        let fetch_schema = Arc::new(full.project(&fetch_cols)?);
        let schema = Arc::new(full.project(&out_cols)?);
        let buckets = select_buckets(&table, request.buckets.as_deref())?;
        if let Some(bad) = request.start_offsets.iter().find(|o| o.offset < 0) {
            crate::bail_invalid!(
                "subscription to table '{}': start offset {bad} is negative",
                table_name(&table)
            );
        }
        let parts = select_partitions(&table, request.partitions.as_deref(), None).await?;
        let mode = request.startup_mode;
        let mut used = vec![false; request.start_offsets.len()];
        let mut positions = Vec::new();
        let mut pending = VecDeque::new();
        let pk_full = mode == StartupMode::Full && info.descriptor.has_primary_key();
        // A full start of a lake-enabled log table: the lake snapshot's rows first, then each
        // bucket's log from the offset the snapshot recorded. A subscription resumed from
        // explicit offsets (a checkpoint) never reads the lake; nor (yet) one of a partitioned
        // table, whose lake rows would need their partition: it reads the log from earliest.
        let lake = if mode == StartupMode::Full
            && request.start_offsets.is_empty()
            && !info.descriptor.is_partitioned()
            && union_candidate(&table)
        {
            union_snapshot(&table).await?
        } else {
            None
        };
        #[cfg(feature = "lake")]
        if let Some(s) = &lake {
            lake_rows(
                &table,
                s.snapshot_id,
                &buckets,
                &out_cols,
                &schema,
                &mut pending,
            )
            .await?;
        }
        for p in parts {
            let (pid, pname) = match &p {
                Some(p) => (Some(p.partition_id), Some(p.name.clone())),
                None => (None, None),
            };
            // Explicit start offsets first; the startup mode decides the other buckets.
            let mut explicit = BTreeMap::new();
            for (i, o) in request.start_offsets.iter().enumerate() {
                if let Some(b) = buckets.iter().find(|b| o.names(pid, pname.as_deref(), **b)) {
                    explicit.insert(*b, o.offset);
                    used[i] = true;
                }
            }
            let by_mode: Vec<i32> = buckets
                .iter()
                .copied()
                .filter(|b| !explicit.contains_key(b))
                .collect();
            let spec = match mode {
                StartupMode::Full | StartupMode::Earliest => OffsetSpec::Earliest,
                StartupMode::Latest => OffsetSpec::Latest,
                StartupMode::Timestamp(t) => OffsetSpec::Timestamp(t),
            };
            let offsets = if pk_full || by_mode.is_empty() {
                Default::default()
            } else {
                table
                    .conn
                    .admin()
                    .list_offsets_by_id(info.table_id, pid, &by_mode, spec)
                    .await?
            };
            for bucket in &buckets {
                let read = BucketRead {
                    partition_id: pid,
                    partition_name: pname.clone(),
                    bucket: *bucket,
                    start: 0,
                    end: 0,
                };
                let offset = if let Some(o) = explicit.get(bucket) {
                    *o
                } else if pk_full {
                    let (batches, log_offset) = latest_view_bucket(&table, &read, None).await?;
                    for b in batches {
                        let rows = project_cols(&b, &out_cols, &schema)?;
                        pending.push_back(ChangeBatch {
                            partition_id: pid,
                            partition_name: pname.clone(),
                            bucket: *bucket,
                            first_offset: -1,
                            commit_timestamp: -1,
                            change_types: vec![ChangeType::Insert; rows.num_rows()],
                            batch: rows,
                        });
                    }
                    log_offset
                } else {
                    let earliest = offsets.get(bucket).copied().unwrap_or(0);
                    match &lake {
                        Some(s) => earliest.max(s.start_offset(pid, *bucket)),
                        None => earliest,
                    }
                };
                positions.push(Position { read, offset });
            }
        }
        if let Some(i) = used.iter().position(|u| !u) {
            crate::bail_invalid!(
                "subscription to table '{}': start offset of {} names no bucket the \
                 subscription reads (partition missing or not selected, or bucket not selected)",
                table_name(&table),
                request.start_offsets[i]
            );
        }
        Ok(Subscription {
            table,
            positions,
            fetch_cols,
            out_pos,
            fetch_schema,
            schema,
            projected,
            pending,
            next_bucket: 0,
        })
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The next offset of every bucket read: what a checkpoint stores, and what
    /// [`SubscribeRequest::start_offsets`] takes to resume from it. Rows returned by
    /// [`Subscription::poll`] are before these offsets; snapshot rows of a `full` startup not
    /// yet returned by `poll` (the KV snapshot of a primary-key table, or the lake snapshot of
    /// a lake-enabled log table, whose rows are before the offsets it recorded) are not
    /// covered (checkpoint after the first poll).
    pub fn position(&self) -> Vec<BucketOffset> {
        self.positions
            .iter()
            .map(|p| BucketOffset {
                partition_id: p.read.partition_id,
                partition_name: p.read.partition_name.clone(),
                bucket: p.read.bucket,
                offset: p.offset,
            })
            .collect()
    }

    /// Waits up to `timeout` for changes and returns what arrived (possibly nothing).
    pub async fn poll(&mut self, timeout: Duration) -> Result<Vec<ChangeBatch>> {
        if !self.pending.is_empty() {
            return Ok(self.pending.drain(..).collect());
        }
        let deadline = Deadline::after(timeout);
        loop {
            let mut out = Vec::new();
            for _ in 0..self.positions.len() {
                let i = self.next_bucket % self.positions.len().max(1);
                self.next_bucket = self.next_bucket.wrapping_add(1);
                let pos = self.positions[i].clone();
                let (batches, next, _) = fetch_once(
                    &self.table,
                    &pos.read,
                    pos.offset,
                    None,
                    &FetchColumns {
                        cols: &self.fetch_cols,
                        projected: self.projected,
                        schema: &self.fetch_schema,
                        memory: BatchMemory::PerBatch,
                    },
                    Some(0),
                    None,
                )
                .await?;
                self.positions[i].offset = next.max(pos.offset);
                for fb in batches {
                    let n = fb.rows.num_rows();
                    let batch = project_cols(&fb.rows, &self.out_pos, &self.schema)?;
                    out.push(ChangeBatch {
                        partition_id: pos.read.partition_id,
                        partition_name: pos.read.partition_name.clone(),
                        bucket: pos.read.bucket,
                        first_offset: fb.first_offset,
                        commit_timestamp: fb.commit_timestamp,
                        change_types: fb
                            .change_types
                            .unwrap_or_else(|| vec![ChangeType::AppendOnly; n]),
                        batch,
                    });
                }
            }
            if !out.is_empty() || deadline.passed() {
                return Ok(out);
            }
            tokio::time::sleep(deadline.remaining().min(Duration::from_millis(20))).await;
        }
    }
}

/// The rows of the table's lake snapshot `snapshot_id` of `buckets`, as inserts of the
/// subscription's columns, one [`ChangeBatch`] per bucket and lake batch (a table without
/// partitions).
#[cfg(feature = "lake")]
async fn lake_rows(
    table: &Table,
    snapshot_id: i64,
    buckets: &[i32],
    out_cols: &[usize],
    schema: &SchemaRef,
    pending: &mut VecDeque<ChangeBatch>,
) -> Result<()> {
    use futures::StreamExt as _;
    let bucket_col = crate::lake::SYSTEM_COLUMNS[0];
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(arrow_schema::Field::new(
        bucket_col,
        arrow_schema::DataType::Int32,
        true,
    )));
    let target = Arc::new(arrow_schema::Schema::new(fields));
    let name = table.view_name();
    let mut lake =
        crate::lake::snapshot_batches(table, Some(snapshot_id), Some(buckets), &target, &name)
            .await?;
    let n_out = out_cols.len();
    let split = BucketSplit::new(buckets);
    while let Some(b) = lake.next().await {
        for (bucket, rows) in split.split(&b?, n_out, schema, &name)? {
            pending.push_back(ChangeBatch {
                partition_id: None,
                partition_name: None,
                bucket,
                first_offset: -1,
                commit_timestamp: -1,
                change_types: vec![ChangeType::Insert; rows.num_rows()],
                batch: rows,
            });
        }
    }
    Ok(())
}

/// Splits lake batches by their `__bucket` column among subscribed buckets, in one pass over
/// the column per batch.
#[cfg(feature = "lake")]
struct BucketSplit<'a> {
    /// The subscribed buckets, in the order their batches are returned.
    buckets: &'a [i32],
    /// The slot of each subscribed bucket (its first place in `buckets`).
    slot_of: std::collections::HashMap<i32, usize>,
}

#[cfg(feature = "lake")]
impl<'a> BucketSplit<'a> {
    fn new(buckets: &'a [i32]) -> Self {
        let mut slot_of = std::collections::HashMap::new();
        for (i, &bucket) in buckets.iter().enumerate() {
            slot_of.entry(bucket).or_insert(i);
        }
        BucketSplit { buckets, slot_of }
    }

    /// The rows of `batch` of each subscribed bucket that has any, in `buckets` order, each
    /// in batch order and with the first `n_out` columns as `schema`; column `n_out` is the
    /// INT bucket (rows with a null or an unsubscribed bucket are left out). `name` names the
    /// table in errors.
    fn split(
        &self,
        batch: &RecordBatch,
        n_out: usize,
        schema: &SchemaRef,
        name: &str,
    ) -> Result<Vec<(i32, RecordBatch)>> {
        use arrow_array::Array as _;
        let bucket_col = crate::lake::SYSTEM_COLUMNS[0];
        let ids = batch
            .columns()
            .get(n_out)
            .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int32Array>())
            .ok_or_else(|| Error::invalid(format!("{name}: lake rows without INT {bucket_col}")))?;
        let n = batch.num_rows();
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); self.buckets.len()];
        for (row, id) in ids.iter().enumerate() {
            if let Some(&slot) = id.and_then(|id| self.slot_of.get(&id)) {
                let row = u32::try_from(row).map_err(|_| {
                    Error::invalid(format!("{name}: a lake batch of {n} rows is too long"))
                })?;
                groups[slot].push(row);
            }
        }
        let out_pos: Vec<usize> = (0..n_out).collect();
        let projected = project_cols(batch, &out_pos, schema)?;
        let mut out = Vec::new();
        for &bucket in self.buckets {
            let Some(rows) = self.slot_of.get(&bucket).and_then(|&s| groups.get(s)) else {
                continue;
            };
            if rows.is_empty() {
                continue;
            }
            // A batch of one bucket (a lake data file holds one bucket's rows) is taken whole.
            let rows = if rows.len() == n {
                projected.clone()
            } else {
                let indices = arrow_array::UInt32Array::from_iter_values(rows.iter().copied());
                arrow_select::take::take_record_batch(&projected, &indices)?
            };
            out.push((bucket, rows));
        }
        Ok(out)
    }
}

fn project_cols(batch: &RecordBatch, cols: &[usize], schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = cols.iter().map(|c| batch.column(*c).clone()).collect();
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// The moment a wait of `timeout` from now ends. A timeout too long to add to the clock (e.g.
/// `Duration::MAX`, or a binding's `poll(1e19)` seconds) never ends instead of overflowing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// `timeout` from now.
    pub fn after(timeout: Duration) -> Deadline {
        Deadline(Instant::now().checked_add(timeout))
    }
    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        self.0.is_some_and(|d| Instant::now() >= d)
    }
    /// The time left (`Duration::MAX` for a deadline that never ends).
    pub fn remaining(&self) -> Duration {
        self.0.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        })
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn huge_timeouts_never_end_instead_of_overflowing() {
        for t in [Duration::MAX, Duration::from_secs_f64(1e19)] {
            let d = Deadline::after(t);
            assert!(!d.passed());
            assert!(d.remaining() > Duration::from_secs(86_400 * 365));
        }
        let d = Deadline::after(Duration::ZERO);
        assert!(d.passed());
        assert_eq!(d.remaining(), Duration::ZERO);
    }
}

#[cfg(all(test, feature = "lake"))]
mod bucket_split_tests {
    use super::*;
    use arrow_array::{Array as _, Int32Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    fn out_schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]))
    }

    /// A lake batch: `id` i, `name` "n{i}" (null for every third row), `__bucket` as given.
    fn lake_batch(buckets: &[Option<i32>]) -> RecordBatch {
        let mut fields: Vec<Field> = out_schema()
            .fields()
            .iter()
            .map(|f| (**f).clone())
            .collect();
        fields.push(Field::new("__bucket", DataType::Int32, true));
        let n = buckets.len() as i64;
        RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            vec![
                Arc::new(Int64Array::from_iter_values(0..n)),
                Arc::new(StringArray::from_iter(
                    (0..n).map(|i| (i % 3 != 0).then(|| format!("n{i}"))),
                )),
                Arc::new(Int32Array::from(buckets.to_vec())),
            ],
        )
        .unwrap()
    }

    /// (id, name) of each row.
    fn rows(b: &RecordBatch) -> Vec<(i64, Option<String>)> {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let names = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        (0..b.num_rows())
            .map(|i| {
                (
                    ids.value(i),
                    names.is_valid(i).then(|| names.value(i).to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn each_subscribed_bucket_gets_its_rows_in_batch_order() {
        let ids = [
            Some(2),
            Some(0),
            None,
            Some(1),
            Some(2),
            Some(5),
            Some(0),
            Some(2),
        ];
        let batch = lake_batch(&ids);
        let all = rows(&project_cols(&batch, &[0, 1], &out_schema()).unwrap());
        let subscribed = [2, 0, 7, 2];
        let got = BucketSplit::new(&subscribed)
            .split(&batch, 2, &out_schema(), "db.t")
            .unwrap();
        // Expected from the input: each subscribed bucket with rows, in subscription order
        // (a bucket listed twice comes twice), its rows in batch order.
        let mut want = Vec::new();
        for b in subscribed {
            let mine: Vec<_> = (0..ids.len())
                .filter(|&i| ids[i] == Some(b))
                .map(|i| all[i].clone())
                .collect();
            if !mine.is_empty() {
                want.push((b, mine));
            }
        }
        let got: Vec<_> = got
            .iter()
            .map(|(b, r)| {
                assert_eq!(r.schema(), out_schema());
                (*b, rows(r))
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [2, 0, 2]);
        assert!(batch.column(1).null_count() > 0);

        // A batch of one bucket comes whole.
        let one = lake_batch(&[Some(1); 5]);
        let got = BucketSplit::new(&[0, 1])
            .split(&one, 2, &out_schema(), "db.t")
            .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 1);
        assert_eq!(
            rows(&got[0].1),
            rows(&project_cols(&one, &[0, 1], &out_schema()).unwrap())
        );

        // No bucket column: an error naming the table and the column.
        let e = BucketSplit::new(&[0])
            .split(&one, 3, &out_schema(), "db.t")
            .unwrap_err();
        assert!(
            e.message().contains("db.t") && e.message().contains("__bucket"),
            "{e}"
        );
    }
}
