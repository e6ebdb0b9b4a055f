//! The core crate's integration tests, as one test binary: one link of the dependency tree
//! instead of one per file (each was ~115 MB and linked everything again). Every file below is a
//! module; `cargo test -p riverlet --test integration <module>::` runs one file's tests. Files
//! that need an optional feature, process-wide state of their own (a global tracing subscriber)
//! or to be a crate root (fuzz_corpus includes fuzz/src) stay binaries of their own (Cargo.toml).

mod common;

mod acl;
mod client_aggregation;
mod client_auto_increment;
mod client_blocking;
mod client_fault_injection;
mod client_interop;
mod client_kv;
mod client_leaders;
mod client_log;
mod client_modify;
mod cluster_admin;
mod empty_in_filter;
mod golden_java;
mod golden_pyfluss;
mod lake_bucketing;
mod lake_bucketing_cluster;
mod lake_snapshot;
mod oversized_batches;
mod peer_bugs;
mod peer_bugs_cluster;
mod pk_view_log_start;
mod producer_offsets;
mod read_optimized;
mod read_request;
mod scan_blocking;
mod scan_ipc;
mod scan_reads;
mod schema_evolution;
mod stats_pushdown;
mod subscribe_failover;
mod subscribe_read_ahead;
mod tiered_log;
mod tiered_log_cluster;
mod time_range_log;
mod time_range_pk;
mod time_range_segments;
mod tls;
mod writer_abort;
