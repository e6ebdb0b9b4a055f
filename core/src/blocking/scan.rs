//! Blocking scan wrappers (written by the scan helper).
