//! [`IpcStream`]: a read handed out as encapsulated Arrow IPC messages rather than record
//! batches, for gateways that send Arrow on (Arrow Flight). Fluss's log batches already carry
//! one Arrow IPC message each: a batch whose rows are all wanted, of the table's current schema,
//! goes out as it was stored (its CRC checked and its message structure verified), without
//! decoding or re-encoding; every other batch, and every read the server cannot answer with
//! whole batches (filters, limits, primary-key views, the changelog, union reads), is read as
//! [`super::ScanBuilder::execute`] reads it and encoded once (uncompressed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use tokio::sync::mpsc;

use super::stream::BatchStream;
use crate::record::arrow_payload::{
    encode_arrow_batch, encode_schema_message, split_message, ArrowCompression,
};
use crate::{Result, Warning};

/// Messages a reader may run ahead of its consumer (as [`BatchStream`]'s queue).
const CHANNEL_DEPTH: usize = 2;

/// Which stored bodies an [`IpcStream`] may hand out as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IpcBodies {
    /// Every whole batch as stored, compressed or not (Fluss's default is ZSTD): the least work
    /// for the reader, and the client decompresses.
    #[default]
    AsStored,
    /// Only uncompressed stored bodies as they are; a compressed batch is decompressed and
    /// encoded once, uncompressed, for clients whose decompression is slow (e.g. the Go
    /// Arrow of the ADBC Flight SQL driver).
    Uncompressed,
}

/// One Arrow IPC message cut as Arrow Flight carries it: the flatbuffer `Message` (a
/// `FlightData`'s `data_header`) and the body (its `data_body`).
#[derive(Debug, Clone)]
pub struct IpcMessage {
    /// The flatbuffer `Message` (without the continuation marker and length prefix).
    pub header: Bytes,
    /// The message body (empty for a schema message).
    pub body: Bytes,
}

impl IpcMessage {
    /// Cuts one encapsulated RecordBatch message (continuation marker, length, metadata,
    /// body), verifying its structure.
    pub(crate) fn from_encapsulated(bytes: Bytes) -> Result<IpcMessage> {
        let parts = split_message(&bytes)?;
        Ok(IpcMessage {
            header: bytes.slice(parts.header),
            body: bytes.slice(parts.body),
        })
    }

    /// `batch` encoded as one uncompressed RecordBatch message.
    pub(crate) fn encode(batch: &RecordBatch) -> Result<IpcMessage> {
        IpcMessage::from_encapsulated(encode_arrow_batch(batch, ArrowCompression::None)?.into())
    }
}

/// How the messages of a read were produced (for tests and metrics).
#[derive(Debug, Default)]
pub(crate) struct IpcCounts {
    forwarded: AtomicU64,
    encoded: AtomicU64,
}

impl IpcCounts {
    pub(crate) fn forwarded(&self) {
        self.forwarded.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn encoded(&self) {
        self.encoded.fetch_add(1, Ordering::Relaxed);
    }
}

/// An async stream of the Arrow IPC record-batch messages of one read, all of
/// [`IpcStream::schema`]. Dropping it stops the reading task.
pub struct IpcStream {
    schema: SchemaRef,
    rx: mpsc::Receiver<Result<IpcMessage>>,
    task: Option<tokio::task::JoinHandle<()>>,
    done: bool,
    warnings: Vec<Warning>,
    counts: Arc<IpcCounts>,
}

impl std::fmt::Debug for IpcStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpcStream")
            .field("schema", &self.schema)
            .field("done", &self.done)
            .finish()
    }
}

/// The producer side of an [`IpcStream`].
pub(crate) struct IpcSender {
    tx: mpsc::Sender<Result<IpcMessage>>,
}

impl IpcSender {
    /// Sends a message; false when the consumer went away.
    pub(crate) async fn send(&self, message: IpcMessage) -> bool {
        self.tx.send(Ok(message)).await.is_ok()
    }
}

impl IpcStream {
    /// A stream whose messages come from `producer`, run as a task on the current runtime.
    pub(crate) fn spawn<F, Fut>(schema: SchemaRef, counts: Arc<IpcCounts>, producer: F) -> Self
    where
        F: FnOnce(IpcSender) -> Fut,
        Fut: std::future::Future<Output = Result<()>> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let fut = producer(IpcSender { tx: tx.clone() });
        let task = tokio::spawn(async move {
            if let Err(e) = fut.await {
                let _ = tx.send(Err(e)).await;
            }
        });
        IpcStream {
            schema,
            rx,
            task: Some(task),
            done: false,
            warnings: Vec::new(),
            counts,
        }
    }

    /// The messages of a read of record batches, each encoded once.
    pub(crate) fn encoding(mut batches: BatchStream) -> IpcStream {
        let warnings = batches.warnings().to_vec();
        let counts = Arc::new(IpcCounts::default());
        let c = counts.clone();
        IpcStream::spawn(batches.schema(), counts, move |out| async move {
            while let Some(b) = batches.next().await {
                let b = b?;
                if b.num_rows() == 0 {
                    continue;
                }
                c.encoded();
                if !out.send(IpcMessage::encode(&b)?).await {
                    break;
                }
            }
            Ok(())
        })
        .with_warnings(warnings)
    }

    pub(crate) fn with_warnings(mut self, warnings: Vec<Warning>) -> IpcStream {
        self.warnings = warnings;
        self
    }

    /// The schema of every message's rows.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The schema message to send before the record batches (body empty).
    pub fn schema_message(&self) -> IpcMessage {
        IpcMessage {
            header: encode_schema_message(&self.schema).into(),
            body: Bytes::new(),
        }
    }

    /// What the caller should be told about this read (as [`BatchStream::warnings`]).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Messages handed out so far as Fluss stored them, undecoded.
    pub fn forwarded(&self) -> u64 {
        self.counts.forwarded.load(Ordering::Relaxed)
    }

    /// Messages handed out so far that were decoded and encoded again.
    pub fn encoded(&self) -> u64 {
        self.counts.encoded.load(Ordering::Relaxed)
    }

    /// The next message, `None` at the end. After an error the stream ends.
    pub async fn next(&mut self) -> Option<Result<IpcMessage>> {
        if self.done {
            return None;
        }
        match self.rx.recv().await {
            Some(Ok(m)) => Some(Ok(m)),
            Some(Err(e)) => {
                self.done = true;
                self.stop();
                Some(Err(e))
            }
            None => {
                self.done = true;
                None
            }
        }
    }

    fn stop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

impl Drop for IpcStream {
    fn drop(&mut self) {
        self.stop();
    }
}
