//! Empty on purpose: this crate only pins the features of shared dependencies (see its
//! Cargo.toml), so single-package builds reuse the workspace build's artifacts.
