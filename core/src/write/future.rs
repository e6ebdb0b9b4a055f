//! [`WriteFuture`]: resolves when the server acknowledged every batch holding a write's rows.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll};

use tokio::sync::oneshot;

use crate::{Error, ErrorKind, Result};

/// Tracks one write split over several batches: it succeeds when all of them are acked and
/// fails with the first error.
#[derive(Debug)]
pub(crate) struct Tracker {
    remaining: AtomicUsize,
    tx: Mutex<Option<oneshot::Sender<Result<()>>>>,
}

impl Tracker {
    /// A tracker waiting for `parts` acks, and the future its caller awaits.
    pub(crate) fn new(parts: usize) -> (std::sync::Arc<Tracker>, WriteFuture) {
        let (tx, rx) = oneshot::channel();
        let t = std::sync::Arc::new(Tracker {
            remaining: AtomicUsize::new(parts),
            tx: Mutex::new(Some(tx)),
        });
        if parts == 0 {
            t.finish(Ok(()));
        }
        (t, WriteFuture::pending(rx))
    }

    fn finish(&self, r: Result<()>) {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(tx) = tx {
            let _ = tx.send(r);
        }
    }

    /// One part finished with `r`.
    pub(crate) fn complete(&self, r: Result<()>) {
        match r {
            Err(e) => self.finish(Err(e)),
            Ok(()) => {
                if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.finish(Ok(()));
                }
            }
        }
    }
}

enum State {
    Ready(Option<Result<()>>),
    Pending(oneshot::Receiver<Result<()>>),
}

/// The outcome of one write: `Ok(())` once the server acknowledged all its rows, or the error
/// (with its Fluss code when the server sent one). The write happens whether or not this future
/// is awaited; dropping it only drops the notification.
pub struct WriteFuture {
    state: State,
}

impl std::fmt::Debug for WriteFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteFuture")
    }
}

impl WriteFuture {
    pub(crate) fn pending(rx: oneshot::Receiver<Result<()>>) -> Self {
        WriteFuture {
            state: State::Pending(rx),
        }
    }

    /// A future that is already resolved (used for writes rejected before they were queued).
    pub fn ready(r: Result<()>) -> Self {
        WriteFuture {
            state: State::Ready(Some(r)),
        }
    }

    /// The result when it is already known without waiting (writes rejected before they were
    /// queued, e.g. for a schema mismatch); `None` while the write is in flight.
    pub fn try_result(&mut self) -> Option<Result<()>> {
        match &mut self.state {
            State::Ready(r) => r.take(),
            State::Pending(rx) => match rx.try_recv() {
                Ok(r) => {
                    self.state = State::Ready(None);
                    Some(r)
                }
                Err(oneshot::error::TryRecvError::Empty) => None,
                Err(oneshot::error::TryRecvError::Closed) => {
                    self.state = State::Ready(None);
                    Some(Err(Error::new(
                        ErrorKind::Closed,
                        "the writer stopped before the write was acknowledged",
                    )))
                }
            },
        }
    }

    /// A future failed with `e`.
    pub(crate) fn failed(e: Error) -> Self {
        Self::ready(Err(e))
    }
}

impl Future for WriteFuture {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match &mut self.state {
            State::Ready(r) => Poll::Ready(
                r.take()
                    .unwrap_or_else(|| Err(Error::internal("WriteFuture polled after completion"))),
            ),
            State::Pending(rx) => match Pin::new(rx).poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(r)) => Poll::Ready(r),
                Poll::Ready(Err(_)) => Poll::Ready(Err(Error::new(
                    ErrorKind::Closed,
                    "the writer stopped before the write was acknowledged",
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn resolves_after_all_parts() {
        let (t, f) = Tracker::new(2);
        t.complete(Ok(()));
        t.complete(Ok(()));
        f.await.unwrap();

        let (t, f) = Tracker::new(0);
        drop(t);
        f.await.unwrap();

        let (t, f) = Tracker::new(3);
        t.complete(Ok(()));
        t.complete(Err(Error::invalid("boom")));
        t.complete(Ok(()));
        assert_eq!(f.await.unwrap_err().message(), "boom");

        let (t, f) = Tracker::new(1);
        drop(t);
        assert_eq!(f.await.unwrap_err().kind(), ErrorKind::Closed);
    }
}
