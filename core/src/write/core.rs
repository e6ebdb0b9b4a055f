//! The writer's background task: it routes queued writes to buckets, batches them (size,
//! linger, memory bound), numbers batches per bucket for idempotence, sends them to bucket
//! leaders, retries retriable failures and resolves each write's future at ack.
//!
//! One task per writer owns all batching state, so no locks are needed; the writer handle talks
//! to it through an ordered channel, which keeps writes in call order per bucket. Complete
//! batches are encoded (Arrow IPC + compression, or KV records) on the blocking pool; the task
//! gives each bucket's batches contiguous sequence numbers as it sends them (up to
//! `max_in_flight_per_bucket` at once) and one dispatcher task queues the requests on the
//! connections in that order. A failed batch goes back to its place in its bucket's queue, and
//! a bucket with a batch to resend sends only that batch until it is acknowledged, so a retried
//! batch is never overtaken by a later one and sequence numbers stay contiguous.
//!
//! An abort ([`WriterHandle::abort`]) is not a command of the ordered channel: it must be heard
//! while the task waits on the network (a writer id, a partition id, a leader check) or behind
//! queued writes. It comes through a watch channel both tasks select on; the writer task then
//! drops whatever it was waiting for and fails every unacknowledged write with
//! [`ErrorKind::Closed`].

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use bytes::Bytes;
use std::future::Future;
use tokio::sync::{mpsc, oneshot, watch, Notify};

use super::bucket::BucketAssigner;
use super::future::{Tracker, WriteFuture};
use crate::client::WriterConfig;
use crate::client::{is_stale_metadata, Connection, Table};
use crate::error::codes;
use crate::metadata::PartitionSpec;
use crate::proto::{
    InitWriterRequest, PbProduceLogReqForBucket, PbPutKvReqForBucket, ProduceLogRequest,
    PutKvRequest,
};
use crate::record::arrow_payload::ArrowCompression;
use crate::record::kv_batch::{set_kv_writer_state, KvBatchBuilder};
use crate::record::log_batch::{
    build_arrow_log_batch, build_arrow_log_batch_from_parts, build_arrow_log_batch_with_statistics,
    set_writer_state,
};
use crate::rpc::ServerConnection;
use crate::stats::BatchStatistics;
use crate::{Error, ErrorKind, Result};

/// No writer id: the server skips idempotence checks.
pub(crate) const NO_WRITER_ID: i64 = -1;
/// No batch sequence.
pub(crate) const NO_BATCH_SEQUENCE: i32 = -1;

/// A batch unanswered for this long makes the writer ask whether its bucket's leader moved; if
/// it did, the batch is sent to the new leader without waiting for the old one's answer. A
/// leader that is alive but does not answer (frozen, partitioned) keeps its connection open, so
/// without this its buckets would wait the whole request timeout after leadership had moved.
/// Idempotence makes the resend safe: the new leader answers a batch it already has (it was
/// replicated before the freeze) as a duplicate, with its original offsets.
const LEADER_CHECK_AFTER: Duration = Duration::from_secs(2);

/// One KV record: encoded key and row, or no row for a delete.
#[derive(Debug, Clone)]
pub(crate) struct KvEntry {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

/// Rows of one write bound for one bucket (or, with `bucket: None`, for whatever bucket the
/// keyless assigner picks).
#[derive(Debug)]
pub(crate) struct Piece {
    /// Partition name and spec for partitioned tables.
    pub partition: Option<(String, PartitionSpec)>,
    pub bucket: Option<i32>,
    pub payload: PiecePayload,
    pub size: usize,
}

#[derive(Debug)]
pub(crate) enum PiecePayload {
    Arrow(RecordBatch),
    Kv(Vec<KvEntry>),
}

/// The columns a log table's batches carry statistics for.
#[derive(Debug)]
pub(crate) struct StatisticsSpec {
    /// Column indexes, ascending.
    pub columns: Vec<usize>,
    /// Every column's type (the writer's schema).
    pub types: Vec<crate::metadata::DataType>,
}

/// What the table's batches carry.
#[derive(Debug, Clone)]
pub(crate) enum WriteKind {
    /// Arrow log batches with this compression: magic 0, or Fluss 1.0's magic 1 with
    /// statistics of these columns when the table sets `table.statistics.columns`.
    Log {
        compression: ArrowCompression,
        statistics: Option<Arc<StatisticsSpec>>,
    },
    /// KV batches, with the target columns of a partial update.
    Kv { target_columns: Option<Vec<i32>> },
}

/// What the writer task is asked through its ordered channel. An abort is not one of these:
/// see the module docs.
enum Command {
    Write {
        pieces: Vec<Piece>,
        tracker: Arc<Tracker>,
    },
    Flush(oneshot::Sender<Result<()>>),
    Close(oneshot::Sender<Result<()>>),
}

/// The handle side: submit writes, flush, close, abort.
pub(crate) struct WriterHandle {
    tx: mpsc::UnboundedSender<Command>,
    buffered: Arc<AtomicUsize>,
    capacity: Arc<Notify>,
    buffer_memory: usize,
    /// Set to `true` by [`WriterHandle::abort`]; the writer task and its dispatcher watch it.
    abort: watch::Sender<bool>,
    /// Its sender lives in the writer task: closed once the task has stopped (closed, aborted,
    /// or its runtime shut down).
    stopped: watch::Receiver<()>,
}

impl WriterHandle {
    /// Starts the writer task for `table` on the current tokio runtime.
    pub(crate) fn start(table: &Table, kind: WriteKind, config: WriterConfig) -> Result<Self> {
        config.validate()?;
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::new(
                ErrorKind::Unsupported,
                "writers must be created inside a tokio runtime (use riverlet::blocking outside one)",
            )
        })?;
        let (tx, rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (dispatch_tx, dispatch_rx) = mpsc::unbounded_channel();
        let buffered = Arc::new(AtomicUsize::new(0));
        let capacity = Arc::new(Notify::new());
        let (abort, abort_rx) = watch::channel(false);
        let (stopped_tx, stopped) = watch::channel(());
        let buckets = table.info.descriptor.bucket_count.unwrap_or(1).max(1);
        let dispatcher = Dispatcher {
            conn: table.conn.clone(),
            table_id: table.info.table_id,
            kind: kind.clone(),
            acks: config.acks,
            timeout_ms: table
                .conn
                .config()
                .request_timeout
                .as_millis()
                .min(i32::MAX as u128) as i32,
            request_max_size: config.request_max_size,
            server_frame_limit: AtomicUsize::new(usize::MAX),
            events: events_tx.clone(),
            abort: abort_rx.clone(),
        };
        let task = WriterTask {
            conn: table.conn.clone(),
            table: table.clone(),
            buckets,
            kind,
            writer_id: NO_WRITER_ID,
            writer_id_ready: !config.idempotence,
            renew_writer_id: false,
            config,
            rx,
            events_tx,
            events_rx,
            dispatch: dispatch_tx,
            queues: HashMap::new(),
            in_flight: 0,
            encoding: 0,
            max_encoding: encode_parallelism(),
            assigners: HashMap::new(),
            partition_ids: HashMap::new(),
            next_batch_id: 1,
            next_send: 0,
            outstanding: BTreeSet::new(),
            flush_mark: 0,
            flush_waiters: Vec::new(),
            close_waiters: Vec::new(),
            first_error: None,
            buffered: buffered.clone(),
            capacity: capacity.clone(),
            closing: false,
            accepting: None,
            abort: abort_rx,
            _stopped: stopped_tx,
        };
        handle.spawn(dispatcher.run(dispatch_rx));
        let buffer_memory = task.config.buffer_memory;
        handle.spawn(task.run());
        Ok(WriterHandle {
            tx,
            buffered,
            capacity,
            buffer_memory,
            abort,
            stopped,
        })
    }

    /// The error of a call made after the writer task stopped.
    fn stopped_error(&self) -> Error {
        if *self.abort.borrow() {
            Error::new(ErrorKind::Closed, "the writer was aborted")
        } else {
            closed_error()
        }
    }

    /// Queues a write made of `pieces`; the future resolves at ack.
    pub(crate) fn submit(&self, pieces: Vec<Piece>) -> WriteFuture {
        let size: usize = pieces.iter().map(|p| p.size).sum();
        let (tracker, fut) = Tracker::new(pieces.len());
        if pieces.is_empty() {
            return fut;
        }
        self.buffered.fetch_add(size, Ordering::AcqRel);
        metrics::gauge!(crate::metrics::CLIENT_WRITER_BUFFERED_BYTES).increment(size as f64);
        if self.tx.send(Command::Write { pieces, tracker }).is_err() {
            self.buffered.fetch_sub(size, Ordering::AcqRel);
            metrics::gauge!(crate::metrics::CLIENT_WRITER_BUFFERED_BYTES).decrement(size as f64);
            return WriteFuture::failed(self.stopped_error());
        }
        fut
    }

    /// Bytes queued or in flight and not yet acknowledged.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.buffered.load(Ordering::Acquire)
    }

    /// Waits until the buffered bytes are below the memory bound.
    pub(crate) async fn ready(&self) {
        let mut waited: Option<Instant> = None;
        loop {
            let notified = self.capacity.notified();
            if self.buffered_bytes() < self.buffer_memory || self.tx.is_closed() {
                if let Some(t) = waited {
                    metrics::histogram!(crate::metrics::CLIENT_WRITER_BUFFER_WAIT_SECONDS)
                        .record(t.elapsed().as_secs_f64());
                }
                return;
            }
            waited.get_or_insert_with(Instant::now);
            notified.await;
        }
    }

    /// Sends everything queued so far and waits for the acks; returns the first write error seen
    /// since the previous flush.
    pub(crate) async fn flush(&self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Command::Flush(tx))
            .map_err(|_| self.stopped_error())?;
        rx.await.map_err(|_| self.stopped_error())?
    }

    /// Flushes and stops the writer task.
    pub(crate) async fn close(&self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Command::Close(tx)).is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }

    /// Stops the writer task at once, without waiting for any answer, and returns once it has
    /// stopped. Every write not acknowledged yet (queued, being encoded, or sent and
    /// unanswered) fails with [`ErrorKind::Closed`] saying it was discarded; its buffered bytes
    /// are released; a pending flush or close gets that error too; later calls fail
    /// [`ErrorKind::Closed`]. A batch already sent may still be appended by the server (its
    /// answer is ignored). Calling it again, or after a close, does nothing.
    pub(crate) async fn abort(&self) {
        self.abort.send_replace(true);
        let mut stopped = self.stopped.clone();
        // Never sent on: ends with an error once the task dropped its sender.
        while stopped.changed().await.is_ok() {}
    }
}

/// Resolves once an abort was requested; never, when the handle went away without one (the
/// closed command channel then closes the writer as usual).
async fn abort_requested(abort: &mut watch::Receiver<bool>) {
    if abort.wait_for(|aborted| *aborted).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// How long a write keeps retrying PARTITION_NOT_EXISTS for a partition the metadata named.
const NEW_PARTITION_GRACE: Duration = Duration::from_secs(10);

fn closed_error() -> Error {
    Error::new(ErrorKind::Closed, "the writer is closed")
}

/// The error of every write an abort discarded.
fn discarded_error(table: &crate::metadata::TablePath) -> Error {
    Error::new(
        ErrorKind::Closed,
        format!(
            "the write to table '{table}' was discarded by an abort of the writer before the \
             server acknowledged it (it may or may not have been appended); write it again \
             through a new writer if it is wanted"
        ),
    )
}

type QueueKey = (Option<i64>, i32);

/// A batch's bytes: not encoded yet, being encoded off the event loop, or encoded (and
/// stamped with the writer state it was last sent with).
enum Encoded {
    Pending,
    Running,
    Ready(Vec<u8>),
    Sent {
        bytes: Bytes,
        writer_id: i64,
        sequence: i32,
    },
}

struct Batch {
    id: u64,
    created: Instant,
    first_sent: Option<Instant>,
    /// When it was last sent (its answer is awaited from then).
    last_sent: Option<Instant>,
    /// Which send of the writer is in flight for it (0: none). Answers carry it, so the answer
    /// to a send that was given up (the leader moved) is never taken for a later send's.
    send: u64,
    /// The server the in-flight send went to, once the dispatcher has routed it.
    sent_to: Option<String>,
    /// When it was last checked whether its bucket's leader is still `sent_to`.
    leader_checked: Option<Instant>,
    /// The rows; taken when encoding starts.
    payload: Option<BatchPayload>,
    encoded: Encoded,
    bytes: usize,
    trackers: Vec<Arc<Tracker>>,
    attempts: u32,
    retry_at: Option<Instant>,
    /// No more pieces join it (it filled up, or it is being encoded).
    full: bool,
    /// Its place in the bucket's sequence under the current writer id, from the first send
    /// until it is acknowledged (a retry keeps it; a new writer id clears it).
    position: Option<u64>,
    /// The bucket's highest acknowledged position when it was last sent: an
    /// OUT_OF_ORDER_SEQUENCE answer given before a later acknowledgement is stale.
    acked_at_send: Option<u64>,
}

enum BatchPayload {
    Arrow(Vec<RecordBatch>),
    Kv(Vec<KvEntry>),
}

/// One bucket's batches. `batches` holds what is not in flight, in send order: batches waiting
/// for a retry (they have a position) come first, by position, then fresh ones in write order.
#[derive(Default)]
struct BucketQueue {
    batches: VecDeque<Batch>,
    /// Sent and not answered yet, by position (or, without idempotence, in send order).
    in_flight: VecDeque<Batch>,
    /// Position the next fresh batch gets (the wire sequence is this modulo 2^31).
    next_position: u64,
    /// Highest position acknowledged under the current writer id.
    last_acked: Option<u64>,
    /// The lowest position that failed for good under the current writer id, which breaks the
    /// bucket's sequence and asks for a new writer id. The unacknowledged batches below it may
    /// be in the log already (their answers lost with a closed connection), so they are sent
    /// again under the current id, where the server answers a duplicate with its offsets,
    /// before the new id renumbers what is left: renumbered, they would be appended twice.
    failed_at: Option<u64>,
}

impl BucketQueue {
    /// Whether a batch at `position` must be resent under the current writer id before it is
    /// renewed (see [`Self::failed_at`]).
    fn resend_before_renewal(&self, position: Option<u64>) -> bool {
        matches!((position, self.failed_at), (Some(p), Some(f)) if p < f)
    }

    /// Records that the batch at `position` failed for good (see [`Self::failed_at`]).
    fn sequence_broken_at(&mut self, position: u64) {
        self.failed_at = Some(self.failed_at.map_or(position, |f| f.min(position)));
    }

    /// Puts a batch that must be sent again back in its place (by position).
    fn requeue(&mut self, batch: Batch) {
        let at = self
            .batches
            .iter()
            .position(|b| b.position.is_none_or(|p| Some(p) > batch.position))
            .unwrap_or(self.batches.len());
        self.batches.insert(at, batch);
    }
}

/// The wire batch sequence of a position: sequences count from 0 and wrap to 0 after i32::MAX,
/// as Fluss's do.
fn wire_sequence(position: u64) -> i32 {
    (position % (i32::MAX as u64 + 1)) as i32
}

/// What woke the writer task.
enum Woke {
    Command(Option<Command>),
    Event(Event),
    Timer,
}

enum Event {
    /// The server's answer (or a send failure) for send `send` of batch `id` of bucket `key`.
    Sent {
        key: QueueKey,
        id: u64,
        send: u64,
        result: Result<()>,
    },
    /// Send `send` of batch `id` was put on the connection to `address`.
    Routed {
        key: QueueKey,
        id: u64,
        send: u64,
        address: String,
    },
    /// Batch `id` of bucket `key` was encoded off the event loop.
    Encoded {
        key: QueueKey,
        id: u64,
        result: Result<Vec<u8>>,
    },
}

/// How many batches are encoded at once: one per core (encoding is CPU-bound, mostly
/// compression; more would only make the oldest batch wait longer).
fn encode_parallelism() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

struct WriterTask {
    conn: Connection,
    table: Table,
    buckets: i32,
    kind: WriteKind,
    config: WriterConfig,
    writer_id: i64,
    writer_id_ready: bool,
    renew_writer_id: bool,
    rx: mpsc::UnboundedReceiver<Command>,
    events_tx: mpsc::UnboundedSender<Event>,
    events_rx: mpsc::UnboundedReceiver<Event>,
    dispatch: mpsc::UnboundedSender<Vec<Outgoing>>,
    queues: HashMap<QueueKey, BucketQueue>,
    in_flight: usize,
    encoding: usize,
    max_encoding: usize,
    assigners: HashMap<Option<i64>, BucketAssigner>,
    partition_ids: HashMap<String, i64>,
    next_batch_id: u64,
    /// The last send token given out (see [`Batch::send`]).
    next_send: u64,
    outstanding: BTreeSet<u64>,
    flush_mark: u64,
    flush_waiters: Vec<(u64, oneshot::Sender<Result<()>>)>,
    close_waiters: Vec<oneshot::Sender<Result<()>>>,
    first_error: Option<Error>,
    buffered: Arc<AtomicUsize>,
    capacity: Arc<Notify>,
    closing: bool,
    /// The write [`WriterTask::accept`] is waiting on partition ids for, and its bytes: what an
    /// abort in the middle of that wait must fail and release.
    accepting: Option<(Arc<Tracker>, usize)>,
    abort: watch::Receiver<bool>,
    /// Dropped with the task: tells [`WriterHandle::abort`] that it has stopped.
    _stopped: watch::Sender<()>,
}

impl WriterTask {
    /// Serves the writer until it is closed or aborted. An abort drops [`WriterTask::serve`]
    /// wherever it waits (every wait in it leaves the state whole, `accept`'s is recorded in
    /// `accepting`) and then discards what is left.
    async fn run(mut self) {
        let mut abort = self.abort.clone();
        let aborted = tokio::select! {
            biased;
            _ = abort_requested(&mut abort) => true,
            _ = self.serve() => false,
        };
        if aborted {
            self.discard_all();
        }
    }

    /// Fails every write not acknowledged yet, and every flush and close waiting, with the
    /// abort's error; releases their buffered bytes. The task stops right after, so answers
    /// still to come for sent batches find nobody.
    fn discard_all(&mut self) {
        let e = discarded_error(self.table.path());
        self.closing = true;
        self.rx.close();
        let mut trackers: Vec<Arc<Tracker>> = Vec::new();
        let mut bytes = 0usize;
        let mut batches = 0usize;
        while let Ok(cmd) = self.rx.try_recv() {
            match cmd {
                Command::Write { pieces, tracker } => {
                    bytes += pieces.iter().map(|p| p.size).sum::<usize>();
                    trackers.push(tracker);
                }
                Command::Flush(tx) => self.flush_waiters.push((u64::MAX, tx)),
                Command::Close(tx) => self.close_waiters.push(tx),
            }
        }
        if let Some((tracker, size)) = self.accepting.take() {
            bytes += size;
            trackers.push(tracker);
        }
        for (_, q) in self.queues.drain() {
            for b in q.batches.into_iter().chain(q.in_flight) {
                batches += 1;
                bytes += b.bytes;
                trackers.extend(b.trackers);
            }
        }
        metrics::gauge!(crate::metrics::CLIENT_WRITER_IN_FLIGHT_BATCHES)
            .decrement(self.in_flight as f64);
        self.in_flight = 0;
        self.encoding = 0;
        self.outstanding.clear();
        let discarded = !trackers.is_empty();
        if discarded {
            tracing::info!(
                table = %self.table.path(),
                batches,
                bytes,
                "writer aborted: unacknowledged writes discarded"
            );
        }
        for t in trackers {
            t.complete(Err(e.clone()));
        }
        // Wakes `ready` waiters too (the closed channel lets them go).
        self.release(bytes);
        let answer = if discarded {
            Err(e)
        } else {
            self.first_error.take().map_or(Ok(()), Err)
        };
        for (_, tx) in self.flush_waiters.drain(..) {
            let _ = tx.send(answer.clone());
        }
        for tx in self.close_waiters.drain(..) {
            let _ = tx.send(answer.clone());
        }
    }

    async fn serve(&mut self) {
        loop {
            if !self.writer_id_ready
                || (self.renew_writer_id && self.in_flight == 0 && !self.resends_due())
            {
                self.init_writer_id().await;
            }
            // One clock reading per turn: a deadline is either due for all three steps or
            // still to come for all of them.
            let now = Instant::now();
            self.start_encoding(now);
            self.send_ready(now);
            self.resolve_flushes();
            if self.closing && self.outstanding.is_empty() && self.in_flight == 0 {
                let err = self.first_error.take();
                for w in self.close_waiters.drain(..) {
                    let _ = w.send(err.clone().map_or(Ok(()), Err));
                }
                return;
            }
            let deadline = self.next_deadline(now);
            let on = match (self.encoding > 0, self.in_flight > 0) {
                (false, false) => "writes",
                (true, false) => "encoding",
                (false, true) => "acks",
                (true, true) => "encoding_and_acks",
            };
            let slept = Instant::now();
            let woke = tokio::select! {
                cmd = self.rx.recv(), if !self.closing => Woke::Command(cmd),
                Some(event) = self.events_rx.recv() => Woke::Event(event),
                _ = sleep_until(deadline), if deadline.is_some() => Woke::Timer,
            };
            metrics::histogram!(crate::metrics::CLIENT_WRITER_TASK_WAIT_SECONDS, "on" => on)
                .record(slept.elapsed().as_secs_f64());
            match woke {
                Woke::Command(None) => self.start_closing(),
                Woke::Command(Some(Command::Write { pieces, tracker })) => {
                    self.accept(pieces, tracker).await
                }
                Woke::Command(Some(Command::Flush(tx))) => {
                    let mark = self.next_batch_id - 1;
                    self.flush_mark = self.flush_mark.max(mark);
                    self.flush_waiters.push((mark, tx));
                }
                Woke::Command(Some(Command::Close(tx))) => {
                    self.close_waiters.push(tx);
                    self.start_closing();
                }
                Woke::Event(Event::Sent {
                    key,
                    id,
                    send,
                    result,
                }) => self.on_outcome(key, id, send, result),
                Woke::Event(Event::Routed {
                    key,
                    id,
                    send,
                    address,
                }) => self.on_routed(key, id, send, address),
                Woke::Event(Event::Encoded { key, id, result }) => self.on_encoded(key, id, result),
                Woke::Timer => {}
            }
            self.resend_after_leader_moves(Instant::now()).await;
        }
    }

    fn on_routed(&mut self, key: QueueKey, id: u64, send: u64, address: String) {
        if let Some(b) = self.queues.get_mut(&key).and_then(|q| {
            q.in_flight
                .iter_mut()
                .find(|b| b.id == id && b.send == send)
        }) {
            b.sent_to = Some(address);
        }
    }

    /// For buckets whose batches have waited [`LEADER_CHECK_AFTER`] for an answer: asks whether
    /// the bucket's leader moved away from the server they were sent to, and if it did, gives
    /// up those sends and queues the batches again (in sequence order, for the new leader).
    async fn resend_after_leader_moves(&mut self, now: Instant) {
        // Called after every event: nothing in flight, nothing to look at.
        if self.in_flight == 0 {
            return;
        }
        let mut due: Vec<(QueueKey, String)> = Vec::new();
        for (key, q) in self.queues.iter_mut() {
            for b in q.in_flight.iter_mut() {
                if b.leader_checked
                    .is_none_or(|t| now < t + LEADER_CHECK_AFTER)
                {
                    continue;
                }
                b.leader_checked = Some(now);
                if let Some(address) = &b.sent_to {
                    if !due.iter().any(|(k, a)| k == key && a == address) {
                        due.push((*key, address.clone()));
                    }
                }
            }
        }
        let table_id = self.table.info.table_id;
        for (key, address) in due {
            if !self
                .conn
                .leader_moved_from(table_id, key.0, key.1, &address)
                .await
            {
                continue;
            }
            let Some(q) = self.queues.get_mut(&key) else {
                continue;
            };
            let (gone, kept): (VecDeque<Batch>, VecDeque<Batch>) = q
                .in_flight
                .drain(..)
                .partition(|b| b.sent_to.as_deref() == Some(address.as_str()));
            q.in_flight = kept;
            tracing::warn!(
                table = %self.table.path(),
                bucket = key.1,
                partition_id = ?key.0,
                server = %address,
                batches = gone.len(),
                "the bucket's leader moved while its batches were unanswered; sending them to the new leader"
            );
            for mut b in gone {
                self.in_flight -= 1;
                metrics::gauge!(crate::metrics::CLIENT_WRITER_IN_FLIGHT_BATCHES).decrement(1.0);
                b.send = 0;
                b.sent_to = None;
                b.retry_at = Some(now);
                b.attempts += 1;
                q.requeue(b);
            }
        }
    }

    fn start_closing(&mut self) {
        self.closing = true;
        self.flush_mark = u64::MAX;
        // Later writes are refused by the closed channel.
        self.rx.close();
        while let Ok(cmd) = self.rx.try_recv() {
            match cmd {
                Command::Write { tracker, pieces } => {
                    let size: usize = pieces.iter().map(|p| p.size).sum();
                    self.release(size);
                    tracker.complete(Err(closed_error()));
                }
                Command::Flush(tx) => self.flush_waiters.push((u64::MAX, tx)),
                Command::Close(tx) => self.close_waiters.push(tx),
            }
        }
    }

    async fn init_writer_id(&mut self) {
        self.writer_id_ready = true;
        self.renew_writer_id = false;
        if !self.config.idempotence {
            return;
        }
        // Nothing is in flight here, and no batch below a failure waits to be resent under the
        // old id (`BucketQueue::failed_at`): every batch that had a place in a sequence is
        // queued again and gets a new place under the new writer id.
        for q in self.queues.values_mut() {
            q.next_position = 0;
            q.last_acked = None;
            q.failed_at = None;
            for b in q.batches.iter_mut() {
                b.position = None;
            }
        }
        let req = InitWriterRequest {
            table_path: vec![crate::proto::PbTablePath::from(self.table.path())],
        };
        let r = self
            .conn
            .with_retries(|| async { self.conn.any_tablet_server().await?.request(&req).await })
            .await;
        match r {
            Ok(resp) => self.writer_id = resp.writer_id,
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                tracing::warn!(error = %e, "server does not offer InitWriter; writing without idempotence");
                self.writer_id = NO_WRITER_ID;
            }
            Err(e) => {
                tracing::warn!(error = %e, "InitWriter failed; writing without idempotence");
                self.writer_id = NO_WRITER_ID;
            }
        }
    }

    fn release(&self, bytes: usize) {
        self.buffered.fetch_sub(bytes, Ordering::AcqRel);
        metrics::gauge!(crate::metrics::CLIENT_WRITER_BUFFERED_BYTES).decrement(bytes as f64);
        self.capacity.notify_waiters();
    }

    fn record_error(&mut self, e: &Error) {
        if self.first_error.is_none() {
            self.first_error = Some(e.clone());
        }
    }

    /// Resolves the partition of a piece to its id (creating it when configured to).
    async fn partition_id(&mut self, name: &str, spec: &PartitionSpec) -> Result<i64> {
        if let Some(id) = self.partition_ids.get(name) {
            return Ok(*id);
        }
        let path = self.table.path().clone();
        let mut id = self.conn.partition_id(&path, name).await?;
        if id.is_none() && self.config.create_missing_partitions {
            self.conn
                .admin()
                .create_partition(&path, spec, true)
                .await?;
            for attempt in 0..10u32 {
                id = self.conn.partition_id(&path, name).await?;
                if id.is_some() {
                    break;
                }
                tokio::time::sleep(self.conn.backoff().delay(attempt)).await;
            }
        }
        let id = id.ok_or_else(|| {
            Error::from_fluss(
                codes::PARTITION_NOT_EXISTS,
                format!(
                    "partition '{name}' of table '{path}' does not exist (set client.writer.dynamic-create-partition.enabled=true to create it on write)"
                ),
            )
        })?;
        self.partition_ids.insert(name.to_string(), id);
        Ok(id)
    }

    async fn accept(&mut self, pieces: Vec<Piece>, tracker: Arc<Tracker>) {
        // The partition ids first: they are the only waits of a write, and an abort may stop
        // the task in one of them (`accepting` then says what to fail and release).
        let size: usize = pieces.iter().map(|p| p.size).sum();
        self.accepting = Some((tracker.clone(), size));
        let mut partition_ids = Vec::with_capacity(pieces.len());
        for piece in &pieces {
            partition_ids.push(match &piece.partition {
                None => Ok(None),
                Some((name, spec)) => self.partition_id(name, spec).await.map(Some),
            });
        }
        self.accepting = None;
        for (piece, partition_id) in pieces.into_iter().zip(partition_ids) {
            let partition_id = match partition_id {
                Ok(id) => id,
                Err(e) => {
                    self.release(piece.size);
                    self.record_error(&e);
                    tracker.complete(Err(e));
                    continue;
                }
            };
            let sticky = piece.bucket.is_none();
            let bucket = match piece.bucket {
                Some(b) => b,
                None => {
                    let kind = self.config.no_key_assigner;
                    let buckets = self.buckets;
                    let batch_size = self.config.batch_size;
                    let assigner = self
                        .assigners
                        .entry(partition_id)
                        .or_insert_with(|| BucketAssigner::new(kind, buckets));
                    let b = assigner.assign();
                    // As Fluss's sticky assigner: a write that would open a new batch because
                    // the bucket's open batch has no room for it moves to another bucket (a
                    // batch rarely fills to exactly `batch_size`, so waiting for that would
                    // keep a whole large write in one bucket).
                    let no_room = self
                        .queues
                        .get(&(partition_id, b))
                        .and_then(|q| q.batches.back())
                        .is_some_and(|open| {
                            !open.full
                                && open.payload.is_some()
                                && open.bytes > 0
                                && open.bytes + piece.size > batch_size
                        });
                    if no_room {
                        assigner.on_new_batch(b);
                        assigner.assign()
                    } else {
                        b
                    }
                }
            };
            let became_full = self.append_piece((partition_id, bucket), piece, tracker.clone());
            if sticky && became_full {
                if let Some(a) = self.assigners.get_mut(&partition_id) {
                    a.on_new_batch(bucket);
                }
            }
        }
    }

    /// Adds a piece to its bucket's open batch (or a new one); returns whether that batch is full.
    fn append_piece(&mut self, key: QueueKey, piece: Piece, tracker: Arc<Tracker>) -> bool {
        let batch_size = self.config.batch_size;
        let q = self.queues.entry(key).or_default();
        let fits = q
            .batches
            .back()
            .is_some_and(|b| !b.full && b.payload.is_some() && b.bytes + piece.size <= batch_size);
        if !fits {
            if let Some(b) = q.batches.back_mut() {
                b.full = true;
            }
            let id = self.next_batch_id;
            self.next_batch_id += 1;
            self.outstanding.insert(id);
            q.batches.push_back(Batch {
                id,
                created: Instant::now(),
                first_sent: None,
                last_sent: None,
                send: 0,
                sent_to: None,
                leader_checked: None,
                payload: Some(match piece.payload {
                    PiecePayload::Arrow(_) => BatchPayload::Arrow(Vec::new()),
                    PiecePayload::Kv(_) => BatchPayload::Kv(Vec::new()),
                }),
                encoded: Encoded::Pending,
                bytes: 0,
                trackers: Vec::new(),
                attempts: 0,
                retry_at: None,
                full: false,
                position: None,
                acked_at_send: None,
            });
        }
        // Never taken: a batch was just ensured.
        let Some(b) = q.batches.back_mut() else {
            return false;
        };
        b.bytes += piece.size;
        b.trackers.push(tracker);
        match (&mut b.payload, piece.payload) {
            (Some(BatchPayload::Arrow(v)), PiecePayload::Arrow(rb)) => v.push(rb),
            (Some(BatchPayload::Kv(v)), PiecePayload::Kv(entries)) => v.extend(entries),
            _ => {}
        }
        if b.bytes >= batch_size {
            b.full = true;
        }
        b.full
    }

    /// Whether a batch that is not encoded yet is complete: full, flushed, or lingered long enough.
    fn is_complete(&self, b: &Batch, now: Instant) -> bool {
        b.full || b.id <= self.flush_mark || now >= b.created + self.config.linger
    }

    /// The next moment the task must wake up by itself: a linger or retry backoff still to
    /// come. Deadlines already past are left out: whatever they allow was done by this turn
    /// of the loop unless something else holds it (every encoding slot busy, a batch of the
    /// bucket in flight, a writer id to renew), and that ends with an event that wakes the
    /// task. A past deadline would make the loop spin, taking a core from the encoders.
    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let mut best: Option<Instant> = None;
        let mut consider = |t: Instant| {
            if t > now {
                best = Some(best.map_or(t, |x: Instant| x.min(t)));
            }
        };
        for q in self.queues.values() {
            if let Some(b) = q.batches.back() {
                if matches!(b.encoded, Encoded::Pending) && !b.full {
                    consider(b.created + self.config.linger);
                }
            }
            if q.in_flight.is_empty() {
                if let Some(at) = q.batches.front().and_then(|b| b.retry_at) {
                    consider(at);
                }
            }
            for b in &q.in_flight {
                if let Some(t) = b.leader_checked {
                    consider(t + LEADER_CHECK_AFTER);
                }
            }
        }
        best
    }

    /// Starts encoding complete batches on the blocking pool, oldest first, at most
    /// [`encode_parallelism`] at a time: compression is the writer's main CPU cost and must not
    /// run on the event loop, where it would hold up acks and sends of every bucket.
    fn start_encoding(&mut self, now: Instant) {
        if self.encoding >= self.max_encoding {
            return;
        }
        let mut candidates: Vec<(u64, QueueKey)> = Vec::new();
        for (key, q) in &self.queues {
            // A bucket with nothing sent, encoding or encoded has an idle pipeline: its open
            // batch goes once it holds a quarter of `batch_size` instead of waiting to fill up
            // or linger. The size of a bucket's batches then follows the pace of its server
            // (small while the server keeps up, full when it is the bottleneck), and the
            // server starts on the first rows of a large write while the rest is encoded.
            let idle = q.in_flight.is_empty()
                && q.batches
                    .iter()
                    .all(|b| matches!(b.encoded, Encoded::Pending));
            for b in &q.batches {
                let early = idle && b.bytes >= self.config.batch_size / 4;
                if matches!(b.encoded, Encoded::Pending) && (early || self.is_complete(b, now)) {
                    candidates.push((b.id, *key));
                }
            }
        }
        candidates.sort_unstable();
        let schema_id = self.table.info.schema_id as i16;
        for (id, key) in candidates {
            if self.encoding >= self.max_encoding {
                break;
            }
            let Some(q) = self.queues.get_mut(&key) else {
                continue;
            };
            let Some(b) = q.batches.iter_mut().find(|b| b.id == id) else {
                continue;
            };
            let Some(payload) = b.payload.take() else {
                continue;
            };
            b.full = true;
            b.encoded = Encoded::Running;
            self.encoding += 1;
            let kind = self.kind.clone();
            let events = self.events_tx.clone();
            tokio::task::spawn_blocking(move || {
                let started = Instant::now();
                let result = encode_batch(&kind, schema_id, payload);
                metrics::histogram!(crate::metrics::CLIENT_WRITER_ENCODE_SECONDS)
                    .record(started.elapsed().as_secs_f64());
                let _ = events.send(Event::Encoded { key, id, result });
            });
        }
    }

    fn on_encoded(&mut self, key: QueueKey, id: u64, result: Result<Vec<u8>>) {
        self.encoding -= 1;
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        let Some(at) = q.batches.iter().position(|b| b.id == id) else {
            return;
        };
        match result {
            Ok(bytes) => q.batches[at].encoded = Encoded::Ready(bytes),
            Err(e) => {
                // Never sent, so it holds no place in the sequence: dropping it is safe.
                let Some(batch) = q.batches.remove(at) else {
                    return;
                };
                let e = e.context(format!("table '{}'", self.table.path()));
                self.fail_batch(batch, e);
            }
        }
    }

    /// Sends every bucket's encoded head batches, in order, while the bucket has room in flight.
    /// A batch sent again (it has a position) goes out only when nothing of its bucket is in
    /// flight, so after a failure the bucket's sequence restarts from its lowest unacknowledged
    /// batch, one batch at a time, before pipelining resumes.
    ///
    /// While a new writer id is due, only the batches that must first be resent under the
    /// current one go out ([`BucketQueue::failed_at`]).
    fn send_ready(&mut self, now: Instant) {
        if !self.writer_id_ready {
            return;
        }
        let renewing = self.renew_writer_id;
        let idempotent = self.writer_id != NO_WRITER_ID;
        let max_in_flight = self.config.max_in_flight_per_bucket.max(1);
        let mut to_send: Vec<Outgoing> = Vec::new();
        for (key, q) in self.queues.iter_mut() {
            while let Some(head) = q.batches.front() {
                if renewing && !q.resend_before_renewal(head.position) {
                    break;
                }
                let retry = head.position.is_some() || head.retry_at.is_some();
                let may_send = matches!(head.encoded, Encoded::Ready(_) | Encoded::Sent { .. })
                    && head.retry_at.is_none_or(|at| now >= at)
                    && if retry {
                        q.in_flight.is_empty()
                    } else {
                        q.in_flight.len() < max_in_flight
                    };
                if !may_send {
                    break;
                }
                let Some(mut batch) = q.batches.pop_front() else {
                    break;
                };
                let (writer_id, sequence) = if idempotent {
                    let position = *batch.position.get_or_insert_with(|| {
                        let p = q.next_position;
                        q.next_position += 1;
                        p
                    });
                    (self.writer_id, wire_sequence(position))
                } else {
                    (NO_WRITER_ID, NO_BATCH_SEQUENCE)
                };
                match stamp(&self.kind, &mut batch.encoded, writer_id, sequence) {
                    Ok(bytes) => {
                        batch.first_sent.get_or_insert(now);
                        batch.last_sent = Some(now);
                        batch.acked_at_send = q.last_acked;
                        batch.retry_at = None;
                        self.next_send += 1;
                        batch.send = self.next_send;
                        batch.sent_to = None;
                        batch.leader_checked = Some(now);
                        to_send.push(Outgoing {
                            key: *key,
                            id: batch.id,
                            send: batch.send,
                            bytes,
                        });
                        q.in_flight.push_back(batch);
                        self.in_flight += 1;
                        metrics::gauge!(crate::metrics::CLIENT_WRITER_IN_FLIGHT_BATCHES)
                            .increment(1.0);
                    }
                    Err(e) => {
                        // Cannot happen for bytes we encoded; fail the batch rather than loop.
                        let e = e.context(format!("table '{}'", self.table.path()));
                        self.first_error.get_or_insert_with(|| e.clone());
                        self.outstanding.remove(&batch.id);
                        self.buffered.fetch_sub(batch.bytes, Ordering::AcqRel);
                        self.capacity.notify_waiters();
                        for t in batch.trackers {
                            t.complete(Err(e.clone()));
                        }
                        if let Some(p) = batch.position {
                            q.sequence_broken_at(p);
                            self.renew_writer_id = true;
                            break;
                        }
                    }
                }
            }
        }
        if !to_send.is_empty() {
            // The dispatcher lives as long as the writer task holds its sender.
            let _ = self.dispatch.send(to_send);
        }
    }

    fn fail_batch(&mut self, batch: Batch, e: Error) {
        self.record_error(&e);
        self.outstanding.remove(&batch.id);
        self.release(batch.bytes);
        for t in batch.trackers {
            t.complete(Err(e.clone()));
        }
    }

    fn ack_batch(&mut self, batch: Batch) {
        self.outstanding.remove(&batch.id);
        self.release(batch.bytes);
        for t in batch.trackers {
            t.complete(Ok(()));
        }
    }

    fn on_outcome(&mut self, key: QueueKey, id: u64, send: u64, result: Result<()>) {
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        // The answer to a send that was given up (its batch went to a new leader) finds no
        // in-flight send of that token and is dropped: it says nothing about the later send.
        let Some(at) = q
            .in_flight
            .iter()
            .position(|b| b.id == id && b.send == send)
        else {
            return;
        };
        let Some(mut batch) = q.in_flight.remove(at) else {
            return;
        };
        self.in_flight -= 1;
        metrics::gauge!(crate::metrics::CLIENT_WRITER_IN_FLIGHT_BATCHES).decrement(1.0);
        if let Some(t) = batch.last_sent {
            metrics::histogram!(crate::metrics::CLIENT_WRITER_BATCH_IN_FLIGHT_SECONDS)
                .record(t.elapsed().as_secs_f64());
        }
        // A later batch of the bucket was acknowledged, so the server appended this one too
        // (it accepts a sequence only after its predecessor): whatever this answer says, the
        // rows are in.
        let committed_before =
            matches!((batch.position, q.last_acked), (Some(p), Some(l)) if p <= l);
        let result = match result {
            Err(e) if e.fluss_code() == Some(codes::DUPLICATE_SEQUENCE_EXCEPTION) => Ok(()),
            Err(_) if committed_before => Ok(()),
            r => r,
        };
        let e = match result {
            Ok(()) => {
                if let Some(p) = batch.position {
                    q.last_acked = Some(q.last_acked.map_or(p, |l| l.max(p)));
                }
                self.ack_batch(batch);
                return;
            }
            Err(e) => e,
        };
        let code = e.fluss_code();
        let idempotent = self.writer_id != NO_WRITER_ID;
        // OUT_OF_ORDER_SEQUENCE for a batch that is not the next one the server expects means
        // an earlier batch of the bucket did not get in (yet): send it again after that one.
        // So does one for a batch that became the next one only after it was sent (an earlier
        // batch was acknowledged since): the answer predates that acknowledgement (Fluss's
        // #4125, the Rust client's #4238). For the next expected batch, with no acknowledgement
        // since its send, it means the server lost this writer's state.
        let expected_next = q.last_acked.map_or(0, |l| l + 1);
        let out_of_order = code == Some(codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION);
        let acked_since_send = q.last_acked != batch.acked_at_send;
        let behind_a_failure = out_of_order
            && idempotent
            && (batch.position != Some(expected_next) || acked_since_send);
        let elapsed = batch.first_sent.map_or(Duration::ZERO, |t| t.elapsed());
        // A partition the coordinator already reported can still be unknown to its
        // tablet server for a moment (Fluss creates the replicas asynchronously), so
        // PARTITION_NOT_EXISTS is retried briefly; a partition that was really dropped
        // still fails within seconds.
        let fresh_partition = code == Some(codes::PARTITION_NOT_EXISTS)
            && key.0.is_some()
            && elapsed < NEW_PARTITION_GRACE;
        let retriable = (e.is_retriable()
            || matches!(e.kind(), ErrorKind::Network | ErrorKind::Timeout)
            || code == Some(codes::UNKNOWN_WRITER_ID_EXCEPTION)
            || fresh_partition
            || behind_a_failure)
            && batch.attempts < self.config.retries
            && elapsed < self.config.delivery_timeout
            && !self.conn.is_closed();
        if idempotent
            && (code == Some(codes::UNKNOWN_WRITER_ID_EXCEPTION)
                || (out_of_order && !behind_a_failure))
        {
            // The server lost this writer's state for the bucket: it can no longer tell a
            // resent batch from a new one under the current id, so nothing waits to be resent
            // under it.
            q.failed_at = None;
            self.renew_writer_id = true;
        }
        if is_stale_metadata(&e) {
            self.conn.invalidate_table(self.table.info.table_id);
        }
        if retriable {
            tracing::debug!(bucket = key.1, attempt = batch.attempts, error = %e, "retrying batch");
            batch.retry_at = Some(Instant::now() + self.conn.backoff().delay(batch.attempts));
            batch.attempts += 1;
            q.requeue(batch);
            return;
        }
        if let (true, Some(p)) = (idempotent, batch.position) {
            // The server may or may not have appended it (a timeout, retries used up): its
            // sequence number cannot be given to another batch, and the later batches of the
            // bucket cannot follow it. A new writer id renumbers the batches still queued,
            // once those before it are resent under this one.
            q.sequence_broken_at(p);
            self.renew_writer_id = true;
        }
        let where_ = match key.0 {
            Some(p) => format!(
                "writing to bucket {} of partition {} of table '{}'",
                key.1,
                p,
                self.table.path()
            ),
            None => format!(
                "writing to bucket {} of table '{}'",
                key.1,
                self.table.path()
            ),
        };
        self.fail_batch(batch, e.context(where_));
    }

    /// Whether a queued batch must still be resent under the current writer id before a new one
    /// renumbers the rest ([`BucketQueue::failed_at`]).
    fn resends_due(&self) -> bool {
        self.queues.values().any(|q| {
            q.batches
                .iter()
                .any(|b| q.resend_before_renewal(b.position))
        })
    }

    fn resolve_flushes(&mut self) {
        if self.flush_waiters.is_empty() {
            return;
        }
        let min_outstanding = self.outstanding.iter().next().copied();
        let mut i = 0;
        while i < self.flush_waiters.len() {
            let mark = self.flush_waiters[i].0;
            let done = match min_outstanding {
                None => true,
                Some(m) => m > mark,
            };
            if done {
                let (_, tx) = self.flush_waiters.swap_remove(i);
                let r = self.first_error.take().map_or(Ok(()), Err);
                let _ = tx.send(r);
            } else {
                i += 1;
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
        None => std::future::pending::<()>().await,
    }
}

/// Encodes a batch's rows (the expensive part: Arrow IPC with compression, or the KV records),
/// with no writer state yet; [`stamp`] numbers it when it is sent.
fn encode_batch(kind: &WriteKind, schema_id: i16, payload: BatchPayload) -> Result<Vec<u8>> {
    match (payload, kind) {
        (
            BatchPayload::Arrow(parts),
            WriteKind::Log {
                compression,
                statistics: Some(spec),
            },
        ) => {
            // Statistics are computed over the whole batch, so its pieces are joined first.
            let one = match <[_; 1]>::try_from(parts) {
                Ok([one]) => one,
                Err(parts) => {
                    let schema = parts
                        .first()
                        .map(|p| p.schema())
                        .ok_or_else(|| Error::internal("empty arrow batch"))?;
                    arrow_select::concat::concat_batches(&schema, &parts)?
                }
            };
            if let Some(st) = BatchStatistics::compute(&one, &spec.types, &spec.columns)? {
                return build_arrow_log_batch_with_statistics(
                    schema_id,
                    &one,
                    *compression,
                    &st.encode(&spec.types)?,
                );
            }
            build_arrow_log_batch(
                schema_id,
                &one,
                *compression,
                None,
                NO_WRITER_ID,
                NO_BATCH_SEQUENCE,
            )
        }
        (
            BatchPayload::Arrow(parts),
            WriteKind::Log {
                compression,
                statistics: None,
            },
        ) => {
            // The pieces are encoded as they are (no concatenation for flat columns).
            build_arrow_log_batch_from_parts(
                schema_id,
                &parts,
                *compression,
                NO_WRITER_ID,
                NO_BATCH_SEQUENCE,
            )
        }
        (BatchPayload::Kv(entries), WriteKind::Kv { .. }) => {
            let mut b = KvBatchBuilder::new(schema_id);
            for e in &entries {
                b.append(&e.key, e.value.as_deref())?;
            }
            Ok(b.build(NO_WRITER_ID, NO_BATCH_SEQUENCE))
        }
        _ => Err(Error::internal(
            "batch payload does not match the writer kind",
        )),
    }
}

/// The bytes to send for an encoded batch, carrying `writer_id` and `sequence`. The first send
/// stamps the encoded bytes in place; a retry with the same writer state resends them as they
/// are; a retry under a new writer id stamps a copy.
fn stamp(kind: &WriteKind, encoded: &mut Encoded, writer_id: i64, sequence: i32) -> Result<Bytes> {
    let set = |buf: &mut [u8]| match kind {
        WriteKind::Log { .. } => set_writer_state(buf, writer_id, sequence),
        WriteKind::Kv { .. } => set_kv_writer_state(buf, writer_id, sequence),
    };
    let bytes = match std::mem::replace(encoded, Encoded::Pending) {
        Encoded::Ready(mut v) => {
            set(&mut v)?;
            Bytes::from(v)
        }
        Encoded::Sent {
            bytes,
            writer_id: w,
            sequence: s,
        } if w == writer_id && s == sequence => bytes,
        Encoded::Sent { bytes, .. } => {
            let mut v = bytes.to_vec();
            set(&mut v)?;
            Bytes::from(v)
        }
        other => {
            *encoded = other;
            return Err(Error::internal("a batch was sent before it was encoded"));
        }
    };
    *encoded = Encoded::Sent {
        bytes: bytes.clone(),
        writer_id,
        sequence,
    };
    Ok(bytes)
}

/// One encoded batch on its way to its bucket's leader.
struct Outgoing {
    key: QueueKey,
    id: u64,
    /// The batch's send token ([`Batch::send`]).
    send: u64,
    bytes: Bytes,
}

/// Sends the writer's batches: one task per writer that takes each round of ready batches in
/// the order the writer task made them, groups them by leader into requests of at most
/// `request_max_size` bytes, and puts each request on its connection's write queue before
/// taking the next round, so batches of one bucket reach the server in sequence order while
/// their answers are awaited concurrently.
struct Dispatcher {
    conn: Connection,
    table_id: i64,
    kind: WriteKind,
    acks: i32,
    timeout_ms: i32,
    request_max_size: usize,
    /// The request frame limit a server reported when it refused one of this writer's
    /// requests for its size (`netty.server.max-request-size`), `usize::MAX` until then:
    /// later requests are cut below it.
    server_frame_limit: AtomicUsize,
    events: mpsc::UnboundedSender<Event>,
    /// The writer's abort flag ([`WriterHandle::abort`]).
    abort: watch::Receiver<bool>,
}

/// Fluss's server option that bounds one request frame (`netty.server.max-request-size`).
pub(crate) const SERVER_MAX_REQUEST_SIZE_OPTION: &str = "netty.server.max-request-size";

/// A server's refusal of a request frame for its size, read from the error that closed the
/// connection: the refused frame's length (without its 4-byte length prefix) and the limit it
/// broke, in the same terms.
///
/// The embedded server sends a SERVER_FAILURE (CORRUPT_MESSAGE) "frame of N bytes exceeds the
/// maximum frame size of M bytes", N and M without the prefix. Fluss's Netty frame decoder
/// fails with a TooLongFrameException, sent as a SERVER_FAILURE (UNKNOWN_SERVER_ERROR) whose
/// message is its stack trace: "Adjusted frame length exceeds M: N - discarded", N counting the
/// prefix and M compared with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameRefusal {
    /// The refused frame's length, prefix excluded.
    pub frame_len: usize,
    /// The largest frame length (prefix excluded) the server takes.
    pub limit: usize,
    /// The server's limit as its option states it.
    pub option_value: usize,
}

/// The number right after `marker` in `text`.
fn number_after(text: &str, marker: &str) -> Option<usize> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse().ok()
}

impl FrameRefusal {
    /// The refusal `e` reports, if it is one.
    pub(crate) fn of(e: &Error) -> Option<FrameRefusal> {
        let code = e.fluss_code()?;
        let text = e.message();
        if code == codes::CORRUPT_MESSAGE {
            let frame_len = number_after(text, "frame of ")?;
            let limit = number_after(text, "exceeds the maximum frame size of ")?;
            return Some(FrameRefusal {
                frame_len,
                limit,
                option_value: limit,
            });
        }
        if code == codes::UNKNOWN_SERVER_ERROR && text.contains("TooLongFrameException") {
            let marker = "frame length exceeds ";
            let max = number_after(text, marker)?;
            let after = &text[text.find(marker)? + marker.len()..];
            let len = number_after(after, ": ")?;
            let prefix = crate::rpc::frame::LENGTH_FIELD_SIZE;
            return Some(FrameRefusal {
                frame_len: len.checked_sub(prefix)?,
                limit: max.checked_sub(prefix)?,
                option_value: max,
            });
        }
        None
    }
}

impl Dispatcher {
    /// Sends each round until the writer task goes away or an abort stops it (the rounds not
    /// sent yet are dropped).
    async fn run(self, mut rounds: mpsc::UnboundedReceiver<Vec<Outgoing>>) {
        let mut abort = self.abort.clone();
        let this = Arc::new(self);
        let serve = async {
            while let Some(round) = rounds.recv().await {
                this.clone().send_round(round).await;
            }
        };
        tokio::select! {
            biased;
            _ = abort_requested(&mut abort) => {}
            _ = serve => {}
        }
    }

    async fn send_round(self: Arc<Self>, items: Vec<Outgoing>) {
        // Leaders in first-seen order, so requests go out in the order of the round.
        let mut groups: Vec<(String, Vec<Outgoing>)> = Vec::new();
        for item in items {
            match self
                .conn
                .leader_node(self.table_id, item.key.0, item.key.1)
                .await
            {
                Ok(node) => {
                    let _ = self.events.send(Event::Routed {
                        key: item.key,
                        id: item.id,
                        send: item.send,
                        address: node.address.clone(),
                    });
                    match groups.iter_mut().find(|(a, _)| *a == node.address) {
                        Some((_, v)) => v.push(item),
                        None => groups.push((node.address, vec![item])),
                    }
                }
                Err(e) => {
                    let _ = self.events.send(Event::Sent {
                        key: item.key,
                        id: item.id,
                        send: item.send,
                        result: Err(e),
                    });
                }
            }
        }
        for (address, items) in groups {
            // Requests of at most request_max_size bytes (at least one batch each), and below
            // a frame limit the server reported.
            let frame_limit = self.server_frame_limit.load(Ordering::Relaxed);
            let mut chunk: Vec<Outgoing> = Vec::new();
            let mut chunk_bytes = 0usize;
            // An upper bound of the chunk's frame length.
            let mut chunk_frame = REQUEST_OVERHEAD;
            for item in items {
                // A request carries a bucket at most once (its answer is per bucket); a second
                // batch of the same bucket goes in the next request, sent right after.
                let repeat = chunk.iter().any(|o| o.key == item.key);
                if !chunk.is_empty()
                    && (repeat
                        || chunk_bytes + item.bytes.len() > self.request_max_size
                        || chunk_frame + item.bytes.len() + BUCKET_OVERHEAD > frame_limit)
                {
                    self.clone()
                        .send_request(&address, std::mem::take(&mut chunk))
                        .await;
                    chunk_bytes = 0;
                    chunk_frame = REQUEST_OVERHEAD;
                }
                chunk_bytes += item.bytes.len();
                chunk_frame += item.bytes.len() + BUCKET_OVERHEAD;
                chunk.push(item);
            }
            if !chunk.is_empty() {
                self.clone().send_request(&address, chunk).await;
            }
        }
    }

    /// Queues one request on the connection to `address` and leaves the wait for its answer
    /// to a task of its own.
    async fn send_request(self: Arc<Self>, address: &str, items: Vec<Outgoing>) {
        let ids: Vec<(QueueKey, u64, u64)> = items.iter().map(|o| (o.key, o.id, o.send)).collect();
        let api = match self.kind {
            WriteKind::Log { .. } => crate::rpc::ApiKey::ProduceLog.name(),
            WriteKind::Kv { .. } => crate::rpc::ApiKey::PutKv.name(),
        };
        let bytes: usize = items.iter().map(|o| o.bytes.len()).sum();
        metrics::counter!(crate::metrics::CLIENT_WRITER_REQUESTS, "api" => api).increment(1);
        metrics::counter!(crate::metrics::CLIENT_WRITER_REQUEST_BATCHES, "api" => api)
            .increment(items.len() as u64);
        metrics::counter!(crate::metrics::CLIENT_WRITER_REQUEST_BYTES, "api" => api)
            .increment(bytes as u64);
        let server = match self.conn.server(address).await {
            Ok(s) => s,
            Err(e) => {
                self.report(&ids, Err(e));
                return;
            }
        };
        let this = self.clone();
        let mut abort = self.abort.clone();
        let mut exchange = Box::pin(async move {
            tokio::select! {
                biased;
                // After an abort nobody waits for the answer (a request is safe to drop).
                _ = abort_requested(&mut abort) => {}
                result = this.request(&server, items) => this.report(&ids, result),
            }
        });
        // Poll once here: that puts the request frame on the connection's write queue (the
        // queue's waiters are served in order, so this holds even when it is full) before the
        // next request of this writer is made. The rest of the exchange, the wait for the
        // answer, runs in its own task.
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        if exchange.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(exchange);
        }
    }

    fn report(&self, ids: &[(QueueKey, u64, u64)], result: Result<Vec<(QueueKey, Result<()>)>>) {
        match result {
            Err(e) => {
                for (key, id, send) in ids {
                    let _ = self.events.send(Event::Sent {
                        key: *key,
                        id: *id,
                        send: *send,
                        result: Err(e.clone()),
                    });
                }
            }
            Ok(per_bucket) => {
                let mut answered: HashMap<QueueKey, Result<()>> = per_bucket.into_iter().collect();
                for (key, id, send) in ids {
                    let result = answered.remove(key).unwrap_or_else(|| {
                        Err(Error::from_fluss(
                            codes::UNKNOWN_SERVER_ERROR,
                            format!("the server did not answer for bucket {}", key.1),
                        ))
                    });
                    let _ = self.events.send(Event::Sent {
                        key: *key,
                        id: *id,
                        send: *send,
                        result,
                    });
                }
            }
        }
    }

    /// The request carrying `items`, as the table's write API wants it.
    fn build(&self, items: &[Outgoing]) -> WriteRequest {
        match &self.kind {
            WriteKind::Log { .. } => WriteRequest::Log(ProduceLogRequest {
                acks: self.acks,
                table_id: self.table_id,
                timeout_ms: self.timeout_ms,
                buckets_req: items
                    .iter()
                    .map(|o| PbProduceLogReqForBucket {
                        partition_id: o.key.0,
                        bucket_id: o.key.1,
                        records: o.bytes.clone(),
                    })
                    .collect(),
            }),
            WriteKind::Kv { target_columns } => WriteRequest::Kv(PutKvRequest {
                acks: self.acks,
                table_id: self.table_id,
                timeout_ms: self.timeout_ms,
                target_columns: target_columns.clone().unwrap_or_default(),
                buckets_req: items
                    .iter()
                    .map(|o| PbPutKvReqForBucket {
                        partition_id: o.key.0,
                        bucket_id: o.key.1,
                        records: o.bytes.clone(),
                    })
                    .collect(),
                agg_mode: None,
            }),
        }
    }

    async fn request(
        &self,
        server: &ServerConnection,
        items: Vec<Outgoing>,
    ) -> Result<Vec<(QueueKey, Result<()>)>> {
        let per_bucket =
            |partition_id: Option<i64>, bucket_id: i32, code: Option<i32>, msg: Option<String>| {
                let r = match code.filter(|c| *c != codes::NONE) {
                    None => Ok(()),
                    Some(c) => Err(Error::from_fluss(c, msg.unwrap_or_default())),
                };
                ((partition_id, bucket_id), r)
            };
        let req = self.build(&items);
        let frame_len = req.frame_len();
        let answer = match &req {
            WriteRequest::Log(req) => server.request(req).await.map(|resp| {
                resp.buckets_resp
                    .into_iter()
                    .map(|r| per_bucket(r.partition_id, r.bucket_id, r.error_code, r.error_message))
                    .collect()
            }),
            WriteRequest::Kv(req) => server.request(req).await.map(|resp| {
                resp.buckets_resp
                    .into_iter()
                    .map(|r| per_bucket(r.partition_id, r.bucket_id, r.error_code, r.error_message))
                    .collect()
            }),
        };
        drop(req);
        let e = match answer {
            Ok(per_bucket) => return Ok(per_bucket),
            Err(e) => e,
        };
        let Some(refusal) = FrameRefusal::of(&e) else {
            return Err(e);
        };
        if refusal.frame_len != frame_len {
            // Another request on the same connection was refused (the server closed the
            // connection for it): this one was not, and is sent again.
            return Err(Error::network(format!(
                "{} (the connection was closed for another request; {frame_len} bytes resent)",
                e.message()
            )));
        }
        // This request was too large. Later requests of this writer stay below the limit; each
        // batch that fits a request of its own is sent again in one, and a batch that does not
        // fails naming its size, the limit and the server option to raise (retrying cannot
        // help it; a batch over the limit holds one row unless rows of one call share it).
        self.server_frame_limit
            .fetch_min(refusal.limit, Ordering::Relaxed);
        Ok(items
            .iter()
            .map(|o| {
                let alone = self.build(std::slice::from_ref(o)).frame_len();
                let r = if alone > refusal.limit {
                    Err(record_too_large(alone, o.bytes.len(), refusal))
                } else {
                    Err(Error::network(format!(
                        "a request of {frame_len} bytes was over the server's limit of {} \
                         bytes ({SERVER_MAX_REQUEST_SIZE_OPTION}); the batch of {} bytes is sent \
                         again in a smaller request",
                        refusal.option_value,
                        o.bytes.len()
                    )))
                };
                (o.key, r)
            })
            .collect())
    }
}

/// The error for a batch that no request the server takes can carry.
fn record_too_large(frame_len: usize, batch_len: usize, refusal: FrameRefusal) -> Error {
    Error::from_fluss(
        codes::RECORD_TOO_LARGE_EXCEPTION,
        format!(
            "a record batch of {batch_len} bytes (a request frame of {frame_len} bytes) is larger \
             than the server's request limit of {} bytes; raise the server option \
             {SERVER_MAX_REQUEST_SIZE_OPTION}, or write smaller rows (a batch this large holds \
             a single row unless rows of one write share it)",
            refusal.option_value
        ),
    )
}

/// Bytes a produce or put request adds around its buckets (header, table id, acks, timeout,
/// target columns), with room to spare: a request is cut so that this plus its buckets stay
/// below a frame limit the server reported.
const REQUEST_OVERHEAD: usize = 1024;
/// Bytes one bucket adds to a request besides its batch (field tags, lengths, ids), with room
/// to spare.
const BUCKET_OVERHEAD: usize = 64;

/// One ProduceLog or PutKv request.
enum WriteRequest {
    Log(ProduceLogRequest),
    Kv(PutKvRequest),
}

impl WriteRequest {
    /// The length of its frame, length prefix excluded (as servers compare it with a limit).
    fn frame_len(&self) -> usize {
        use prost::Message;
        let body = match self {
            WriteRequest::Log(r) => r.encoded_len(),
            WriteRequest::Kv(r) => r.encoded_len(),
        };
        crate::rpc::frame::REQUEST_HEADER_LENGTH + body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_refusals_of_both_servers_are_read() {
        // The embedded server's refusal, as the client reports it.
        let embedded = Error::from_fluss(
            codes::CORRUPT_MESSAGE,
            "frame of 2097160 bytes exceeds the maximum frame size of 1048576 bytes",
        )
        .context("server 127.0.0.1:9123 failed the connection");
        assert_eq!(
            FrameRefusal::of(&embedded),
            Some(FrameRefusal {
                frame_len: 2_097_160,
                limit: 1_048_576,
                option_value: 1_048_576,
            })
        );
        // Fluss's: Netty's TooLongFrameException (its length counts the 4-byte prefix) as the
        // stack trace of an UNKNOWN_SERVER_ERROR.
        let fluss = Error::from_fluss(
            codes::UNKNOWN_SERVER_ERROR,
            "org.apache.fluss.shaded.netty4.io.netty.handler.codec.TooLongFrameException: \
             Adjusted frame length exceeds 104857600: 209715212 - discarded\n\tat org.apache...",
        );
        assert_eq!(
            FrameRefusal::of(&fluss),
            Some(FrameRefusal {
                frame_len: 209_715_208,
                limit: 104_857_596,
                option_value: 104_857_600,
            })
        );
        // Other failures are not refusals for size.
        for e in [
            Error::from_fluss(codes::CORRUPT_MESSAGE, "bad CRC in batch"),
            Error::from_fluss(
                codes::UNKNOWN_SERVER_ERROR,
                "java.lang.NullPointerException",
            ),
            Error::network("frame of 10 bytes exceeds the maximum frame size of 5 bytes"),
        ] {
            assert_eq!(FrameRefusal::of(&e), None, "{e}");
        }
    }
}
