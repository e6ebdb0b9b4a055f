//! The writer's background task: it routes queued writes to buckets, batches them (size,
//! linger, memory bound), numbers batches per bucket for idempotence, sends them to bucket
//! leaders, retries retriable failures and resolves each write's future at ack.
//!
//! One task per writer owns all batching state, so no locks are needed; the writer handle talks
//! to it through an ordered channel, which keeps writes in call order per bucket. At most one
//! batch per bucket is in flight, so a retried batch can never be overtaken by a later one and
//! sequence numbers stay contiguous.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use tokio::sync::{mpsc, oneshot, Notify};

use super::bucket::BucketAssigner;
use super::future::{Tracker, WriteFuture};
use crate::client::WriterConfig;
use crate::client::{is_stale_metadata, Connection, Table};
use crate::metadata::error_codes;
use crate::metadata::PartitionSpec;
use crate::proto::{
    InitWriterRequest, PbProduceLogReqForBucket, PbPutKvReqForBucket, ProduceLogRequest,
    PutKvRequest,
};
use crate::record::arrow_payload::ArrowCompression;
use crate::record::kv_batch::KvBatchBuilder;
use crate::record::log_batch::build_arrow_log_batch;
use crate::{Error, ErrorKind, Result};

/// No writer id: the server skips idempotence checks.
pub(crate) const NO_WRITER_ID: i64 = -1;
/// No batch sequence.
pub(crate) const NO_BATCH_SEQUENCE: i32 = -1;

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

/// What the table's batches carry.
#[derive(Debug, Clone)]
pub(crate) enum WriteKind {
    /// Arrow log batches (magic 0) with this compression.
    Log { compression: ArrowCompression },
    /// KV batches, with the target columns of a partial update.
    Kv { target_columns: Option<Vec<i32>> },
}

enum Command {
    Write {
        pieces: Vec<Piece>,
        tracker: Arc<Tracker>,
    },
    Flush(oneshot::Sender<Result<()>>),
    Close(oneshot::Sender<Result<()>>),
}

/// The handle side: submit writes, flush, close.
pub(crate) struct WriterHandle {
    tx: mpsc::UnboundedSender<Command>,
    buffered: Arc<AtomicUsize>,
    capacity: Arc<Notify>,
    buffer_memory: usize,
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
        let (results_tx, results_rx) = mpsc::unbounded_channel();
        let buffered = Arc::new(AtomicUsize::new(0));
        let capacity = Arc::new(Notify::new());
        let buckets = table.info.descriptor.bucket_count.unwrap_or(1).max(1);
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
            results_tx,
            results_rx,
            queues: HashMap::new(),
            in_flight: HashMap::new(),
            assigners: HashMap::new(),
            partition_ids: HashMap::new(),
            next_batch_id: 1,
            outstanding: BTreeSet::new(),
            flush_mark: 0,
            flush_waiters: Vec::new(),
            close_waiters: Vec::new(),
            first_error: None,
            buffered: buffered.clone(),
            capacity: capacity.clone(),
            closing: false,
        };
        let buffer_memory = task.config.buffer_memory;
        handle.spawn(task.run());
        Ok(WriterHandle {
            tx,
            buffered,
            capacity,
            buffer_memory,
        })
    }

    /// Queues a write made of `pieces`; the future resolves at ack.
    pub(crate) fn submit(&self, pieces: Vec<Piece>) -> WriteFuture {
        let size: usize = pieces.iter().map(|p| p.size).sum();
        let (tracker, fut) = Tracker::new(pieces.len());
        if pieces.is_empty() {
            return fut;
        }
        self.buffered.fetch_add(size, Ordering::AcqRel);
        if self.tx.send(Command::Write { pieces, tracker }).is_err() {
            self.buffered.fetch_sub(size, Ordering::AcqRel);
            return WriteFuture::failed(closed_error());
        }
        fut
    }

    /// Bytes queued or in flight and not yet acknowledged.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.buffered.load(Ordering::Acquire)
    }

    /// Waits until the buffered bytes are below the memory bound.
    pub(crate) async fn ready(&self) {
        loop {
            let notified = self.capacity.notified();
            if self.buffered_bytes() < self.buffer_memory || self.tx.is_closed() {
                return;
            }
            notified.await;
        }
    }

    /// Sends everything queued so far and waits for the acks; returns the first write error seen
    /// since the previous flush.
    pub(crate) async fn flush(&self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Command::Flush(tx))
            .map_err(|_| closed_error())?;
        rx.await.map_err(|_| closed_error())?
    }

    /// Flushes and stops the writer task.
    pub(crate) async fn close(&self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Command::Close(tx)).is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }
}

/// How long a write keeps retrying PARTITION_NOT_EXISTS for a partition the metadata named.
const NEW_PARTITION_GRACE: Duration = Duration::from_secs(10);

fn closed_error() -> Error {
    Error::new(ErrorKind::Closed, "the writer is closed")
}

type QueueKey = (Option<i64>, i32);

struct Batch {
    id: u64,
    created: Instant,
    first_sent: Option<Instant>,
    payload: BatchPayload,
    bytes: usize,
    trackers: Vec<Arc<Tracker>>,
    attempts: u32,
    retry_at: Option<Instant>,
    full: bool,
}

enum BatchPayload {
    Arrow(Vec<RecordBatch>),
    Kv(Vec<KvEntry>),
}

#[derive(Default)]
struct BucketQueue {
    batches: VecDeque<Batch>,
    in_flight: bool,
    next_seq: i32,
}

struct Outcome {
    key: QueueKey,
    result: Result<()>,
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
    results_tx: mpsc::UnboundedSender<Outcome>,
    results_rx: mpsc::UnboundedReceiver<Outcome>,
    queues: HashMap<QueueKey, BucketQueue>,
    in_flight: HashMap<QueueKey, Batch>,
    assigners: HashMap<Option<i64>, BucketAssigner>,
    partition_ids: HashMap<String, i64>,
    next_batch_id: u64,
    outstanding: BTreeSet<u64>,
    flush_mark: u64,
    flush_waiters: Vec<(u64, oneshot::Sender<Result<()>>)>,
    close_waiters: Vec<oneshot::Sender<Result<()>>>,
    first_error: Option<Error>,
    buffered: Arc<AtomicUsize>,
    capacity: Arc<Notify>,
    closing: bool,
}

impl WriterTask {
    async fn run(mut self) {
        loop {
            if !self.writer_id_ready || (self.renew_writer_id && self.in_flight.is_empty()) {
                self.init_writer_id().await;
            }
            self.send_ready();
            self.resolve_flushes();
            if self.closing && self.outstanding.is_empty() && self.in_flight.is_empty() {
                let err = self.first_error.take();
                for w in self.close_waiters.drain(..) {
                    let _ = w.send(err.clone().map_or(Ok(()), Err));
                }
                return;
            }
            let deadline = self.next_deadline();
            tokio::select! {
                cmd = self.rx.recv(), if !self.closing => match cmd {
                    None => self.start_closing(),
                    Some(Command::Write { pieces, tracker }) => self.accept(pieces, tracker).await,
                    Some(Command::Flush(tx)) => {
                        let mark = self.next_batch_id - 1;
                        self.flush_mark = self.flush_mark.max(mark);
                        self.flush_waiters.push((mark, tx));
                    }
                    Some(Command::Close(tx)) => {
                        self.close_waiters.push(tx);
                        self.start_closing();
                    }
                },
                Some(outcome) = self.results_rx.recv() => self.on_outcome(outcome),
                _ = sleep_until(deadline), if deadline.is_some() => {}
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
        let req = InitWriterRequest {
            table_path: vec![crate::client::compat::pb_path(self.table.path())],
        };
        let r = self
            .conn
            .with_retries(|| async { self.conn.any_tablet_server().await?.request(&req).await })
            .await;
        match r {
            Ok(resp) => {
                self.writer_id = resp.writer_id;
                for q in self.queues.values_mut() {
                    q.next_seq = 0;
                }
            }
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
                error_codes::PARTITION_NOT_EXISTS,
                format!(
                    "partition '{name}' of table '{path}' does not exist (set client.writer.dynamic-create-partition.enabled=true to create it on write)"
                ),
            )
        })?;
        self.partition_ids.insert(name.to_string(), id);
        Ok(id)
    }

    async fn accept(&mut self, pieces: Vec<Piece>, tracker: Arc<Tracker>) {
        for piece in pieces {
            let partition_id = match &piece.partition {
                None => None,
                Some((name, spec)) => match self.partition_id(name, spec).await {
                    Ok(id) => Some(id),
                    Err(e) => {
                        self.release(piece.size);
                        self.record_error(&e);
                        tracker.complete(Err(e));
                        continue;
                    }
                },
            };
            let sticky = piece.bucket.is_none();
            let bucket = match piece.bucket {
                Some(b) => b,
                None => {
                    let kind = self.config.no_key_assigner;
                    let buckets = self.buckets;
                    self.assigners
                        .entry(partition_id)
                        .or_insert_with(|| BucketAssigner::new(kind, buckets))
                        .assign()
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
        let fits = q.batches.back().is_some_and(|b| {
            !b.full && b.first_sent.is_none() && b.bytes + piece.size <= batch_size
        });
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
                payload: match piece.payload {
                    PiecePayload::Arrow(_) => BatchPayload::Arrow(Vec::new()),
                    PiecePayload::Kv(_) => BatchPayload::Kv(Vec::new()),
                },
                bytes: 0,
                trackers: Vec::new(),
                attempts: 0,
                retry_at: None,
                full: false,
            });
        }
        let b = q.batches.back_mut().expect("a batch was just ensured");
        b.bytes += piece.size;
        b.trackers.push(tracker);
        match (&mut b.payload, piece.payload) {
            (BatchPayload::Arrow(v), PiecePayload::Arrow(rb)) => v.push(rb),
            (BatchPayload::Kv(v), PiecePayload::Kv(entries)) => v.extend(entries),
            _ => {}
        }
        if b.bytes >= batch_size {
            b.full = true;
        }
        b.full
    }

    fn is_ready(&self, b: &Batch, now: Instant) -> bool {
        if let Some(at) = b.retry_at {
            if now < at {
                return false;
            }
            return true;
        }
        b.full || b.id <= self.flush_mark || now >= b.created + self.config.linger
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut best: Option<Instant> = None;
        for q in self.queues.values() {
            if q.in_flight {
                continue;
            }
            if let Some(b) = q.batches.front() {
                let t = b.retry_at.unwrap_or(b.created + self.config.linger);
                best = Some(best.map_or(t, |x: Instant| x.min(t)));
            }
        }
        best
    }

    /// Takes the ready head batch of every idle bucket and sends them, grouped by leader.
    fn send_ready(&mut self) {
        if !self.writer_id_ready || self.renew_writer_id {
            return;
        }
        let now = Instant::now();
        let keys: Vec<QueueKey> = self
            .queues
            .iter()
            .filter(|(_, q)| {
                !q.in_flight && q.batches.front().is_some_and(|b| self.is_ready(b, now))
            })
            .map(|(k, _)| *k)
            .collect();
        if keys.is_empty() {
            return;
        }
        let schema_id = self.table.info.schema_id as i16;
        let mut to_send: Vec<(QueueKey, Vec<u8>, usize)> = Vec::new();
        for key in keys {
            let q = self.queues.get_mut(&key).expect("key from the map");
            let mut batch = q.batches.pop_front().expect("head checked above");
            let seq = if self.writer_id == NO_WRITER_ID {
                NO_BATCH_SEQUENCE
            } else {
                q.next_seq
            };
            let built = build_batch(&self.kind, schema_id, &batch, self.writer_id, seq);
            match built {
                Ok(bytes) => {
                    q.in_flight = true;
                    batch.first_sent.get_or_insert(now);
                    batch.retry_at = None;
                    let n = bytes.len();
                    to_send.push((key, bytes, n));
                    self.in_flight.insert(key, batch);
                }
                Err(e) => {
                    let e = e.context(format!("table '{}'", self.table.path()));
                    self.fail_batch(batch, e);
                }
            }
        }
        if to_send.is_empty() {
            return;
        }
        let sender = Sender {
            conn: self.conn.clone(),
            table_id: self.table.info.table_id,
            kind: self.kind.clone(),
            acks: self.config.acks,
            timeout_ms: self
                .conn
                .config()
                .request_timeout
                .as_millis()
                .min(i32::MAX as u128) as i32,
            request_max_size: self.config.request_max_size,
            results: self.results_tx.clone(),
        };
        tokio::spawn(sender.send(to_send));
    }

    fn fail_batch(&mut self, batch: Batch, e: Error) {
        self.record_error(&e);
        self.outstanding.remove(&batch.id);
        self.release(batch.bytes);
        for t in batch.trackers {
            t.complete(Err(e.clone()));
        }
    }

    fn on_outcome(&mut self, o: Outcome) {
        let Some(mut batch) = self.in_flight.remove(&o.key) else {
            return;
        };
        let q = self.queues.entry(o.key).or_default();
        q.in_flight = false;
        let result = match o.result {
            Err(e) if e.fluss_code() == Some(error_codes::DUPLICATE_SEQUENCE_EXCEPTION) => Ok(()),
            r => r,
        };
        match result {
            Ok(()) => {
                if self.writer_id != NO_WRITER_ID {
                    q.next_seq = if q.next_seq == i32::MAX {
                        0
                    } else {
                        q.next_seq + 1
                    };
                }
                self.outstanding.remove(&batch.id);
                self.release(batch.bytes);
                for t in batch.trackers {
                    t.complete(Ok(()));
                }
            }
            Err(e) => {
                let code = e.fluss_code();
                let writer_reset = matches!(
                    code,
                    Some(error_codes::UNKNOWN_WRITER_ID_EXCEPTION)
                        | Some(error_codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION)
                ) && self.writer_id != NO_WRITER_ID;
                let elapsed = batch.first_sent.map_or(Duration::ZERO, |t| t.elapsed());
                // A partition the coordinator already reported can still be unknown to its
                // tablet server for a moment (Fluss creates the replicas asynchronously), so
                // PARTITION_NOT_EXISTS is retried briefly; a partition that was really dropped
                // still fails within seconds.
                let fresh_partition = code == Some(error_codes::PARTITION_NOT_EXISTS)
                    && o.key.0.is_some()
                    && elapsed < NEW_PARTITION_GRACE;
                let retriable = (e.is_retriable()
                    || matches!(e.kind(), ErrorKind::Network | ErrorKind::Timeout)
                    || code == Some(error_codes::UNKNOWN_WRITER_ID_EXCEPTION)
                    || fresh_partition)
                    && batch.attempts < self.config.retries
                    && elapsed < self.config.delivery_timeout
                    && !self.conn.is_closed();
                if writer_reset {
                    self.renew_writer_id = true;
                }
                if is_stale_metadata(&e) {
                    self.conn.invalidate_table(self.table.info.table_id);
                }
                if retriable {
                    tracing::debug!(bucket = o.key.1, attempt = batch.attempts, error = %e, "retrying batch");
                    batch.retry_at =
                        Some(Instant::now() + self.conn.backoff().delay(batch.attempts));
                    batch.attempts += 1;
                    q.batches.push_front(batch);
                } else {
                    let where_ = match o.key.0 {
                        Some(p) => format!(
                            "writing to bucket {} of partition {} of table '{}'",
                            o.key.1,
                            p,
                            self.table.path()
                        ),
                        None => format!(
                            "writing to bucket {} of table '{}'",
                            o.key.1,
                            self.table.path()
                        ),
                    };
                    self.fail_batch(batch, e.context(where_));
                }
            }
        }
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

fn build_batch(
    kind: &WriteKind,
    schema_id: i16,
    batch: &Batch,
    writer_id: i64,
    seq: i32,
) -> Result<Vec<u8>> {
    match (&batch.payload, kind) {
        (BatchPayload::Arrow(parts), WriteKind::Log { compression }) => {
            let one = if parts.len() == 1 {
                parts[0].clone()
            } else {
                let schema = parts
                    .first()
                    .map(|p| p.schema())
                    .ok_or_else(|| Error::internal("empty arrow batch"))?;
                arrow_select::concat::concat_batches(&schema, parts)?
            };
            build_arrow_log_batch(schema_id, &one, *compression, None, writer_id, seq)
        }
        (BatchPayload::Kv(entries), WriteKind::Kv { .. }) => {
            let mut b = KvBatchBuilder::new(schema_id);
            for e in entries {
                b.append(&e.key, e.value.as_deref())?;
            }
            Ok(b.build(writer_id, seq))
        }
        _ => Err(Error::internal(
            "batch payload does not match the writer kind",
        )),
    }
}

/// Sends one round of batches: resolves leaders, groups by leader and request size, and reports
/// one outcome per batch.
struct Sender {
    conn: Connection,
    table_id: i64,
    kind: WriteKind,
    acks: i32,
    timeout_ms: i32,
    request_max_size: usize,
    results: mpsc::UnboundedSender<Outcome>,
}

impl Sender {
    async fn send(self, items: Vec<(QueueKey, Vec<u8>, usize)>) {
        let mut groups: HashMap<String, Vec<(QueueKey, Vec<u8>, usize)>> = HashMap::new();
        for (key, bytes, n) in items {
            match self.conn.leader_node(self.table_id, key.0, key.1).await {
                Ok(node) => groups
                    .entry(node.address)
                    .or_default()
                    .push((key, bytes, n)),
                Err(e) => {
                    let _ = self.results.send(Outcome {
                        key,
                        result: Err(e),
                    });
                }
            }
        }
        let this = Arc::new(self);
        for (address, items) in groups {
            // Split into requests of at most request_max_size bytes (at least one batch each).
            let mut chunk: Vec<(QueueKey, Vec<u8>)> = Vec::new();
            let mut chunk_bytes = 0usize;
            for (key, bytes, n) in items {
                if !chunk.is_empty() && chunk_bytes + n > this.request_max_size {
                    let c = std::mem::take(&mut chunk);
                    tokio::spawn(this.clone().send_one(address.clone(), c));
                    chunk_bytes = 0;
                }
                chunk_bytes += n;
                chunk.push((key, bytes));
            }
            if !chunk.is_empty() {
                tokio::spawn(this.clone().send_one(address.clone(), chunk));
            }
        }
    }

    async fn send_one(self: Arc<Self>, address: String, items: Vec<(QueueKey, Vec<u8>)>) {
        let keys: Vec<QueueKey> = items.iter().map(|(k, _)| *k).collect();
        let result = self.request(&address, items).await;
        match result {
            Err(e) => {
                for key in keys {
                    let _ = self.results.send(Outcome {
                        key,
                        result: Err(e.clone()),
                    });
                }
            }
            Ok(per_bucket) => {
                let mut answered: HashMap<QueueKey, Result<()>> = per_bucket.into_iter().collect();
                for key in keys {
                    let result = answered.remove(&key).unwrap_or_else(|| {
                        Err(Error::from_fluss(
                            error_codes::UNKNOWN_SERVER_ERROR,
                            format!("the server did not answer for bucket {}", key.1),
                        ))
                    });
                    let _ = self.results.send(Outcome { key, result });
                }
            }
        }
    }

    async fn request(
        &self,
        address: &str,
        items: Vec<(QueueKey, Vec<u8>)>,
    ) -> Result<Vec<(QueueKey, Result<()>)>> {
        let server = self.conn.server(address).await?;
        let per_bucket =
            |partition_id: Option<i64>, bucket_id: i32, code: Option<i32>, msg: Option<String>| {
                let r = match code.filter(|c| *c != error_codes::NONE) {
                    None => Ok(()),
                    Some(c) => Err(Error::from_fluss(c, msg.unwrap_or_default())),
                };
                ((partition_id, bucket_id), r)
            };
        match &self.kind {
            WriteKind::Log { .. } => {
                let req = ProduceLogRequest {
                    acks: self.acks,
                    table_id: self.table_id,
                    timeout_ms: self.timeout_ms,
                    buckets_req: items
                        .into_iter()
                        .map(
                            |((partition_id, bucket_id), records)| PbProduceLogReqForBucket {
                                partition_id,
                                bucket_id,
                                records: records.into(),
                            },
                        )
                        .collect(),
                };
                let resp = server.request(&req).await?;
                Ok(resp
                    .buckets_resp
                    .into_iter()
                    .map(|r| per_bucket(r.partition_id, r.bucket_id, r.error_code, r.error_message))
                    .collect())
            }
            WriteKind::Kv { target_columns } => {
                let req = PutKvRequest {
                    acks: self.acks,
                    table_id: self.table_id,
                    timeout_ms: self.timeout_ms,
                    target_columns: target_columns.clone().unwrap_or_default(),
                    buckets_req: items
                        .into_iter()
                        .map(|((partition_id, bucket_id), records)| PbPutKvReqForBucket {
                            partition_id,
                            bucket_id,
                            records: records.into(),
                        })
                        .collect(),
                    agg_mode: None,
                };
                let resp = server.request(&req).await?;
                Ok(resp
                    .buckets_resp
                    .into_iter()
                    .map(|r| per_bucket(r.partition_id, r.bucket_id, r.error_code, r.error_message))
                    .collect())
            }
        }
    }
}
