//! Opaque handles that cannot dangle.
//!
//! A handle given to C is not the address of a Rust object: it is a number taken from one
//! process-wide counter (never reused) with the kind of handle in its low bits, dressed up as an
//! opaque pointer. Each kind has a registry mapping live numbers to the object. Every call looks
//! the number up first, so a handle that was freed (or a handle of another kind, or garbage)
//! yields `RIVERLET_CLOSED` / `RIVERLET_INVALID_ARGUMENT` with a message instead of undefined
//! behaviour, and freeing twice is reported, never a double free. C never dereferences a handle.
//!
//! Objects live in `Arc`s: a call clones the `Arc` out of the registry and releases the lock,
//! so a handle freed by one thread while another thread is inside a call on it stays alive until
//! that call returns.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use riverlet::{Error, ErrorKind};

use crate::error::{CallError, CallResult};

/// Bits of a handle that hold its kind.
const KIND_BITS: u32 = 3;

/// The kinds of handles, stored in the low bits of every handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleKind {
    /// `RiverletConnection`
    Connection = 1,
    /// `RiverletTable`
    Table = 2,
    /// `RiverletWriter`
    Writer = 3,
    /// `RiverletLocalServer`
    LocalServer = 4,
    /// `RiverletSubscription`
    Subscription = 5,
}

impl HandleKind {
    fn name(self) -> &'static str {
        match self {
            HandleKind::Connection => "connection",
            HandleKind::Table => "table",
            HandleKind::Writer => "writer",
            HandleKind::LocalServer => "local server",
            HandleKind::Subscription => "subscription",
        }
    }

    fn from_bits(bits: usize) -> Option<HandleKind> {
        match bits {
            1 => Some(HandleKind::Connection),
            2 => Some(HandleKind::Table),
            3 => Some(HandleKind::Writer),
            4 => Some(HandleKind::LocalServer),
            5 => Some(HandleKind::Subscription),
            _ => None,
        }
    }
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// Handles of every kind that were created and not freed yet.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The number of live handles of every kind (created and not freed yet): 0 when a program
/// freed everything it created. Meant for leak checks in tests: LeakSanitizer cannot see a
/// forgotten handle, because Riverlet still references it.
#[no_mangle]
pub extern "C" fn riverlet_live_handles() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The live objects of one kind of handle.
pub struct Registry<T> {
    kind: HandleKind,
    live: Mutex<Option<HashMap<usize, Arc<T>>>>,
}

impl<T> Registry<T> {
    /// An empty registry (usable in a `static`).
    pub const fn new(kind: HandleKind) -> Self {
        Registry {
            kind,
            live: Mutex::new(None),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<HashMap<usize, Arc<T>>>> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts and
        // removes), so a poisoned lock is used as it is.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `value` and returns its new handle.
    pub fn insert(&self, value: T) -> usize {
        let counter = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let handle = (counter << KIND_BITS) | self.kind as usize;
        self.lock()
            .get_or_insert_with(HashMap::new)
            .insert(handle, Arc::new(value));
        LIVE.fetch_add(1, Ordering::Relaxed);
        handle
    }

    fn explain_missing(&self, handle: usize, what: &'static str) -> CallError {
        let bits = handle & ((1 << KIND_BITS) - 1);
        match HandleKind::from_bits(bits) {
            Some(k) if k == self.kind => CallError::Riverlet(Error::new(
                ErrorKind::Closed,
                format!(
                    "{what}: this {} handle was already freed (use after free)",
                    self.kind.name()
                ),
            )),
            Some(k) => CallError::Riverlet(Error::invalid(format!(
                "{what}: expected a {} handle but got a {} handle",
                self.kind.name(),
                k.name()
            ))),
            None => CallError::Riverlet(Error::invalid(format!(
                "{what}: not a Riverlet {} handle",
                self.kind.name()
            ))),
        }
    }

    /// The live object behind `handle`; errors for NULL, freed and foreign handles. `what` is
    /// the argument name used in messages.
    pub fn get<H>(&self, handle: *const H, what: &'static str) -> CallResult<Arc<T>> {
        let key = handle as usize;
        if key == 0 {
            return Err(CallError::Null(what));
        }
        let found = self.lock().as_ref().and_then(|m| m.get(&key).cloned());
        found.ok_or_else(|| self.explain_missing(key, what))
    }

    /// Unregisters `handle` and returns its object (dropped by the caller, outside the lock).
    /// `Ok(None)` for NULL; an error for a handle that is not live.
    pub fn remove<H>(&self, handle: *const H, what: &'static str) -> CallResult<Option<Arc<T>>> {
        let key = handle as usize;
        if key == 0 {
            return Ok(None);
        }
        let removed = self.lock().as_mut().and_then(|m| m.remove(&key));
        match removed {
            Some(v) => {
                LIVE.fetch_sub(1, Ordering::Relaxed);
                Ok(Some(v))
            }
            None => Err(self.explain_missing(key, what)),
        }
    }

    /// How many handles of this kind are live.
    pub fn live_count(&self) -> usize {
        self.lock().as_ref().map_or(0, |m| m.len())
    }
}

/// Writes `handle` into the caller's out-pointer.
///
/// # Safety
/// `out` must be NULL-checked by the caller and valid for one pointer-sized write.
pub unsafe fn write_handle<H>(out: *mut *mut H, handle: usize) {
    // SAFETY: the caller checked `out` and guarantees it is writable.
    unsafe { out.write(handle as *mut H) };
}

#[cfg(test)]
mod tests {
    use super::*;

    static REG: Registry<String> = Registry::new(HandleKind::Table);
    static OTHER: Registry<String> = Registry::new(HandleKind::Writer);

    #[test]
    fn lookups_report_null_freed_and_foreign_handles() {
        let h = REG.insert("t".to_string());
        let p = h as *const u8;
        assert_eq!(*REG.get(p, "table").unwrap(), "t");
        assert!(matches!(
            REG.get(std::ptr::null::<u8>(), "table"),
            Err(CallError::Null("table"))
        ));
        let w = OTHER.insert("w".to_string()) as *const u8;
        match REG.get(w, "table") {
            Err(CallError::Riverlet(e)) => {
                assert_eq!(e.kind(), ErrorKind::InvalidArgument);
                assert!(e.message().contains("writer handle"), "{}", e.message());
            }
            other => panic!("{other:?}"),
        }
        assert!(REG.remove(p, "table").unwrap().is_some());
        match REG.get(p, "table") {
            Err(CallError::Riverlet(e)) => assert_eq!(e.kind(), ErrorKind::Closed),
            other => panic!("{other:?}"),
        }
        // double free is reported, not undefined
        assert!(REG.remove(p, "table").is_err());
        assert!(REG
            .remove(std::ptr::null::<u8>(), "table")
            .unwrap()
            .is_none());
        assert!(OTHER.remove(w, "writer").unwrap().is_some());
    }

    #[test]
    fn handles_are_never_reused() {
        let a = REG.insert("a".into());
        REG.remove(a as *const u8, "x").unwrap();
        let b = REG.insert("b".into());
        assert_ne!(a, b);
        REG.remove(b as *const u8, "x").unwrap();
    }
}
