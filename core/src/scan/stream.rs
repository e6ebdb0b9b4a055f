//! [`BatchStream`]: the async stream of record batches every read returns.

use std::pin::Pin;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use tokio::sync::mpsc;

use crate::{Result, Warning};

/// How many finished batches a reader may run ahead of its consumer. A log read also has one
/// batch per core being decoded ahead of this queue, so two are enough to keep the consumer
/// fed; every queued batch is memory a streaming consumer did not ask to hold.
const CHANNEL_DEPTH: usize = 2;

/// An async stream of record batches of one schema, produced by a background task.
///
/// Implements [`futures_core::Stream`]; [`BatchStream::next`] is the same without a combinator
/// crate. Dropping the stream stops the reading task.
pub struct BatchStream {
    schema: SchemaRef,
    rx: mpsc::Receiver<Result<RecordBatch>>,
    task: Option<tokio::task::JoinHandle<()>>,
    done: bool,
    /// At most this many rows per batch handed out (None: as produced).
    max_rows: Option<usize>,
    /// The rows of a produced batch not handed out yet (when `max_rows` split it).
    rest: Option<RecordBatch>,
    warnings: Vec<Warning>,
    /// The rows the stream hands out in all, when known before reading (see
    /// [`BatchStream::expected_rows`]).
    expected_rows: Option<u64>,
}

impl std::fmt::Debug for BatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStream")
            .field("schema", &self.schema)
            .field("done", &self.done)
            .finish()
    }
}

impl BatchStream {
    /// A stream whose batches come from `producer`, run as a task on the current runtime.
    pub(crate) fn spawn<F, Fut>(schema: SchemaRef, limit: Option<usize>, producer: F) -> BatchStream
    where
        F: FnOnce(Emitter) -> Fut,
        Fut: std::future::Future<Output = Result<()>> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let emitter = Emitter {
            tx: tx.clone(),
            remaining: limit,
        };
        let fut = producer(emitter);
        let task = tokio::spawn(async move {
            if let Err(e) = fut.await {
                let _ = tx.send(Err(e)).await;
            }
        });
        BatchStream {
            schema,
            rx,
            task: Some(task),
            done: false,
            max_rows: None,
            rest: None,
            warnings: Vec::new(),
            expected_rows: None,
        }
    }

    /// A stream over batches already in memory.
    pub fn from_batches(schema: SchemaRef, batches: Vec<RecordBatch>) -> BatchStream {
        let (tx, rx) = mpsc::channel(batches.len().max(1));
        for b in batches {
            // Cannot fail: the channel has room for every batch.
            let _ = tx.try_send(Ok(b));
        }
        BatchStream {
            schema,
            rx,
            task: None,
            done: false,
            max_rows: None,
            rest: None,
            warnings: Vec::new(),
            expected_rows: None,
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Hands out batches of at most `rows` rows (larger ones are split, without copying);
    /// 0 or None: batches as they are produced.
    pub fn with_max_rows(mut self, rows: Option<usize>) -> BatchStream {
        self.max_rows = rows.filter(|r| *r > 0);
        self
    }

    /// Attaches warnings found while planning the read.
    pub(crate) fn with_warnings(mut self, warnings: Vec<Warning>) -> BatchStream {
        self.warnings = warnings;
        self
    }

    /// What the caller should be told about this read (e.g. a time-range window starting
    /// before the log's retention); empty for most reads.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Sets the rows the stream hands out in all (known when the read was planned).
    pub(crate) fn with_expected_rows(mut self, rows: Option<u64>) -> BatchStream {
        self.expected_rows = rows;
        self
    }

    /// How many rows the stream hands out in all, when the read's plan tells before anything
    /// is read (a progress total): `Some` for a read of log records (a log table, or a
    /// changelog) without a filter or lake rows, to the end offsets fixed when the read was
    /// planned, in a time window that ends after the planning (an open end does): the records
    /// between each bucket's start and end offsets, at most the limit. `None` when only
    /// reading tells: a filter, a window ending in the past, a primary-key table's latest view
    /// or folded window, a union read's lake rows, batches already in memory. A record that
    /// retention deletes while the read runs is not returned, so the stream can end short of it.
    pub fn expected_rows(&self) -> Option<u64> {
        self.expected_rows
    }

    /// At most `max_rows` rows of `batch`; the remainder is kept for the next call.
    fn split(&mut self, batch: RecordBatch) -> RecordBatch {
        match self.max_rows {
            Some(max) if batch.num_rows() > max => {
                self.rest = Some(batch.slice(max, batch.num_rows() - max));
                batch.slice(0, max)
            }
            _ => batch,
        }
    }

    /// The next batch, `None` at the end. After an error the stream ends.
    pub async fn next(&mut self) -> Option<Result<RecordBatch>> {
        std::future::poll_fn(|cx| self.poll_next_batch(cx)).await
    }

    /// Polls for the next batch (the `Stream` method without the trait).
    pub fn poll_next_batch(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<RecordBatch>>> {
        if let Some(rest) = self.rest.take() {
            return Poll::Ready(Some(Ok(self.split(rest))));
        }
        if self.done {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(b))) => Poll::Ready(Some(Ok(self.split(b)))),
            Poll::Ready(Some(Err(e))) => {
                self.done = true;
                self.stop();
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Reads the whole stream into memory.
    pub async fn collect(mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await {
            out.push(b?);
        }
        Ok(out)
    }

    /// Reads the whole stream into one batch (empty when there are no rows).
    pub async fn collect_batch(self) -> Result<RecordBatch> {
        let schema = self.schema();
        let batches = self.collect().await?;
        Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
    }

    /// Counts the rows of the stream.
    pub async fn count_rows(mut self) -> Result<u64> {
        let mut n = 0u64;
        while let Some(b) = self.next().await {
            n += b?.num_rows() as u64;
        }
        Ok(n)
    }

    fn stop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        self.stop();
    }
}

impl futures_core::Stream for BatchStream {
    type Item = Result<RecordBatch>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_next_batch(cx)
    }
}

/// The producer side of a [`BatchStream`]: applies the row limit and skips empty batches.
pub(crate) struct Emitter {
    tx: mpsc::Sender<Result<RecordBatch>>,
    remaining: Option<usize>,
}

impl Emitter {
    /// Sends a batch; returns false when the reader should stop (limit reached or the consumer
    /// went away).
    pub(crate) async fn emit(&mut self, batch: RecordBatch) -> bool {
        if self.is_done() {
            return false;
        }
        if batch.num_rows() == 0 {
            return true;
        }
        let batch = match self.remaining {
            Some(r) if batch.num_rows() > r => batch.slice(0, r),
            _ => batch,
        };
        if let Some(r) = &mut self.remaining {
            *r -= batch.num_rows();
        }
        self.tx.send(Ok(batch)).await.is_ok() && !self.is_done()
    }

    /// Whether nothing more is wanted.
    pub(crate) fn is_done(&self) -> bool {
        self.remaining == Some(0) || self.tx.is_closed()
    }

    /// Rows still wanted (None: no limit).
    pub(crate) fn remaining(&self) -> Option<usize> {
        self.remaining
    }
}
