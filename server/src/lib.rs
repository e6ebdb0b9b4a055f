//! Embedded server placeholder.
