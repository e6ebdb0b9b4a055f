//! Native objects behind the `long`s Java holds. Java's `NativeHandle` guarantees that an
//! address is used only while open and freed exactly once (calls hold its read lock, close its
//! write lock); this module boxes the objects and counts the live ones, so tests can see that
//! everything opened was freed.

use std::sync::atomic::{AtomicI64, Ordering};

use jni::sys::jlong;
use riverlet::{Error, ErrorKind};

use crate::jvm::JniResult;

static LIVE: AtomicI64 = AtomicI64::new(0);

/// The number of live native objects (handles and open scan streams).
pub fn live() -> i64 {
    LIVE.load(Ordering::Acquire)
}

/// Counts one live object for as long as it exists (held by objects that are not handles, such
/// as the reader behind an exported Arrow stream).
#[derive(Debug)]
pub struct LiveToken(());

impl LiveToken {
    /// Counts one more live object.
    pub fn new() -> Self {
        LIVE.fetch_add(1, Ordering::AcqRel);
        LiveToken(())
    }
}

impl Default for LiveToken {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for LiveToken {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Moves `value` to the heap and returns its address for Java.
pub fn into_handle<T: Send + Sync + 'static>(value: T) -> jlong {
    LIVE.fetch_add(1, Ordering::AcqRel);
    Box::into_raw(Box::new(value)) as jlong
}

/// The object behind a handle.
///
/// The caller (a native method of `NativeMethods`) is handed `handle` by a Java `NativeHandle`
/// of the same type that holds its read lock, so the object is alive for the whole call.
pub fn borrow<'a, T>(handle: jlong) -> JniResult<&'a T> {
    if handle == 0 {
        return Err(Error::new(ErrorKind::Closed, "the object is closed").into());
    }
    // SAFETY: see above; the address came from `into_handle::<T>` and is not freed yet.
    Ok(unsafe { &*(handle as *const T) })
}

/// Frees the object behind a handle (Java calls this once, under the write lock).
pub fn free<T>(handle: jlong) {
    if handle == 0 {
        return;
    }
    LIVE.fetch_sub(1, Ordering::AcqRel);
    // SAFETY: the address came from `into_handle::<T>` and Java frees it exactly once.
    drop(unsafe { Box::from_raw(handle as *mut T) });
}
