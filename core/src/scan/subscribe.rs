//! [`Subscription`]: an unbounded stream of a table's changes from a startup mode.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::reader::{
    fetch_once, latest_view_bucket, pk_union_lake, select_partitions, table_name, union_candidate,
    union_snapshot, with_changelog_columns, BucketRead, FetchColumns, FetchedBatch,
};
use super::request::{select_buckets, BucketOffset, SubscribeRequest};
use super::resolve_projection;
use super::time::{parse_timestamp, TimeZoneSpec};
use crate::client::{recoverable_by_refresh, OffsetSpec, Table};
use crate::record::batch_memory::BatchMemory;
use crate::record::ChangeType;
use crate::{Error, Result};

/// How long the server may hold a subscription's fetch when the bucket has nothing new (Fluss's
/// `client.scanner.log.fetch.wait-max-time` default): an idle subscription asks twice a second
/// per bucket instead of spinning.
const FETCH_WAIT: Duration = Duration::from_millis(500);
/// After an empty answer a bucket is asked again after this pause, so a server that answers at
/// once (no long poll) is not asked in a tight loop.
const EMPTY_PAUSE: Duration = Duration::from_millis(20);
/// A fetch unanswered for this long is suspect: the table's leaders are asked again, and when
/// the bucket has a new leader the fetch is dropped and sent there. A leader that is alive but
/// does not answer (frozen, partitioned) keeps its connection open, so without this the bucket
/// would wait the whole request timeout after its leadership had already moved.
const LEADER_CHECK_AFTER: Duration = Duration::from_secs(2);

/// Where a subscription starts (Fluss's `scan.startup.mode`; the default is `full`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartupMode {
    /// Log tables: from the earliest offset; a lake-enabled log table without partitions that
    /// has a lake snapshot (feature `lake`): the snapshot's rows (as inserts), then each
    /// bucket's log from the offset the snapshot recorded. Primary-key tables: each bucket's
    /// latest view (as inserts: through ScanKv, or KV snapshots and the changelog; with a
    /// Paimon lake snapshot, the lake's merged state with the changelog after it folded over),
    /// then the log from the offset that view reflects.
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
    /// The partition id (None for a table without partitions, and for the lake rows a
    /// `full` startup returns of a partition already dropped from Fluss).
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

/// What one fetch of a bucket returns: the decoded batches and the next offset.
type Fetched = Result<(Vec<FetchedBatch>, i64)>;

/// A bucket's fetch on its way: started at `started`, answer pending.
struct InFlight {
    /// The leader the cached metadata named when it started (None: not known yet; the fetch
    /// asks the cluster itself and is not checked for a leader move).
    address: Option<String>,
    started: Instant,
    /// When its leader was last checked (it starts as `started`).
    checked: Instant,
    /// The fetch runs as a task of its own: it makes progress between polls, and a fetch
    /// waiting inside a metadata refresh never holds the connection's refresh lock while the
    /// caller is doing something else (a writer of the same connection would wait on it).
    answer: tokio::task::JoinHandle<Fetched>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // A fetch given up (the leader moved, the subscription was dropped) stops here; its
        // answer, if the server ever sends one, is discarded unread.
        self.answer.abort();
    }
}

/// Where each bucket's reading stands between polls.
#[derive(Default)]
struct BucketState {
    in_flight: Option<InFlight>,
    /// Not asked again before this (after an empty answer or a transient failure).
    not_before: Option<Instant>,
    /// Transient failures in a row (the backoff grows with them).
    failures: u32,
}

impl std::fmt::Debug for BucketState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketState")
            .field("in_flight_to", &self.in_flight.as_ref().map(|i| &i.address))
            .field("not_before", &self.not_before)
            .field("failures", &self.failures)
            .finish()
    }
}

/// An unbounded reader of a table's changes. [`Subscription::poll`] returns what arrived.
///
/// Every bucket has at most one fetch in flight, sent to its leader; the fetches of all buckets
/// run at once and outlive a `poll` that returns before they are answered, so a slow or dead
/// server holds up only the buckets it leads. Errors Fluss's own log scanner recovers from (the
/// leader moved or is not known yet, the connection broke, a timeout) are not returned: the
/// bucket's metadata is asked again and it is read from the same offset, after a backoff. Other
/// errors are returned by `poll`, after the rows fetched before them.
#[derive(Debug)]
pub struct Subscription {
    table: Table,
    positions: Vec<Position>,
    buckets: Vec<BucketState>,
    fetch_cols: Arc<[usize]>,
    out_pos: Vec<usize>,
    fetch_schema: SchemaRef,
    schema: SchemaRef,
    projected: bool,
    pending: VecDeque<ChangeBatch>,
    /// An error to return from the next poll (it came with rows that were returned first).
    failed: Option<Error>,
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
        // bucket's log (of each partition) from the offset the snapshot recorded, as Fluss's
        // streaming union read pairs a partition's lake splits with its log by partition name.
        // A subscription resumed from explicit offsets (a checkpoint) never reads the lake.
        let lake = if mode == StartupMode::Full
            && request.start_offsets.is_empty()
            && union_candidate(&table)
        {
            union_snapshot(&table).await?
        } else {
            None
        };
        // A full start of a primary-key table whose lake merges by key (Paimon): each bucket's
        // latest view is read as a batch union read reads it (the lake's merged state with the
        // changelog after it folded over), as Fluss's streaming union read starts from the lake
        // snapshot; the log follows from where that view ends.
        let kv_lake = if pk_full && request.start_offsets.is_empty() {
            pk_union_lake(&table).await?
        } else {
            None
        };
        #[cfg(feature = "lake")]
        if let Some(s) = &lake {
            let selected = request.partitions.is_some() && info.descriptor.is_partitioned();
            lake_rows(
                &table,
                s.snapshot_id,
                &buckets,
                (&parts, selected),
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
                    from: None,
                    to: None,
                };
                let offset = if let Some(o) = explicit.get(bucket) {
                    *o
                } else if pk_full {
                    let (batches, log_offset) =
                        latest_view_bucket(&table, &read, None, kv_lake.as_ref()).await?;
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
            buckets: positions.iter().map(|_| BucketState::default()).collect(),
            positions,
            fetch_cols: fetch_cols.into(),
            out_pos,
            fetch_schema,
            schema,
            projected,
            pending,
            failed: None,
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

    /// Waits up to `timeout` for changes and returns what arrived (possibly nothing). The
    /// buckets that delivered rows are already fetching their next rows when it returns (at
    /// most one answer per bucket waits for the next poll); [`Subscription::position`] counts
    /// only the rows returned.
    pub async fn poll(&mut self, timeout: Duration) -> Result<Vec<ChangeBatch>> {
        if !self.pending.is_empty() {
            return Ok(self.pending.drain(..).collect());
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let deadline = Deadline::after(timeout);
        let mut out = Vec::new();
        loop {
            self.send_fetches(deadline.remaining().min(FETCH_WAIT));
            let answered = self.next_answers(&deadline).await;
            for (i, answer) in answered {
                self.on_answer(i, answer, &mut out);
            }
            self.drop_fetches_to_old_leaders();
            if !out.is_empty() || self.failed.is_some() || deadline.passed() {
                break;
            }
        }
        if out.is_empty() {
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
        } else if self.failed.is_none() {
            // Read ahead: the buckets that just answered with rows are asked for their next
            // rows now, so the server's answer and its decoding overlap with whatever the
            // caller does with these rows (a connector converting them to its own rows before
            // it polls again), as Fluss's LogFetcher keeps fetching while its records are
            // consumed. At most one answer per bucket waits; offsets move only when a poll
            // takes it, so a checkpoint between polls still names the rows returned.
            self.send_fetches(FETCH_WAIT);
        }
        Ok(out)
    }

    /// Starts a fetch, allowed to wait `wait` on the server for rows, for every bucket that
    /// has none in flight and is not waiting out a pause. Nothing is awaited here: finding the
    /// leader (and asking the cluster when it is not known) is part of the fetch, so a poll
    /// returns at its deadline even when no server answers.
    fn send_fetches(&mut self, wait: Duration) {
        let now = Instant::now();
        let wait_ms = wait.as_millis() as i32;
        for i in 0..self.positions.len() {
            let state = &self.buckets[i];
            if state.in_flight.is_some() || state.not_before.is_some_and(|t| now < t) {
                continue;
            }
            let pos = self.positions[i].clone();
            let address = self.table.conn.cached_leader_address(
                self.table.info.table_id,
                pos.read.partition_id,
                pos.read.bucket,
            );
            let table = self.table.clone();
            let cols = self.fetch_cols.clone();
            let schema = self.fetch_schema.clone();
            let projected = self.projected;
            let answer = tokio::spawn(async move {
                let columns = FetchColumns {
                    cols: &cols,
                    projected,
                    schema: &schema,
                    memory: BatchMemory::PerBatch,
                };
                let (batches, next, _) = fetch_once(
                    &table,
                    &pos.read,
                    pos.offset,
                    None,
                    &columns,
                    Some(wait_ms),
                    None,
                )
                .await?;
                Ok::<_, Error>((batches, next))
            });
            self.buckets[i].in_flight = Some(InFlight {
                address,
                started: now,
                checked: now,
                answer,
            });
        }
    }

    /// Waits until at least one fetch is answered, a paused bucket may be asked again, a fetch
    /// is due for a leader check, or the deadline; returns every answer there is by then.
    async fn next_answers(&mut self, deadline: &Deadline) -> Vec<(usize, Fetched)> {
        let wake = self
            .buckets
            .iter()
            .filter_map(|b| match &b.in_flight {
                Some(f) => f.address.as_ref().map(|_| f.checked + LEADER_CHECK_AFTER),
                None => b.not_before,
            })
            .min();
        let until = match (wake, deadline.0) {
            (Some(w), Some(d)) => Some(w.min(d)),
            (w, d) => w.or(d),
        };
        let timer = async {
            match until {
                Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::pin!(timer);
        let buckets = &mut self.buckets;
        std::future::poll_fn(|cx| {
            let mut answered = Vec::new();
            for (i, b) in buckets.iter_mut().enumerate() {
                if let Some(f) = &mut b.in_flight {
                    if let Poll::Ready(r) = Pin::new(&mut f.answer).poll(cx) {
                        b.in_flight = None;
                        let r = r.unwrap_or_else(|e| {
                            Err(Error::internal(format!(
                                "subscription fetch task failed: {e}"
                            )))
                        });
                        answered.push((i, r));
                    }
                }
            }
            if !answered.is_empty() || timer.as_mut().poll(cx).is_ready() {
                Poll::Ready(answered)
            } else {
                Poll::Pending
            }
        })
        .await
    }

    /// Takes one bucket's answer: rows into `out` and the offset on; a transient error pauses
    /// the bucket (its metadata is asked again), any other is kept for the caller.
    fn on_answer(&mut self, i: usize, answer: Fetched, out: &mut Vec<ChangeBatch>) {
        let pos = self.positions[i].clone();
        let state = &mut self.buckets[i];
        match answer {
            Ok((batches, next)) => {
                if state.failures > 0 {
                    tracing::info!(
                        table = %table_name(&self.table),
                        bucket = %pos.read.describe(),
                        "subscription reads the bucket again after {} failed fetches",
                        state.failures
                    );
                }
                state.failures = 0;
                state.not_before = batches.is_empty().then(|| Instant::now() + EMPTY_PAUSE);
                self.positions[i].offset = next.max(pos.offset);
                for fb in batches {
                    let n = fb.rows.num_rows();
                    let batch = match project_cols(&fb.rows, &self.out_pos, &self.schema) {
                        Ok(b) => b,
                        Err(e) => {
                            self.failed.get_or_insert(e);
                            continue;
                        }
                    };
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
            Err(e) if recoverable_by_refresh(&e) => {
                // What Fluss's LogFetcher does: forget the bucket's leader, keep its offset.
                self.table.conn.invalidate_table(self.table.info.table_id);
                let delay = self.table.conn.backoff().delay(state.failures);
                state.failures += 1;
                state.not_before = Some(Instant::now() + delay);
                // Warn on the first failure of an outage and every 20th after, not on each.
                if state.failures == 1 || state.failures.is_multiple_of(20) {
                    tracing::warn!(
                        table = %table_name(&self.table),
                        bucket = %pos.read.describe(),
                        offset = pos.offset,
                        failures = state.failures,
                        error = %e,
                        "subscription fetch failed; retrying from the same offset"
                    );
                } else {
                    tracing::debug!(error = %e, failures = state.failures, "subscription fetch failed");
                }
            }
            Err(e) => {
                // Fetch errors name the table, bucket, offset and server already.
                self.failed.get_or_insert(e);
            }
        }
    }

    /// Drops the fetches that have waited [`LEADER_CHECK_AFTER`] on a server that no longer
    /// leads their bucket; the bucket is asked again of its new leader right away, from the
    /// same offset (the dropped request's answer, if it ever comes, is discarded unread). The
    /// metadata is refreshed in the background, so this never holds up the poll.
    fn drop_fetches_to_old_leaders(&mut self) {
        let now = Instant::now();
        let table_id = self.table.info.table_id;
        for i in 0..self.buckets.len() {
            let Some(f) = &self.buckets[i].in_flight else {
                continue;
            };
            if now < f.checked + LEADER_CHECK_AFTER {
                continue;
            }
            let Some(address) = f.address.clone() else {
                continue;
            };
            let started = f.started;
            let read = &self.positions[i].read;
            let moved = self.table.conn.leader_moved_from_now(
                table_id,
                read.partition_id,
                read.bucket,
                &address,
            );
            let state = &mut self.buckets[i];
            if moved {
                tracing::warn!(
                    table = %table_name(&self.table),
                    bucket = %read.describe(),
                    server = %address,
                    waited_ms = started.elapsed().as_millis() as u64,
                    "the bucket's leader moved while its fetch was unanswered; asking the new leader"
                );
                state.in_flight = None;
                state.not_before = None;
            } else if let Some(f) = &mut state.in_flight {
                f.checked = Instant::now();
            }
        }
    }
}

/// The rows of the table's lake snapshot `snapshot_id` of `buckets`, as inserts of the
/// subscription's columns, one [`ChangeBatch`] per partition, bucket and lake batch. `parts`
/// are the partitions the subscription reads (`[None]` for a table without partitions) and
/// whether they were selected: a selection keeps only their lake rows; without one every
/// partition's lake rows are read, those of a partition already dropped from Fluss too (as
/// Fluss's union read does), which carry its name and no partition id.
#[cfg(feature = "lake")]
async fn lake_rows(
    table: &Table,
    snapshot_id: i64,
    buckets: &[i32],
    (parts, selected): (&[Option<crate::client::PartitionInfo>], bool),
    out_cols: &[usize],
    schema: &SchemaRef,
    pending: &mut VecDeque<ChangeBatch>,
) -> Result<()> {
    use futures::StreamExt as _;
    let keys = &table.info.descriptor.partition_keys;
    let bucket_col = crate::lake::SYSTEM_COLUMNS[0];
    // The subscription's columns, then the bucket, then the partition columns it lacks (the
    // rows' partition names are read from them).
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(arrow_schema::Field::new(
        bucket_col,
        arrow_schema::DataType::Int32,
        true,
    )));
    let full = table.info.schema().to_arrow();
    for k in keys {
        if schema.field_with_name(k).is_err() {
            let f = full.field_with_name(k)?;
            fields.push(Arc::new(f.clone().with_nullable(true)));
        }
    }
    let target = Arc::new(arrow_schema::Schema::new(fields));
    let ids: std::collections::HashMap<String, i64> = parts
        .iter()
        .flatten()
        .map(|p| (p.name.clone(), p.partition_id))
        .collect();
    let names: Vec<String> = parts.iter().flatten().map(|p| p.name.clone()).collect();
    let name = table.view_name();
    let mut lake = crate::lake::snapshot_batches(
        table,
        Some(snapshot_id),
        Some(buckets),
        selected.then_some(names.as_slice()),
        &target,
        &name,
    )
    .await?;
    let n_out = out_cols.len();
    let split = BucketSplit::new(buckets);
    while let Some(b) = lake.next().await {
        let b = b?;
        // (partition name, its rows): the whole batch for a table without partitions
        let groups: Vec<(Option<String>, RecordBatch)> = if keys.is_empty() {
            vec![(None, b)]
        } else {
            by_partition(&b, keys, &name)?
        };
        for (pname, rows) in groups {
            let pid = pname.as_ref().and_then(|n| ids.get(n).copied());
            for (bucket, rows) in split.split(&rows, n_out, schema, &name)? {
                pending.push_back(ChangeBatch {
                    partition_id: pid,
                    partition_name: pname.clone(),
                    bucket,
                    first_offset: -1,
                    commit_timestamp: -1,
                    change_types: vec![ChangeType::Insert; rows.num_rows()],
                    batch: rows,
                });
            }
        }
    }
    Ok(())
}

/// The rows of a partitioned table's lake batch grouped by Fluss partition name, in name
/// order (a lake data file holds one partition's rows, so a batch is usually one group, taken
/// whole). `name` names the table in errors.
#[cfg(feature = "lake")]
fn by_partition(
    batch: &RecordBatch,
    keys: &[String],
    name: &str,
) -> Result<Vec<(Option<String>, RecordBatch)>> {
    let n = batch.num_rows();
    let too_long = || Error::invalid(format!("{name}: a lake batch of {n} rows is too long"));
    let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (rows, p) in crate::lake::partition_runs(batch, keys)? {
        // Fluss's partition values are never null: such a row belongs to no partition.
        if let Some(p) = p {
            let start = u32::try_from(rows.start).map_err(|_| too_long())?;
            let end = u32::try_from(rows.end).map_err(|_| too_long())?;
            groups.entry(p).or_default().extend(start..end);
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (p, rows) in groups {
        let rows = if rows.len() == n {
            batch.clone()
        } else {
            let indices = arrow_array::UInt32Array::from_iter_values(rows);
            arrow_select::take::take_record_batch(batch, &indices)?
        };
        out.push((Some(p), rows));
    }
    Ok(out)
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
