//! The one error type of the crate, with kinds every binding maps once.
//!
//! A binding looks only at [`Error::kind`] (and [`Error::fluss_code`] for server errors) to pick
//! its exception class or C status code; the message is for humans and always names the bad
//! value, table or column.

use std::fmt;

pub mod codes;

/// What went wrong, coarse enough for a binding to map to one exception class each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A database, table, partition, bucket or key the caller named does not exist.
    NotFound,
    /// The thing being created exists already.
    AlreadyExists,
    /// The caller passed a value that cannot be used (bad schema, bad timestamp, bad filter...).
    InvalidArgument,
    /// The operation is valid but not supported here (by this server version, table kind...).
    Unsupported,
    /// Authentication failed or is required.
    Authentication,
    /// A network problem that may go away when retried (connection refused or reset...).
    Network,
    /// A deadline passed before the server answered.
    Timeout,
    /// The server answered with a Fluss error code that has no better kind above.
    Server,
    /// Bytes that do not decode: a torn frame, a bad CRC, a truncated record.
    Corrupt,
    /// An object was used after `close()`, or the runtime is shutting down.
    Closed,
    /// A local I/O failure (data directory, files).
    Io,
    /// A bug in Riverlet: an invariant that should hold did not.
    Internal,
}

impl ErrorKind {
    /// A stable lower-case name, used in messages and by bindings that expose the kind as text.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Server => "server",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Closed => "closed",
            ErrorKind::Io => "io",
            ErrorKind::Internal => "internal",
        }
    }
}

/// Riverlet's error: a kind, a human message, and the Fluss error code when the server sent one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    fluss_code: Option<i32>,
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            fluss_code: None,
        }
    }

    /// An error the server reported with a Fluss error code; the kind follows from the code.
    pub fn from_fluss(code: i32, message: impl Into<String>) -> Self {
        let kind = crate::error::codes::kind_of(code);
        Error {
            kind,
            message: message.into(),
            fluss_code: Some(code),
        }
    }

    /// Shorthand for [`ErrorKind::InvalidArgument`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    /// Shorthand for [`ErrorKind::Corrupt`].
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corrupt, message)
    }

    /// Shorthand for [`ErrorKind::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// Shorthand for [`ErrorKind::Unsupported`].
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }

    /// Shorthand for [`ErrorKind::Internal`].
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Shorthand for [`ErrorKind::Network`].
    pub fn network(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Network, message)
    }

    /// The kind a binding maps to its exception class.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The Fluss error code, when the server sent one.
    pub fn fluss_code(&self) -> Option<i32> {
        self.fluss_code
    }

    /// Whether retrying the same request may succeed.
    pub fn is_retriable(&self) -> bool {
        match self.fluss_code {
            Some(code) => crate::error::codes::is_retriable(code),
            None => matches!(self.kind, ErrorKind::Network | ErrorKind::Timeout),
        }
    }

    /// The same error with `context` put in front of its message (kind and code kept).
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fluss_code {
            Some(code) => write!(
                f,
                "{} (Fluss error {} {})",
                self.message,
                code,
                crate::error::codes::name_of(code)
            ),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        let kind = match e.kind() {
            K::ConnectionRefused
            | K::ConnectionReset
            | K::ConnectionAborted
            | K::BrokenPipe
            | K::NotConnected
            | K::UnexpectedEof
            | K::AddrNotAvailable => ErrorKind::Network,
            K::TimedOut => ErrorKind::Timeout,
            _ => ErrorKind::Io,
        };
        Error::new(kind, e.to_string())
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::new(ErrorKind::InvalidArgument, format!("arrow: {e}"))
    }
}

impl From<prost::DecodeError> for Error {
    fn from(e: prost::DecodeError) -> Self {
        Error::corrupt(format!("protobuf decode: {e}"))
    }
}

/// Returns early with an [`ErrorKind::InvalidArgument`] error built by `format!`.
#[macro_export]
macro_rules! bail_invalid {
    ($($arg:tt)*) => { return Err($crate::Error::invalid(format!($($arg)*))) };
}

/// Returns early with an [`ErrorKind::Corrupt`] error built by `format!`.
#[macro_export]
macro_rules! bail_corrupt {
    ($($arg:tt)*) => { return Err($crate::Error::corrupt(format!($($arg)*))) };
}
