//! The one global tokio runtime behind the blocking facade.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime};

use crate::{Error, ErrorKind, Result};

struct State {
    runtime: Option<Arc<Runtime>>,
    threads: Option<usize>,
    shut_down: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    runtime: None,
    threads: None,
    shut_down: false,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sets the number of worker threads of the global runtime. Must be called before the first
/// blocking call; afterwards it fails with [`ErrorKind::InvalidArgument`].
pub fn configure_runtime(threads: usize) -> Result<()> {
    if threads == 0 {
        crate::bail_invalid!(
            "configure_runtime({threads}): the runtime needs at least one worker thread"
        );
    }
    let mut st = state();
    if st.runtime.is_some() || st.shut_down {
        crate::bail_invalid!(
            "configure_runtime({threads}) must be called before the first blocking call; the runtime is already running"
        );
    }
    st.threads = Some(threads);
    Ok(())
}

/// The global runtime's handle, creating the runtime on first use (2 worker threads unless
/// [`configure_runtime`] said otherwise).
pub fn runtime_handle() -> Result<Handle> {
    let mut st = state();
    if st.shut_down {
        return Err(Error::new(
            ErrorKind::Closed,
            "the Riverlet runtime was shut down",
        ));
    }
    if let Some(rt) = &st.runtime {
        return Ok(rt.handle().clone());
    }
    let threads = st.threads.unwrap_or(2);
    let rt = Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("riverlet-worker")
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot start the Riverlet runtime: {e}"),
            )
        })?;
    let handle = rt.handle().clone();
    st.runtime = Some(Arc::new(rt));
    Ok(handle)
}

fn not_inside_runtime() -> Result<()> {
    if Handle::try_current().is_ok() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "a riverlet::blocking call was made from inside an async runtime; use the async API (riverlet::client) there",
        ));
    }
    Ok(())
}

/// Runs `fut` to completion on the global runtime, blocking the calling thread. Safe from any
/// thread that is not itself running async code; from inside a runtime it returns an error
/// instead of nesting.
pub fn block_on<F: Future>(fut: F) -> Result<F::Output> {
    not_inside_runtime()?;
    let handle = runtime_handle()?;
    Ok(handle.block_on(fut))
}

/// Like [`block_on`], but calls `check` every `interval` while waiting and gives up with its
/// error (bindings pass a signal check, e.g. Python's Ctrl-C).
pub fn block_on_interruptible<F, C>(fut: F, interval: Duration, mut check: C) -> Result<F::Output>
where
    F: Future,
    C: FnMut() -> Result<()>,
{
    not_inside_runtime()?;
    let handle = runtime_handle()?;
    handle.block_on(async move {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return Ok(out),
                _ = tokio::time::sleep(interval) => check()?,
            }
        }
    })
}

/// Stops the global runtime, waiting up to `timeout` for its tasks; later blocking calls fail
/// with [`ErrorKind::Closed`]. Call it at process exit (bindings do) for a clean shutdown.
pub fn shutdown_runtime(timeout: Duration) {
    let rt = {
        let mut st = state();
        st.shut_down = true;
        st.runtime.take()
    };
    if let Some(rt) = rt {
        match Arc::try_unwrap(rt) {
            Ok(rt) => rt.shutdown_timeout(timeout),
            Err(shared) => drop(shared),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_on_runs_and_refuses_nesting() {
        assert_eq!(block_on(async { 1 + 1 }).unwrap(), 2);
        // From inside the runtime, a nested call is refused with a clear error.
        let nested = block_on(async { block_on(async { 3 }) }).unwrap();
        let e = nested.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.message().contains("inside an async runtime"));
        // Safe from other threads.
        let t = std::thread::spawn(|| block_on(async { 7 }).unwrap());
        assert_eq!(t.join().unwrap(), 7);
        // Configuring after start is refused.
        assert!(configure_runtime(4).is_err());
    }

    #[test]
    fn interruptible_gives_up() {
        let mut calls = 0;
        let r = block_on_interruptible(
            std::future::pending::<()>(),
            Duration::from_millis(5),
            || {
                calls += 1;
                if calls >= 3 {
                    Err(Error::new(ErrorKind::Closed, "interrupted"))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r.unwrap_err().message(), "interrupted");
    }
}
