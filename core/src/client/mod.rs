//! The async client: [`Connection`], [`Admin`], [`Table`].
//!
//! Offered to scanners and writers (the phase-2 contract):
//!
//! - [`ClientConfig`] `{ bootstrap_servers, connect_timeout, request_timeout, sasl, max_frame_size,
//!   writer, retries, retry_backoff, max_retry_backoff }`, `ClientConfig::new(bootstrap)`,
//!   `ClientConfig::from_properties(&BTreeMap)` (Fluss option names).
//! - [`Connection`] (cheap `Clone`):
//!   - `async connect(ClientConfig) -> Result<Connection>`, `admin() -> Admin`,
//!     `async table(&TablePath) -> Result<Table>`, `async close()`, `is_closed()`;
//!   - `async table_info(&TablePath) -> Result<Arc<TableInfo>>` (cached),
//!     `async table_info_refresh(&TablePath, refresh: bool)`;
//!   - `async partitions(&TablePath) -> Result<Vec<PartitionInfo>>`,
//!     `async partition_id(&TablePath, name) -> Result<Option<i64>>`;
//!   - `async leader(table_id, partition_id: Option<i64>, bucket) -> Result<Arc<ServerConnection>>`,
//!     `async request_leader(table_id, partition_id, bucket, &req) -> Result<Resp>` (retries and
//!     refreshes the leader on NOT_LEADER_OR_FOLLOWER / UNKNOWN_TABLE_OR_BUCKET / network errors),
//!     `invalidate_table(table_id)`;
//!   - `async coordinator()`, `async any_tablet_server()`.
//! - [`Admin`]: `create_database(name, ignore_if_exists)`, `drop_database(name, ignore_if_not_exists,
//!   cascade)`, `list_databases()`, `database_exists(name)`, `create_table(&TablePath,
//!   &TableDescriptor, ignore_if_exists)`, `drop_table(&TablePath, ignore_if_not_exists)`,
//!   `list_tables(db)`, `table_info(&TablePath)`, `table_exists(&TablePath)`,
//!   `list_partitions(&TablePath)`, `create_partition(&TablePath, &PartitionSpec, ignore)`,
//!   `drop_partition(..)`, `list_offsets(&TablePath, partition: Option<&str>, buckets: &[i32],
//!   OffsetSpec) -> Result<BTreeMap<i32, i64>>` (empty `buckets` = all),
//!   `list_offsets_by_id(table_id, partition_id: Option<i64>, buckets, OffsetSpec)`,
//!   `lake_snapshot(&TablePath, snapshot_id: Option<i64>) -> Result<LakeSnapshot>`.
//! - [`TableView`] `{ Table, Lake, LakeSnapshots }`: what a handle opened as `db.t`,
//!   `db.t$lake` or `db.t$lake$snapshots` reads; `TableView::split(&TablePath)`.
//! - [`OffsetSpec`] `{ Earliest, Latest, Timestamp(i64) }`,
//!   [`PartitionInfo`] `{ partition_id, spec, name }`.
//! - [`Table`] `{ pub conn, pub info, pub view }`: `info()`, `path()`, `connection()`,
//!   `has_primary_key()`, `with_view(TableView)`, `view_name()`,
//!   `new_append_writer() -> Result<AppendWriter>`,
//!   `new_upsert_writer(Option<&[&str]>) -> Result<UpsertWriter>`,
//!   `async bucket_leaders() -> Result<Vec<BucketLeader>>` (each bucket's leader now, in
//!   `leaders.rs`). Readers (`scan()`, `subscribe(..)`, `count()`, `new_lookuper()`) are
//!   `impl Table` blocks in `core::scan`.

mod admin;
pub(crate) mod compat;
mod config;
mod connection;
mod leaders;
pub mod retry;
mod table;
mod writer_config;

pub use admin::{
    invalid_producer_id, producer_offsets_from_proto, producer_offsets_to_proto, Admin,
    BucketKvSnapshot, BucketLakeOffset, ClusterHealth, ConfigChange, ConfigEntry, DatabaseInfo,
    KvSnapshotEntry, LakeSnapshot, OffsetSpec, PartitionInfo, ProducerBucket, ProducerOffsets,
    RegisterResult, RemoteLogManifest,
};
pub use config::{parse_size, ClientConfig, LakeCatalogOptions, FLUSS_OPTIONS_WITHOUT_EFFECT};
pub use connection::{Connection, ServerNode};
pub use leaders::BucketLeader;
pub use table::{Table, TableView, LAKE_SYSTEM_COLUMNS};
pub use writer_config::{NoKeyAssigner, WriterConfig};

pub(crate) use connection::{is_stale_metadata, name_table, recoverable_by_refresh};
