//! Status codes, the thread-local last error, and the guard every exported function runs in.
//!
//! Every exported function is a thin wrapper: it calls [`guard`] with a closure (the `_impl`
//! body) that returns a [`riverlet::Result`]. The guard catches panics, turns the outcome into a
//! [`RiverletStatus`] and records the message in this thread's last-error slot.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use riverlet::{Error, ErrorKind};

/// The outcome of a call. `RIVERLET_STATUS_OK` is 0; every other value is a failure, and
/// `riverlet_last_error_message()` then describes it.
///
/// The values from 1 to 12 are one per kind of Riverlet error; the numbers are stable.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RiverletStatus {
    /// The call succeeded.
    Ok = 0,
    /// A database, table, partition, bucket or key that was named does not exist.
    NotFound = 1,
    /// The thing being created exists already.
    AlreadyExists = 2,
    /// An argument cannot be used (bad schema, bad timestamp, bad filter, bad option...).
    InvalidArgument = 3,
    /// The operation is valid but not supported (by this server, this table kind...).
    Unsupported = 4,
    /// Authentication failed or is required.
    Authentication = 5,
    /// A network problem that may go away when retried.
    Network = 6,
    /// A deadline passed before the server answered.
    Timeout = 7,
    /// The server answered with a Fluss error code that has no better status
    /// (see `riverlet_last_error_fluss_code()`).
    Server = 8,
    /// Bytes that do not decode (a torn frame, a bad CRC, a truncated record).
    Corrupt = 9,
    /// A handle was used after it was closed, stopped or freed.
    Closed = 10,
    /// A local I/O failure (data directory, files).
    Io = 11,
    /// A bug in Riverlet: an invariant that should hold did not.
    Internal = 12,
    /// A required pointer argument was NULL.
    NullArgument = 100,
    /// Riverlet panicked inside the call; the panic was stopped at the C boundary.
    Panic = 101,
}

impl RiverletStatus {
    /// The status of a Riverlet error kind (one place for the whole mapping).
    pub fn from_kind(kind: ErrorKind) -> RiverletStatus {
        match kind {
            ErrorKind::NotFound => RiverletStatus::NotFound,
            ErrorKind::AlreadyExists => RiverletStatus::AlreadyExists,
            ErrorKind::InvalidArgument => RiverletStatus::InvalidArgument,
            ErrorKind::Unsupported => RiverletStatus::Unsupported,
            ErrorKind::Authentication => RiverletStatus::Authentication,
            ErrorKind::Network => RiverletStatus::Network,
            ErrorKind::Timeout => RiverletStatus::Timeout,
            ErrorKind::Server => RiverletStatus::Server,
            ErrorKind::Corrupt => RiverletStatus::Corrupt,
            ErrorKind::Closed => RiverletStatus::Closed,
            ErrorKind::Io => RiverletStatus::Io,
            ErrorKind::Internal => RiverletStatus::Internal,
        }
    }

    /// The stable upper-case name of the status, NUL-terminated.
    pub fn name(self) -> &'static [u8] {
        match self {
            RiverletStatus::Ok => b"OK\0",
            RiverletStatus::NotFound => b"NOT_FOUND\0",
            RiverletStatus::AlreadyExists => b"ALREADY_EXISTS\0",
            RiverletStatus::InvalidArgument => b"INVALID_ARGUMENT\0",
            RiverletStatus::Unsupported => b"UNSUPPORTED\0",
            RiverletStatus::Authentication => b"AUTHENTICATION\0",
            RiverletStatus::Network => b"NETWORK\0",
            RiverletStatus::Timeout => b"TIMEOUT\0",
            RiverletStatus::Server => b"SERVER\0",
            RiverletStatus::Corrupt => b"CORRUPT\0",
            RiverletStatus::Closed => b"CLOSED\0",
            RiverletStatus::Io => b"IO\0",
            RiverletStatus::Internal => b"INTERNAL\0",
            RiverletStatus::NullArgument => b"NULL_ARGUMENT\0",
            RiverletStatus::Panic => b"PANIC\0",
        }
    }
}

/// Why a call failed, before it becomes a status: a Riverlet error, a NULL argument or a panic.
#[derive(Debug)]
pub enum CallError {
    /// An error from the Riverlet core or from argument conversion.
    Riverlet(Error),
    /// The named pointer argument was NULL.
    Null(&'static str),
    /// A panic with its message.
    Panic(String),
}

impl From<Error> for CallError {
    fn from(e: Error) -> Self {
        CallError::Riverlet(e)
    }
}

impl From<arrow_schema::ArrowError> for CallError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        CallError::Riverlet(Error::from(e))
    }
}

/// The result type of every `_impl` function.
pub type CallResult<T> = std::result::Result<T, CallError>;

struct LastError {
    message: CString,
    fluss_code: i32,
}

/// Warning kind: a time-range window starts before `now - table.log.ttl`, so rows older than
/// the TTL may already be deleted and the read can return fewer rows than were written.
pub const RIVERLET_WARNING_BEFORE_RETENTION: i32 = 1;

struct LastWarning {
    message: CString,
    kind: i32,
}

thread_local! {
    static LAST_ERROR: RefCell<Option<LastError>> = const { RefCell::new(None) };
    static LAST_WARNING: RefCell<Option<LastWarning>> = const { RefCell::new(None) };
}

/// A function Riverlet calls with each warning: its kind (`RIVERLET_WARNING_*`), its message
/// (valid during the call only) and the `user_data` given to `riverlet_set_warning_callback`.
pub type RiverletWarningCallback =
    Option<unsafe extern "C" fn(kind: i32, message: *const c_char, user_data: *mut c_void)>;

struct WarningSink {
    callback: RiverletWarningCallback,
    user_data: usize,
}

static WARNING_SINK: Mutex<WarningSink> = Mutex::new(WarningSink {
    callback: None,
    user_data: 0,
});

/// Records the warnings of the current call (see `riverlet_last_warning_message`) and hands
/// each to the warning callback, if one is set.
pub fn set_warnings(warnings: &[riverlet::Warning]) {
    let Some(first) = warnings.first() else {
        return;
    };
    let text: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
    let last = LastWarning {
        message: c_string_lossy(&text.join("\n")),
        kind: first.kind.code(),
    };
    LAST_WARNING.with(|slot| *slot.borrow_mut() = Some(last));
    let (callback, user_data) = match WARNING_SINK.lock() {
        Ok(s) => (s.callback, s.user_data),
        Err(p) => (p.get_ref().callback, p.get_ref().user_data),
    };
    if let Some(cb) = callback {
        for w in warnings {
            let message = c_string_lossy(&w.message);
            // SAFETY: the caller registered a function with this signature; the message
            // outlives the call.
            unsafe { cb(w.kind.code(), message.as_ptr(), user_data as *mut c_void) };
        }
    }
}

/// A C string of `text`, with any NUL byte replaced so it never fails.
pub fn c_string_lossy(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

fn set_last_error(message: &str, fluss_code: i32) {
    let err = LastError {
        message: c_string_lossy(message),
        fluss_code,
    };
    LAST_ERROR.with(|slot| *slot.borrow_mut() = Some(err));
}

fn clear_last_error() {
    LAST_ERROR.with(|slot| *slot.borrow_mut() = None);
}

/// Records `err` as this thread's last error and returns its status.
pub fn record(err: CallError) -> RiverletStatus {
    match err {
        CallError::Riverlet(e) => {
            let status = RiverletStatus::from_kind(e.kind());
            set_last_error(&e.to_string(), e.fluss_code().unwrap_or(0));
            status
        }
        CallError::Null(what) => {
            set_last_error(&format!("argument '{what}' must not be NULL"), 0);
            RiverletStatus::NullArgument
        }
        CallError::Panic(msg) => {
            set_last_error(&format!("Riverlet panicked (this is a bug): {msg}"), 0);
            RiverletStatus::Panic
        }
    }
}

/// The text of a caught panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Runs one call's body: catches panics, maps the outcome to a status, and sets (on failure) or
/// clears (on success) this thread's last error.
pub fn guard<F>(body: F) -> RiverletStatus
where
    F: FnOnce() -> CallResult<()>,
{
    LAST_WARNING.with(|slot| *slot.borrow_mut() = None);
    let outcome = catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|payload| Err(CallError::Panic(panic_message(payload.as_ref()))));
    match outcome {
        Ok(()) => {
            clear_last_error();
            RiverletStatus::Ok
        }
        Err(e) => record(e),
    }
}

/// The message of the last failed call on this thread, or NULL when the last call succeeded.
///
/// The last error is thread-local: each thread sees only its own calls. The returned pointer
/// belongs to Riverlet and stays valid until the next `riverlet_*` call on the same thread
/// (other than the `riverlet_last_error_*` and `riverlet_status_name` getters); copy the text to
/// keep it. Never free it.
#[no_mangle]
pub extern "C" fn riverlet_last_error_message() -> *const c_char {
    LAST_ERROR.with(|slot| match &*slot.borrow() {
        Some(e) => e.message.as_ptr(),
        None => std::ptr::null(),
    })
}

/// The Fluss error code the server sent with the last failed call on this thread, or 0 when
/// there was none (the call succeeded or the error did not come from a server).
#[no_mangle]
pub extern "C" fn riverlet_last_error_fluss_code() -> i32 {
    LAST_ERROR.with(|slot| slot.borrow().as_ref().map_or(0, |e| e.fluss_code))
}

/// The warnings of the last call on this thread (one per line), or NULL when it had none. A
/// call warns when it succeeded but the caller should know something, e.g. a time-range read
/// whose window starts before `now - table.log.ttl` (rows older than the TTL may already be
/// deleted). The pointer stays valid until the next `riverlet_*` call on the same thread (other
/// than these getters); never free it. See also `riverlet_set_warning_callback`.
#[no_mangle]
pub extern "C" fn riverlet_last_warning_message() -> *const c_char {
    LAST_WARNING.with(|slot| match &*slot.borrow() {
        Some(w) => w.message.as_ptr(),
        None => std::ptr::null(),
    })
}

/// The kind of the (first) warning of the last call on this thread (`RIVERLET_WARNING_*`,
/// e.g. 1 = RIVERLET_WARNING_BEFORE_RETENTION), or 0 when it had none.
#[no_mangle]
pub extern "C" fn riverlet_last_warning_kind() -> i32 {
    LAST_WARNING.with(|slot| slot.borrow().as_ref().map_or(0, |w| w.kind))
}

/// Registers `callback` (NULL: none) to be called, on the calling thread of the call that
/// warns, with every warning and `user_data`. Process-wide; replaces the previous callback.
/// The callback must not call back into Riverlet.
#[no_mangle]
pub extern "C" fn riverlet_set_warning_callback(
    callback: RiverletWarningCallback,
    user_data: *mut c_void,
) {
    let sink = WarningSink {
        callback,
        user_data: user_data as usize,
    };
    match WARNING_SINK.lock() {
        Ok(mut s) => *s = sink,
        Err(p) => *p.into_inner() = sink,
    }
}

/// The stable upper-case name of a status ("OK", "NOT_FOUND", ...), a static string; "UNKNOWN"
/// for a value that is not a status.
#[no_mangle]
pub extern "C" fn riverlet_status_name(status: i32) -> *const c_char {
    let all = [
        RiverletStatus::Ok,
        RiverletStatus::NotFound,
        RiverletStatus::AlreadyExists,
        RiverletStatus::InvalidArgument,
        RiverletStatus::Unsupported,
        RiverletStatus::Authentication,
        RiverletStatus::Network,
        RiverletStatus::Timeout,
        RiverletStatus::Server,
        RiverletStatus::Corrupt,
        RiverletStatus::Closed,
        RiverletStatus::Io,
        RiverletStatus::Internal,
        RiverletStatus::NullArgument,
        RiverletStatus::Panic,
    ];
    let name: &'static [u8] = all
        .iter()
        .find(|s| **s as i32 == status)
        .map_or(b"UNKNOWN\0", |s| s.name());
    name.as_ptr().cast()
}

/// Fluss's name of the error code `code` (e.g. 12 is "NOT_LEADER_OR_FOLLOWER"), as Fluss's own
/// clients name it; "UNKNOWN_CODE" for a code Fluss does not define. A static string (never
/// free it). Pass it `riverlet_last_error_fluss_code()` to name a server's error.
#[no_mangle]
pub extern "C" fn riverlet_fluss_code_name(code: i32) -> *const c_char {
    static NAMES: Mutex<Vec<(i32, &'static std::ffi::CStr)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, n)) = names.iter().find(|(c, _)| *c == code) {
        return n.as_ptr();
    }
    // One leaked copy per code ever asked for: Fluss defines fewer than a hundred, and any
    // unknown code shares the "UNKNOWN_CODE" text of its own entry.
    let name = riverlet::error::codes::name_of(code);
    let c: &'static std::ffi::CStr = Box::leak(
        CString::new(name)
            .unwrap_or_else(|_| CString::from(c"UNKNOWN_CODE"))
            .into_boxed_c_str(),
    );
    names.push((code, c));
    c.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> Option<String> {
        let p = riverlet_last_error_message();
        if p.is_null() {
            None
        } else {
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        }
    }

    #[test]
    fn fluss_code_names_are_fluss_names() {
        let name = |c| {
            unsafe { CStr::from_ptr(riverlet_fluss_code_name(c)) }
                .to_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            name(riverlet::error::codes::NOT_LEADER_OR_FOLLOWER),
            "NOT_LEADER_OR_FOLLOWER"
        );
        assert_eq!(name(riverlet::error::codes::NONE), "NONE");
        assert_eq!(name(-12345), "UNKNOWN_CODE");
        // The same pointer each time: a static string.
        assert_eq!(
            riverlet_fluss_code_name(-12345),
            riverlet_fluss_code_name(-12345)
        );
    }

    #[test]
    fn every_kind_has_its_own_status() {
        let kinds = [
            ErrorKind::NotFound,
            ErrorKind::AlreadyExists,
            ErrorKind::InvalidArgument,
            ErrorKind::Unsupported,
            ErrorKind::Authentication,
            ErrorKind::Network,
            ErrorKind::Timeout,
            ErrorKind::Server,
            ErrorKind::Corrupt,
            ErrorKind::Closed,
            ErrorKind::Io,
            ErrorKind::Internal,
        ];
        let mut seen = std::collections::HashSet::new();
        for k in kinds {
            let s = RiverletStatus::from_kind(k);
            assert_ne!(s, RiverletStatus::Ok);
            assert!(seen.insert(s as i32), "{k:?} shares a status");
            // the status name is the kind name in upper case
            let name = unsafe { CStr::from_ptr(riverlet_status_name(s as i32)) };
            assert_eq!(name.to_str().unwrap(), k.as_str().to_uppercase());
        }
    }

    #[test]
    fn guard_sets_and_clears_last_error() {
        let s = guard(|| Err(Error::not_found("table 'db.t' does not exist").into()));
        assert_eq!(s, RiverletStatus::NotFound);
        assert_eq!(last().unwrap(), "table 'db.t' does not exist");
        assert_eq!(guard(|| Ok(())), RiverletStatus::Ok);
        assert_eq!(last(), None);
    }

    #[test]
    fn warning_kinds_match_the_core() {
        assert_eq!(
            RIVERLET_WARNING_BEFORE_RETENTION,
            riverlet::WarningKind::BeforeRetention.code()
        );
    }

    #[test]
    fn guard_stops_panics() {
        let s = guard(|| panic!("boom"));
        assert_eq!(s, RiverletStatus::Panic);
        assert!(last().unwrap().contains("boom"));
    }

    #[test]
    fn fluss_code_is_kept() {
        let s = guard(|| Err(Error::from_fluss(7, "no such table").into()));
        assert_ne!(s, RiverletStatus::Ok);
        assert_eq!(riverlet_last_error_fluss_code(), 7);
        guard(|| Ok(()));
        assert_eq!(riverlet_last_error_fluss_code(), 0);
    }

    #[test]
    fn nul_bytes_in_messages_do_not_fail() {
        guard(|| Err(Error::invalid("a\0b").into()));
        assert_eq!(last().unwrap(), "a\\0b");
    }

    #[test]
    fn unknown_status_name() {
        let name = unsafe { CStr::from_ptr(riverlet_status_name(999)) };
        assert_eq!(name.to_str().unwrap(), "UNKNOWN");
    }
}
