//! Reading the log of planned buckets: a background fetcher sends one FetchLog per leader
//! carrying the buckets still to read (in plan order), ahead of decoding and within a byte
//! budget; batches are decoded one at a time each on the blocking pool, several in parallel,
//! and handed out in plan order (bucket after bucket, each in offset order).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arrow_schema::SchemaRef;
use bytes::Bytes;
use tokio::sync::mpsc::{self, error::TryRecvError};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::super::time::PinnedRange;
use super::fetch::{
    decode_batch, fetch_buckets, judge_batch, next_fetch, BatchStep, BucketAnswer, BucketAsk,
    FetchColumns, FetchedBatch, NextFetch, PushedFilter, FETCH_BUCKET_BYTES, MAX_EMPTY_FETCHES,
    WINDOW_FETCH_BUCKET_BYTES,
};
use super::plan::BucketRead;
use crate::client::Table;
use crate::record::batch_memory::{BatchMemory, BlockCarver, BlockPool};
use crate::record::{LogBatchIter, LogRecordBatch};
use crate::{Error, Result};

const MIB: isize = 1024 * 1024;
/// Raw (still compressed) bytes a read may hold ahead of its decoders: fetched and not yet
/// handed to a decoder, plus what FetchLogs in flight may return. Bounds a streaming read's
/// memory while the next FetchLog is answered during decoding. Measured (benches/run.py,
/// 5M rows, issue 17): 16 MiB ahead cost a streaming read ~24 MiB more peak RSS than 4 MiB
/// and bought no speed on loopback; every held byte also keeps its response frame alive.
const AHEAD_BYTES: isize = 4 * MIB;
/// Bytes asked per FetchLog (a server returns a larger first batch whole): two requests'
/// worth fit in the budget, so one can be answered while the other is decoded.
const REQUEST_BYTES: isize = 2 * MIB;
/// Below this much free budget the fetcher waits for the decoders.
const MIN_REQUEST_BYTES: isize = MIB;
/// Buckets carried by one FetchLog at most.
const MAX_BUCKETS_PER_REQUEST: usize = 64;
/// Pause before asking again when a whole round brought nothing.
const EMPTY_ROUND_PAUSE: Duration = Duration::from_millis(10);

/// What every fetch and decode of one read shares.
pub(super) struct LogSource {
    pub(super) table: Table,
    /// Table column indexes fetched, ascending.
    pub(super) cols: Vec<usize>,
    pub(super) projected: bool,
    /// The Arrow schema of `cols`.
    pub(super) schema: SchemaRef,
    pub(super) window: Option<PinnedRange>,
    /// The batch filter sent with every FetchLog, if the read can push one.
    pub(super) pushed: Option<PushedFilter>,
    /// Where decoded batches are placed.
    pub(super) memory: ReadMemory,
}

/// Where the decoded batches of one read live (see [`BatchMemory`]).
pub(super) enum ReadMemory {
    /// The caller keeps every batch: shared blocks.
    Kept(BlockCarver),
    /// The caller drops batch after batch: recycled mappings.
    Streamed(BlockPool),
    /// The allocator's (reads inside the core, e.g. a primary-key view's log part).
    Allocated,
}

impl ReadMemory {
    /// The memory of a read whose caller keeps every batch, or not.
    pub(super) fn for_read(keep_batches: bool) -> ReadMemory {
        if keep_batches {
            ReadMemory::Kept(BlockCarver::default())
        } else {
            ReadMemory::Streamed(BlockPool::default())
        }
    }

    fn batch_memory(&self) -> BatchMemory<'_> {
        match self {
            ReadMemory::Kept(carver) => BatchMemory::Blocks(carver),
            ReadMemory::Streamed(pool) => BatchMemory::Pooled(pool),
            ReadMemory::Allocated => BatchMemory::PerBatch,
        }
    }
}

impl LogSource {
    pub(super) fn columns(&self) -> FetchColumns<'_> {
        FetchColumns {
            cols: &self.cols,
            projected: self.projected,
            schema: &self.schema,
            memory: self.memory.batch_memory(),
        }
    }
}

/// Turns one decoded batch into what the read hands out (`None`: nothing to hand out). Runs on
/// the decoding thread.
pub(super) type Finish<T> = Arc<dyn Fn(FetchedBatch) -> Result<Option<T>> + Send + Sync>;

/// What is done with one fetched batch on the decoding thread: its bytes (one whole batch,
/// header included), the offset it was fetched from and the read's end. [`LogReader::start`]'s
/// job checks and decodes it, then finishes it; a read that forwards batches undecoded has
/// its own ([`super::forward`]).
pub(super) type Job<T> =
    Arc<dyn Fn(&LogSource, Bytes, i64, i64) -> Result<Option<T>> + Send + Sync>;

/// Records of one bucket as fetched from `offset`.
struct Chunk {
    offset: i64,
    records: Bytes,
}

/// Raw bytes held ahead of decoding (in total and per bucket), and the fetcher's wake-up.
struct Budget {
    total: AtomicIsize,
    per_bucket: Vec<AtomicIsize>,
    drained: Notify,
}

impl Budget {
    fn hold(&self, bucket: usize, n: isize) {
        self.total.fetch_add(n, Ordering::AcqRel);
        self.per_bucket[bucket].fetch_add(n, Ordering::AcqRel);
    }

    fn release(&self, bucket: usize, n: isize) {
        self.hold(bucket, -n);
        self.drained.notify_one();
    }
}

/// What the decoding side does next.
enum Step {
    /// Decode this batch (fetched from `offset`; rows below `end`).
    Decode { batch: Bytes, offset: i64, end: i64 },
    /// Nothing fetched is waiting.
    NotReady,
    /// Every bucket is read.
    End,
}

/// A running read of the log of some buckets; see the module doc. Dropping it stops the
/// fetcher.
pub(super) struct LogReader<T> {
    source: Arc<LogSource>,
    reads: Vec<BucketRead>,
    /// Per bucket, the fetched records in offset order; closed once the bucket is fetched.
    chunks: Vec<mpsc::UnboundedReceiver<Result<Chunk>>>,
    /// The bucket being handed out, and the part of its records not yet handed to a decoder.
    current: usize,
    chunk: Option<(Chunk, usize)>,
    budget: Arc<Budget>,
    decoding: VecDeque<JoinHandle<Result<Option<T>>>>,
    /// Batches decoded at the same time at most.
    depth: usize,
    job: Job<T>,
    fetcher: JoinHandle<()>,
}

impl<T> Drop for LogReader<T> {
    fn drop(&mut self) {
        self.fetcher.abort();
    }
}

impl<T: Send + 'static> LogReader<T> {
    /// Starts fetching `reads` (each `[start, end)`) on the current runtime.
    pub(super) fn start(source: LogSource, reads: Vec<BucketRead>, finish: Finish<T>) -> Self {
        let job: Job<T> = Arc::new(move |source, bytes, offset, end| {
            decode_one(source, &finish, &bytes, offset, end)
        });
        Self::start_job(source, reads, job)
    }

    /// Starts fetching `reads`, running `job` on each batch whose rows the read wants.
    pub(super) fn start_job(source: LogSource, reads: Vec<BucketRead>, job: Job<T>) -> Self {
        let source = Arc::new(source);
        let budget = Arc::new(Budget {
            total: AtomicIsize::new(0),
            per_bucket: reads.iter().map(|_| AtomicIsize::new(0)).collect(),
            drained: Notify::new(),
        });
        let (senders, chunks): (Vec<_>, Vec<_>) =
            reads.iter().map(|_| mpsc::unbounded_channel()).unzip();
        let fetcher = tokio::spawn(fetch_ahead(
            source.clone(),
            reads.clone(),
            senders.into_iter().map(Some).collect(),
            budget.clone(),
        ));
        // Twice the cores: batches are handed out in order, so a decoder that finishes while
        // the caller still waits for an earlier batch would otherwise leave its core idle.
        // Measured (2 cores, 10M rows, 2026-12-05): a full scan 0.71 -> 0.62 s and a streaming
        // scan 0.63 -> 0.56 s going from 2 to 4, peak RSS unchanged; 6 and 8 no faster.
        let depth = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .saturating_mul(2)
            .clamp(4, 8);
        LogReader {
            source,
            reads,
            chunks,
            current: 0,
            chunk: None,
            budget,
            decoding: VecDeque::new(),
            depth,
            job,
            fetcher,
        }
    }

    /// The next item, `None` when every bucket is read.
    pub(super) async fn next(&mut self) -> Result<Option<T>> {
        loop {
            while self.decoding.len() < self.depth {
                match self.next_step(self.decoding.is_empty()).await? {
                    Step::Decode { batch, offset, end } => {
                        let (source, job) = (self.source.clone(), self.job.clone());
                        self.decoding
                            .push_back(tokio::task::spawn_blocking(move || {
                                job(&source, batch, offset, end)
                            }));
                    }
                    Step::NotReady | Step::End => break,
                }
            }
            let Some(job) = self.decoding.pop_front() else {
                return Ok(None);
            };
            let decoded = job
                .await
                .map_err(|e| Error::internal(format!("log decoding task failed: {e}")))??;
            if let Some(item) = decoded {
                return Ok(Some(item));
            }
        }
    }

    /// The next batch to decode, judged by its header; waits for the fetcher only when `wait`.
    async fn next_step(&mut self, wait: bool) -> Result<Step> {
        loop {
            let Some(read) = self.reads.get(self.current) else {
                return Ok(Step::End);
            };
            if let Some((chunk, pos)) = self.chunk.take() {
                let mut it = LogBatchIter::new(&chunk.records[pos..]);
                let Some(batch) = it.next() else {
                    // The chunk is used up (a truncated tail is fetched again).
                    self.release(&chunk);
                    continue;
                };
                let batch = batch?;
                let size = it.position();
                // A piece of a bucket stops at its cut (batches starting there are the next
                // piece's) and skips the batch that began before it; rows are trimmed to the
                // bucket's own end only.
                let step = if read.before_cut(batch.base_offset()) {
                    BatchStep::Before
                } else {
                    judge_batch(
                        &batch,
                        chunk.offset,
                        Some(read.fetch_end()),
                        self.source.window.as_ref(),
                    )
                };
                let (offset, end) = (chunk.offset, read.end);
                let bytes = chunk.records.slice(pos..pos + size);
                match step {
                    BatchStep::Before | BatchStep::BeforeWindow => {
                        self.chunk = Some((chunk, pos + size));
                    }
                    BatchStep::Decode => {
                        self.chunk = Some((chunk, pos + size));
                        return Ok(Step::Decode {
                            batch: bytes,
                            offset,
                            end,
                        });
                    }
                    BatchStep::PastEnd => self.release(&chunk),
                    BatchStep::AfterWindow => {
                        // Commit time never decreases within a bucket: nothing later is in the
                        // window, and the fetcher stopped at this same batch.
                        self.release(&chunk);
                        self.end_bucket();
                    }
                }
                continue;
            }
            let rx = &mut self.chunks[self.current];
            let got = if wait {
                rx.recv().await
            } else {
                match rx.try_recv() {
                    Ok(c) => Some(c),
                    Err(TryRecvError::Empty) => return Ok(Step::NotReady),
                    Err(TryRecvError::Disconnected) => None,
                }
            };
            match got {
                Some(chunk) => self.chunk = Some((chunk?, 0)),
                None => self.current += 1,
            }
        }
    }

    fn release(&self, chunk: &Chunk) {
        self.budget
            .release(self.current, chunk.records.len() as isize);
    }

    /// Skips what is left of the current bucket.
    fn end_bucket(&mut self) {
        let rx = &mut self.chunks[self.current];
        rx.close();
        while let Ok(c) = rx.try_recv() {
            if let Ok(c) = c {
                self.budget.release(self.current, c.records.len() as isize);
            }
        }
        self.current += 1;
    }
}

/// Checks and decodes one batch (on a blocking-pool thread) and finishes it.
fn decode_one<T>(
    source: &LogSource,
    finish: &Finish<T>,
    bytes: &[u8],
    offset: i64,
    end: i64,
) -> Result<Option<T>> {
    let batch = LogRecordBatch::new(bytes)?;
    match decode_batch(&source.table, &batch, offset, Some(end), &source.columns())? {
        Some(fb) => finish(fb),
        None => Ok(None),
    }
}

type Sender = mpsc::UnboundedSender<Result<Chunk>>;

/// The fetcher task: runs [`fetch_loop`] and hands its error to the bucket the decoding side
/// will wait on next.
async fn fetch_ahead(
    source: Arc<LogSource>,
    reads: Vec<BucketRead>,
    mut senders: Vec<Option<Sender>>,
    budget: Arc<Budget>,
) {
    if let Err(e) = fetch_loop(&source, &reads, &mut senders, &budget).await {
        if let Some(tx) = senders.iter().flatten().next() {
            let _ = tx.send(Err(e));
        }
    }
}

/// Fetches every bucket of `reads` up to its end, in rounds of one FetchLog per leader carrying
/// the buckets still open in plan order, whenever the budget has room. A bucket's sender is
/// dropped once it is fetched.
async fn fetch_loop(
    source: &Arc<LogSource>,
    reads: &[BucketRead],
    senders: &mut [Option<Sender>],
    budget: &Budget,
) -> Result<()> {
    let mut offsets: Vec<i64> = reads.iter().map(|r| r.fetch_start()).collect();
    let mut empty = vec![0u32; reads.len()];
    let table_id = source.table.info.table_id;
    loop {
        let open: Vec<usize> = (0..reads.len())
            .filter(|i| senders[*i].is_some())
            .take(MAX_BUCKETS_PER_REQUEST)
            .collect();
        let Some(&head) = open.first() else {
            return Ok(());
        };
        let free = AHEAD_BYTES - budget.total.load(Ordering::Acquire);
        let (asked, max_bytes) = if free >= MIN_REQUEST_BYTES {
            (open, free.min(REQUEST_BYTES))
        } else if budget.per_bucket[head].load(Ordering::Acquire) <= 0 {
            // What is held belongs to later buckets while the decoders wait for this one: ask
            // for it alone, or the read would stall.
            (vec![head], MIN_REQUEST_BYTES)
        } else {
            budget.drained.notified().await;
            continue;
        };
        // One FetchLog per leader, each carrying its buckets in plan order.
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for i in asked {
            let r = &reads[i];
            let node = source
                .table
                .conn
                .leader_node(table_id, r.partition_id, r.bucket)
                .await?;
            match groups.iter_mut().find(|g| g.0 == node.address) {
                Some(g) => g.1.push(i),
                None => groups.push((node.address, vec![i])),
            }
        }
        let share = (max_bytes / groups.len() as isize).max(MIN_REQUEST_BYTES);
        let reserved = share * groups.len() as isize;
        budget.total.fetch_add(reserved, Ordering::AcqRel);
        let answers = ask_groups(source, reads, &groups, &offsets, share).await;
        budget.total.fetch_sub(reserved, Ordering::AcqRel);
        let mut progressed = false;
        for ((_, group), answers) in groups.iter().zip(answers?) {
            // The server returns the first bucket with data whole even past the byte limit and
            // then fills the others up to it: only a bucket with no data before it in the
            // answer can tell that it has nothing to read.
            let mut data_before = false;
            for (&i, answer) in group.iter().zip(answers) {
                let BucketAnswer {
                    records,
                    high_watermark,
                    filtered_end_offset,
                    skipped_batches,
                } = answer;
                let offset = offsets[i];
                let alone = !data_before;
                data_before |= !records.is_empty();
                if skipped_batches > 0 {
                    metrics::counter!(
                        crate::metrics::CLIENT_SCAN_SKIPPED_BATCHES,
                        "table" => source.table.info.table_path.to_string()
                    )
                    .increment(skipped_batches as u64);
                }
                let end = reads[i].fetch_end();
                let next = next_fetch(&records, offset, Some(end), source.window.as_ref());
                let next = past_filtered(next, offset, end, filtered_end_offset);
                if !records.is_empty() {
                    let n = records.len() as isize;
                    budget.hold(i, n);
                    let sent = senders[i]
                        .as_ref()
                        .is_some_and(|tx| tx.send(Ok(Chunk { offset, records })).is_ok());
                    if !sent {
                        budget.release(i, n);
                        senders[i] = None;
                        continue;
                    }
                }
                match next {
                    NextFetch::At(o) => {
                        offsets[i] = o;
                        empty[i] = 0;
                        progressed = true;
                    }
                    NextFetch::Stop => {
                        senders[i] = None;
                        progressed = true;
                    }
                    NextFetch::NoProgress if alone => {
                        // Nothing below the planned end any more (truncation or retention), or
                        // nothing after many tries.
                        empty[i] += 1;
                        if high_watermark.is_some_and(|h| h <= offset)
                            || empty[i] > MAX_EMPTY_FETCHES
                        {
                            senders[i] = None;
                            progressed = true;
                        }
                    }
                    NextFetch::NoProgress => {}
                }
            }
        }
        if !progressed {
            tokio::time::sleep(EMPTY_ROUND_PAUSE).await;
        }
    }
}

/// Sends the FetchLogs of one round (one per leader group, at the same time) and returns their
/// answers in group order.
async fn ask_groups(
    source: &Arc<LogSource>,
    reads: &[BucketRead],
    groups: &[(String, Vec<usize>)],
    offsets: &[i64],
    max_bytes: isize,
) -> Result<Vec<Vec<BucketAnswer>>> {
    let per_bucket = if source.window.is_some() {
        WINDOW_FETCH_BUCKET_BYTES
    } else {
        FETCH_BUCKET_BYTES
    };
    let asks = |group: &[usize]| -> Vec<(BucketRead, i64)> {
        group
            .iter()
            .map(|&i| (reads[i].clone(), offsets[i]))
            .collect()
    };
    let max_bytes = i32::try_from(max_bytes).unwrap_or(i32::MAX);
    if let [(_, group)] = groups {
        return Ok(vec![ask(source, asks(group), per_bucket, max_bytes).await?]);
    }
    let tasks: Vec<_> = groups
        .iter()
        .map(|(_, g)| tokio::spawn(ask(source.clone(), asks(g), per_bucket, max_bytes)))
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(
            t.await
                .map_err(|e| Error::internal(format!("log fetch task failed: {e}")))??,
        );
    }
    Ok(out)
}

/// One FetchLog for buckets sharing a leader.
async fn ask(
    source: impl AsRef<LogSource>,
    buckets: Vec<(BucketRead, i64)>,
    per_bucket: i32,
    max_bytes: i32,
) -> Result<Vec<BucketAnswer>> {
    let source = source.as_ref();
    let asks: Vec<BucketAsk<'_>> = buckets
        .iter()
        .map(|(read, offset)| BucketAsk {
            read,
            offset: *offset,
            max_bytes: per_bucket,
        })
        .collect();
    fetch_buckets(
        &source.table,
        &asks,
        &source.cols,
        source.projected,
        None,
        max_bytes,
        source.pushed.as_ref(),
    )
    .await
}

/// The next fetch once the server says it read up to `filtered` while leaving out batches:
/// the later of that and the end of the records, stopping at the read's `end`.
fn past_filtered(next: NextFetch, offset: i64, end: i64, filtered: Option<i64>) -> NextFetch {
    let Some(f) = filtered else {
        return next;
    };
    let at = match next {
        NextFetch::Stop => return NextFetch::Stop,
        NextFetch::At(o) => o.max(f),
        NextFetch::NoProgress => f,
    };
    if at >= end {
        NextFetch::Stop
    } else if at > offset {
        NextFetch::At(at)
    } else {
        next
    }
}

/// A read of one bucket that hands out its decoded batches (for folds).
pub(super) fn bucket_batches(source: LogSource, read: BucketRead) -> LogReader<FetchedBatch> {
    LogReader::start(source, vec![read], Arc::new(|fb| Ok(Some(fb))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filtered_range_moves_the_next_fetch() {
        use NextFetch::*;
        // no filtered range: unchanged
        assert_eq!(past_filtered(At(10), 0, 100, None), At(10));
        // every batch left out: continue after the range read
        assert_eq!(past_filtered(NoProgress, 0, 100, Some(40)), At(40));
        // trailing batches left out: the later of the two
        assert_eq!(past_filtered(At(10), 0, 100, Some(40)), At(40));
        assert_eq!(past_filtered(At(50), 0, 100, Some(40)), At(50));
        // the range reaches the read's end: done
        assert_eq!(past_filtered(NoProgress, 0, 100, Some(100)), Stop);
        assert_eq!(past_filtered(Stop, 0, 100, Some(40)), Stop);
        // a range behind the fetch offset changes nothing
        assert_eq!(past_filtered(NoProgress, 60, 100, Some(40)), NoProgress);
    }
}
