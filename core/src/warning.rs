//! [`Warning`]: something a caller should know about a request that still succeeded (a
//! time-range window reaching past the log's retention, ...). Warnings are data: a read or
//! subscription carries them, and each binding shows them its own way (Python's `warnings`, the
//! C ABI's last-warning call, the CLI's stderr). They are also logged as `tracing` events.

use std::fmt;

/// What a [`Warning`] is about; the numbers are stable (the C ABI exposes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// A time-range window starts before `now - table.log.ttl`: rows older than the TTL may
    /// already be deleted, so the read can return fewer rows than were written in the window.
    BeforeRetention = 1,
}

impl WarningKind {
    /// The stable number of the kind.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// A short stable name, e.g. `before_retention`.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::BeforeRetention => "before_retention",
        }
    }
}

/// One warning: its kind and a message for people (naming the table and the values involved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What the warning is about.
    pub kind: WarningKind,
    /// The text to show.
    pub message: String,
}

impl Warning {
    /// A warning of `kind`.
    pub fn new(kind: WarningKind, message: impl Into<String>) -> Warning {
        Warning {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
