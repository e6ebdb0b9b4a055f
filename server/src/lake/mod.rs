//! The lake tiering service of the tables with `table.datalake.enabled` (server feature
//! `lake`): when each table commits (every `table.datalake.freshness`, or on demand), what a
//! commit round reads from the Fluss log (each bucket from the offset the latest lake snapshot
//! recorded up to its high watermark, with Fluss's system columns `__bucket`, `__offset`,
//! `__timestamp` and each row's change type), the tiered-offsets files (Fluss's
//! `TableBucketOffsets` JSON), and the lake snapshots (snapshot id, per-bucket log offset)
//! GetLakeSnapshot answers with.
//!
//! The format-specific part sits behind one trait, [`LakeTableFormat`] (create the lake table,
//! write a bucket's rows, commit a round with its offsets file, list the committed tiering
//! snapshots), with two implementations picked by `datalake.format`: `iceberg` (the iceberg
//! crate; log tables) and `paimon` (the paimon crate; log and primary-key tables,
//! partitioned or not, in Fluss's Paimon layout). Each module's doc says how it records a
//! round's offsets; the Paimon one deviates from Fluss there (the crate cannot set snapshot
//! properties).
//!
//! Every call into a lake crate runs on the lake's own runtime (`IoRuntime`).

pub use riverlet::lake::bridge;

mod iceberg;
mod paimon;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use arrow_schema::SchemaRef;
use riverlet::metadata::AddColumn;
use riverlet::record::log_batch::LogBatchIter;
use riverlet::record::ChangeType;
use riverlet::{Error, Result};

use crate::catalog::{PartitionEntry, TableMeta};
use crate::config::ServerConfig;
use crate::fault::FaultKnob;

/// The system column holding the Fluss bucket of a row.
pub const BUCKET_COLUMN: &str = "__bucket";
/// The system column holding the Fluss log offset of a row.
pub const OFFSET_COLUMN: &str = "__offset";
/// The system column holding the commit timestamp of a row's log batch.
pub const TIMESTAMP_COLUMN: &str = "__timestamp";
/// The Iceberg snapshot summary key with the path of the tiered-offsets file (Fluss's name).
pub const OFFSETS_PROPERTY: &str = "fluss-offsets";
/// The commit user of the snapshots the tiering commits (Fluss's name).
pub const COMMIT_USER: &str = "__fluss_lake_tiering";
/// Fluss's default `table.datalake.freshness`.
const DEFAULT_FRESHNESS: Duration = Duration::from_secs(180);
/// Bytes read from a bucket's log per read while tiering.
const READ_CHUNK: usize = 4 * 1024 * 1024;

/// The test-only fault knob of lake commits ([`crate::fault::FaultKnob`]):
/// `RIVERLET_FAULT_LAKE_COMMIT=<step>` aborts the server process the first time a commit
/// reaches that step (the doc comment of [`Lake::commit_table`] says what is on disk at each);
/// another value is refused by [`Lake::open`]. `manifests` is a step of Iceberg commits only.
pub static COMMIT_FAULT: FaultKnob = FaultKnob::new(
    "RIVERLET_FAULT_LAKE_COMMIT",
    "lake commit",
    &[
        "before-data-files",
        "between-data-files",
        "data-files",
        "offsets-file",
        "manifests",
        "committed",
        "recorded",
    ],
);

fn lake_err(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Error {
    Error::internal(format!("lake: {what}: {e}"))
}

/// `table.datalake.enabled = true`.
pub fn lake_enabled(meta: &TableMeta) -> bool {
    meta.descriptor.lake_enabled()
}

/// `table.datalake.freshness` of a table (Fluss's default 3 min).
pub fn freshness(meta: &TableMeta) -> Duration {
    meta.descriptor
        .property("table.datalake.freshness")
        .and_then(|v| riverlet::metadata::table::parse_duration_ms(v).ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_FRESHNESS, |ms| Duration::from_millis(ms as u64))
}

/// (partition id, bucket) -> log offset.
pub type BucketOffsets = BTreeMap<(Option<i64>, i32), i64>;

/// One committed lake snapshot of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeSnapshot {
    /// The lake's snapshot id.
    pub snapshot_id: i64,
    /// When it was committed (epoch ms).
    pub committed_at: i64,
    /// (partition id, bucket) -> the log offset the lake holds the rows before.
    pub offsets: BucketOffsets,
}

/// Rows of one log batch of a bucket, as a round tiers them: the table's columns (cast to the
/// lake table's types) then the system columns, and each row's change type (None: an
/// append-only batch of a log table).
pub struct TieredBatch {
    /// The rows, in the lake table's schema ([`TieringRound::schema`]).
    pub rows: RecordBatch,
    /// The change type of each row (primary-key tables' changelog).
    pub kinds: Option<Vec<ChangeType>>,
}

/// The format-specific part of the tiering: one lake catalog and its tables. Every method runs
/// on the lake's runtime.
#[async_trait::async_trait]
pub trait LakeTableFormat: Send + Sync + 'static {
    /// The format's `datalake.format` name.
    fn name(&self) -> &'static str;

    /// The catalog's effective properties (without `datalake.<format>.`): what lake readers
    /// open the catalog with, handed to clients as `table.datalake.<format>.*`.
    fn properties(&self) -> &BTreeMap<String, String>;

    /// Why this format's tiering cannot take the table (None: it can).
    fn unsupported_reason(&self, meta: &TableMeta) -> Option<String>;

    /// Creates the lake table of a new lake-enabled Fluss table (or takes over an empty
    /// compatible one; one holding rows is LAKE_TABLE_ALREADY_EXIST).
    async fn create_table(&self, meta: &TableMeta) -> Result<()>;

    /// ALTER TABLE ADD COLUMN on the lake table of a lake-enabled table (`current`: the Fluss
    /// table now, `altered`: as the change leaves it; `columns`: nullable, added last), before
    /// the Fluss schema changes. An error refuses the ALTER: the Fluss schema stays as it is.
    async fn add_columns(
        &self,
        current: &TableMeta,
        altered: &TableMeta,
        columns: &[AddColumn],
    ) -> Result<()>;

    /// Starts a commit round of the table: loads its lake table.
    async fn begin_round(&self, meta: &TableMeta) -> Result<Box<dyn TieringRound>>;

    /// The lake snapshots of the table (its table id) the tiering committed, oldest first,
    /// with the offsets their offsets files hold. The newest tiering snapshot's file being
    /// unreadable is an error naming it: resuming from an older one would tier rows twice.
    async fn tiering_snapshots(&self, meta: &TableMeta) -> Result<Vec<LakeSnapshot>>;
}

/// One commit round of one table in one format: its buckets' rows written, then one commit.
#[async_trait::async_trait]
pub trait TieringRound: Send {
    /// The lake table's columns as arrow (the table's columns, then the system columns).
    fn schema(&self) -> SchemaRef;

    /// The id of the newest snapshot of the lake table the tiering committed (of whichever
    /// table id), when the round began.
    fn latest_tiering_snapshot(&self) -> Option<i64>;

    /// The file name (in the server's offsets directory) of this round's offsets file.
    fn offsets_file_name(&self, table_id: i64) -> String;

    /// Writes one bucket's new rows (uncommitted until [`TieringRound::commit`]).
    async fn write_bucket(
        &mut self,
        partition: Option<&PartitionEntry>,
        bucket: i32,
        batches: Vec<TieredBatch>,
    ) -> Result<()>;

    /// Commits what was written, the round's offsets being in `offsets_file` (already
    /// written and synced). Returns the new snapshot's id and commit time (epoch ms).
    async fn commit(&mut self, offsets_file: &Path) -> Result<(i64, i64)>;
}

#[derive(Debug, Default)]
struct TableLake {
    /// Committed snapshots of this Fluss table (this table id), oldest first.
    snapshots: Vec<LakeSnapshot>,
    /// When the latest commit round ran (None: not since the server started).
    last_round: Option<Instant>,
}

/// The lake of one server: its format (catalog) and the lake snapshots of each table.
pub struct Lake {
    format: Arc<dyn LakeTableFormat>,
    /// The runtime every lake call runs on (see [`IoRuntime`]).
    io: IoRuntime,
    offsets_dir: PathBuf,
    tables: Mutex<HashMap<i64, TableLake>>,
    /// One commit at a time per server (rounds and on-demand commits may meet).
    commit: tokio::sync::Mutex<()>,
}

/// The lake's own tokio runtime (one worker thread), on which the catalog is opened and every
/// catalog call runs. A REST catalog's HTTP connections are driven by their runtime's I/O
/// driver; on the server's runtime a table creation (run under the server's catalog lock,
/// from the blocking pool) waited forever for its response when both worker threads were
/// blocked on that lock by other requests. Here the driver never waits for the server.
struct IoRuntime(Option<tokio::runtime::Runtime>);

impl IoRuntime {
    fn new() -> Result<IoRuntime> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("riverlet-lake-io")
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("lake I/O runtime: {e}")))?;
        Ok(IoRuntime(Some(rt)))
    }

    /// Runs `f` on this runtime and waits for it (from any runtime or thread).
    async fn run<T: Send + 'static>(
        &self,
        f: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Result<T> {
        let rt = self
            .0
            .as_ref()
            .ok_or_else(|| Error::internal("lake I/O runtime already shut down"))?;
        rt.spawn(f)
            .await
            .map_err(|e| Error::internal(format!("lake I/O task failed: {e}")))
    }
}

impl Drop for IoRuntime {
    fn drop(&mut self) {
        // dropped possibly inside the server's runtime, where a blocking shutdown panics
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether a catalog property must not reach clients in table info (Fluss's
/// `MetadataManager.removeSensitiveTableOptions`: a key containing `password`, `secret` or
/// `key`, case-insensitively).
pub fn is_sensitive_lake_option(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["password", "secret", "key"]
        .iter()
        .any(|s| key.contains(s))
}

/// Fluss's `TableBucketOffsets` JSON (version 1): `bucket_offsets` (indexed by bucket, -1 for
/// none) for a table without partitions, `partition_offsets` for one with.
fn offsets_json(table_id: i64, buckets: i32, offsets: &BucketOffsets) -> Vec<u8> {
    let arr = |pid: Option<i64>| -> Vec<i64> {
        (0..buckets)
            .map(|b| offsets.get(&(pid, b)).copied().unwrap_or(-1))
            .collect()
    };
    let partitions: std::collections::BTreeSet<i64> =
        offsets.keys().filter_map(|(p, _)| *p).collect();
    let v = if partitions.is_empty() {
        serde_json::json!({"version": 1, "table_id": table_id, "bucket_offsets": arr(None)})
    } else {
        let list: Vec<serde_json::Value> = partitions
            .iter()
            .map(|p| serde_json::json!({"partition_id": p, "bucket_offsets": arr(Some(*p))}))
            .collect();
        serde_json::json!({"version": 1, "table_id": table_id, "partition_offsets": list})
    };
    serde_json::to_vec(&v).unwrap_or_default()
}

fn parse_offsets_json(bytes: &[u8]) -> Option<(i64, BucketOffsets)> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if v.get("version")?.as_i64()? != 1 {
        return None;
    }
    let table_id = v.get("table_id")?.as_i64()?;
    let mut out = BTreeMap::new();
    let mut add = |pid: Option<i64>, arr: &serde_json::Value| -> Option<()> {
        for (b, o) in arr.as_array()?.iter().enumerate() {
            let o = o.as_i64()?;
            if o >= 0 {
                out.insert((pid, b as i32), o);
            }
        }
        Some(())
    };
    if let Some(arr) = v.get("bucket_offsets") {
        add(None, arr)?;
    } else if let Some(list) = v.get("partition_offsets") {
        for p in list.as_array()? {
            add(
                Some(p.get("partition_id")?.as_i64()?),
                p.get("bucket_offsets")?,
            )?;
        }
    }
    Some((table_id, out))
}

/// Reads an offsets file: (table id, offsets), or why not.
fn read_offsets_file(path: &Path) -> std::result::Result<(i64, BucketOffsets), String> {
    std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| parse_offsets_json(&b).ok_or_else(|| "not an offsets file".into()))
}

/// Writes `bytes` to a file (replacing it) and fsyncs it and its directory.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

fn path_of(location: &str) -> PathBuf {
    PathBuf::from(location.strip_prefix("file://").unwrap_or(location))
}

impl Lake {
    /// Opens (creating when missing) the lake catalog `config` names, or None when no
    /// `datalake.format` is set.
    pub async fn open(config: &ServerConfig) -> Result<Option<Arc<Lake>>> {
        let Some(format) = config.datalake_format.as_deref() else {
            return Ok(None);
        };
        COMMIT_FAULT.step()?;
        let offsets_dir = config.data_dir.join("lake-offsets");
        std::fs::create_dir_all(&offsets_dir)
            .map_err(|e| Error::from(e).context(format!("{}", offsets_dir.display())))?;
        let io = IoRuntime::new()?;
        let format: Arc<dyn LakeTableFormat> = match format {
            "paimon" => {
                let props = config.datalake_paimon.clone();
                let dir = offsets_dir.clone();
                Arc::new(
                    io.run(async move { paimon::PaimonFormat::open(props, dir).await })
                        .await??,
                )
            }
            _ => {
                let props = config.datalake_iceberg.clone();
                Arc::new(
                    io.run(async move { iceberg::IcebergFormat::open(props).await })
                        .await??,
                )
            }
        };
        Ok(Some(Arc::new(Lake {
            format,
            io,
            offsets_dir,
            tables: Mutex::new(HashMap::new()),
            commit: tokio::sync::Mutex::new(()),
        })))
    }

    /// The format's `datalake.format` name.
    pub fn format_name(&self) -> &'static str {
        self.format.name()
    }

    /// The catalog's effective properties (`warehouse` and the like): what a lake reader
    /// opens the catalog with. GetTableInfo hands them to clients as
    /// `table.datalake.<format>.*` table properties, as Fluss does.
    pub fn properties(&self) -> &BTreeMap<String, String> {
        self.format.properties()
    }

    /// Runs `f` with the format on the lake's runtime.
    async fn on_format<T, F>(&self, f: impl FnOnce(Arc<dyn LakeTableFormat>) -> F) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        self.io.run(f(self.format.clone())).await?
    }

    /// Why the embedded server cannot tier this table to its lake (None: it can).
    pub fn unsupported_reason(&self, meta: &TableMeta) -> Option<String> {
        if !matches!(meta.log_format, riverlet::metadata::LogFormat::Arrow) {
            return Some("log formats other than ARROW".into());
        }
        self.format.unsupported_reason(meta)
    }

    /// Creates the lake table of a lake-enabled Fluss table (see
    /// [`LakeTableFormat::create_table`]).
    pub async fn create_table(&self, meta: &Arc<TableMeta>) -> Result<()> {
        if let Some(why) = self.unsupported_reason(meta) {
            return Err(Error::unsupported(format!(
                "table.datalake.enabled: the embedded server does not tier {why} to the {} lake \
                 (table {})",
                self.format.name(),
                meta.path()
            )));
        }
        let m = meta.clone();
        self.on_format(|f| async move { f.create_table(&m).await })
            .await?;
        // the first commit comes one freshness interval after the creation
        lock(&self.tables)
            .entry(meta.entry.id)
            .or_default()
            .last_round = Some(Instant::now());
        Ok(())
    }

    /// Holds off commit rounds (taken before the server's catalog lock, as
    /// [`Lake::commit_table`] takes them): an ALTER of a lake table holds it, so no round
    /// writes rows in a lake schema that changes under it, and the next round reads the
    /// altered table's log in its new lake schema.
    pub async fn hold_commits(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.commit.lock().await
    }

    /// ALTER TABLE ADD COLUMN of a lake-enabled table on its lake table, the first step of the
    /// ALTER as in Fluss 0.9.1 (`MetadataManager.alterTableSchema`: "lake first"); the caller
    /// stores the Fluss schema only when this succeeds, and holds [`Lake::hold_commits`].
    pub async fn add_columns(
        &self,
        current: &Arc<TableMeta>,
        altered: &Arc<TableMeta>,
        columns: &[AddColumn],
    ) -> Result<()> {
        let (c, a, cols) = (current.clone(), altered.clone(), columns.to_vec());
        self.on_format(|f| async move { f.add_columns(&c, &a, &cols).await })
            .await
    }

    /// Loads the lake snapshots of the lake-enabled tables from their lake tables (at
    /// start-up): the snapshots committed by the tiering for this table id.
    pub async fn recover(&self, tables: &[Arc<TableMeta>]) {
        for meta in tables.iter().filter(|m| lake_enabled(m)) {
            match self.load_snapshots(meta).await {
                Ok(s) => {
                    lock(&self.tables)
                        .entry(meta.entry.id)
                        .or_default()
                        .snapshots = s;
                }
                Err(e) => tracing::warn!("{}: loading its lake snapshots failed: {e}", meta.path()),
            }
        }
    }

    async fn load_snapshots(&self, meta: &Arc<TableMeta>) -> Result<Vec<LakeSnapshot>> {
        let m = meta.clone();
        self.on_format(|f| async move { f.tiering_snapshots(&m).await })
            .await
    }

    /// The latest lake snapshot of a table, or the one with `snapshot_id`.
    pub fn snapshot(&self, table_id: i64, snapshot_id: Option<i64>) -> Option<LakeSnapshot> {
        let g = lock(&self.tables);
        let snaps = &g.get(&table_id)?.snapshots;
        match snapshot_id {
            None => snaps.last().cloned(),
            Some(id) => snaps.iter().find(|s| s.snapshot_id == id).cloned(),
        }
    }

    /// Forgets a dropped table's state (its lake table stays, as with Fluss).
    pub fn forget(&self, table_id: i64) {
        lock(&self.tables).remove(&table_id);
    }

    /// Whether the table's freshness interval has passed since its latest commit round.
    pub fn due(&self, meta: &TableMeta) -> bool {
        let g = lock(&self.tables);
        match g.get(&meta.entry.id).and_then(|t| t.last_round) {
            None => true,
            Some(at) => at.elapsed() >= freshness(meta),
        }
    }

    /// Commits to the lake every row of `meta` below each bucket's high watermark that the
    /// latest lake snapshot does not hold yet. Returns the new snapshot (None: nothing new).
    ///
    /// The steps, in order, each named as the fault knob ([`COMMIT_FAULT`]) names it (the knob
    /// aborts the process when a commit reaches the step, before doing what follows it):
    ///
    /// 1. Load the lake table; for each bucket (of each partition) read the log from the
    ///    latest snapshot's offset up to the high watermark. `before-data-files`: the first
    ///    bucket with new rows is read, nothing is written yet.
    /// 2. Write each bucket's new rows as data files of the lake table (fresh names each
    ///    commit; Iceberg: under the table's `data/`; Paimon: in the partition's `bucket-N/`
    ///    directory, plus changelog files for primary-key tables). `between-data-files`: the
    ///    first such bucket's files are written and closed, the next one's are not.
    ///    `data-files`: every data file is written.
    /// 3. Write the offsets file (`DATA_DIR/lake-offsets/`, Fluss's `TableBucketOffsets`
    ///    JSON: the log offset each bucket is tiered up to; its name per format, see
    ///    [`TieringRound::offsets_file_name`]). `offsets-file`: it is written, the lake
    ///    commit has not started.
    /// 4. The lake commit. Iceberg: a fast append writes a manifest and a manifest list, then
    ///    the catalog moves the table to new metadata whose snapshot's summary holds
    ///    `fluss-offsets` (the offsets file's path); `manifests`: the manifest files are
    ///    written, the catalog still points at the previous metadata. Paimon: manifests and a
    ///    manifest list, then the snapshot file is published (an atomic rename in the
    ///    filesystem catalog), with commit user `__fluss_lake_tiering` and the round's commit
    ///    identifier, which names the offsets file. Publishing is the commit point: before it
    ///    no snapshot exists, after it the whole one does. `committed`: the lake holds the new
    ///    snapshot, the server's in-memory list of lake snapshots (which GetLakeSnapshot
    ///    answers from) does not.
    /// 5. Append the snapshot to the in-memory list. `recorded`: done, nothing else is written.
    ///
    /// A process killed before the commit point leaves the lake at its previous snapshot;
    /// what it wrote (data files, offsets file, manifests) is referenced by no snapshot, so no
    /// reader sees it, and the next commit reads again from the previous snapshot's offsets.
    /// Killed after it, [`Lake::recover`] finds the snapshot in the lake at the next start
    /// (its offsets from the offsets file) and the next commit starts from its offsets. The
    /// log rows a commit reads stay on local disk until a snapshot holds them
    /// (`lake_pending_from`), so either way each row reaches the lake exactly once.
    pub async fn commit_table(
        &self,
        server: &crate::service::Server,
        meta: &Arc<TableMeta>,
    ) -> Result<Option<LakeSnapshot>> {
        let _one = self.commit.lock().await;
        // An ALTER may have stored a newer schema while this round waited for the lock: the
        // log's batches of that schema id are read with the table as it is now.
        let current = crate::service::lock_catalog(server).table_by_id(meta.entry.id);
        let meta = current.as_ref().unwrap_or(meta);
        lock(&self.tables)
            .entry(meta.entry.id)
            .or_default()
            .last_round = Some(Instant::now());
        let m = meta.clone();
        let mut round = self
            .on_format(|f| async move { f.begin_round(&m).await })
            .await?;
        // The offsets to resume from are the newest tiering snapshot's in the lake: the list
        // in memory is reloaded when it is not that one (its loading at start-up failed, or a
        // commit's outcome was not seen).
        if round.latest_tiering_snapshot()
            != self.snapshot(meta.entry.id, None).map(|s| s.snapshot_id)
        {
            let snaps = self.load_snapshots(meta).await?;
            lock(&self.tables)
                .entry(meta.entry.id)
                .or_default()
                .snapshots = snaps;
        }
        let prev = self.snapshot(meta.entry.id, None);
        let target = round.schema();
        let mut offsets = prev.as_ref().map(|p| p.offsets.clone()).unwrap_or_default();
        let partitions: Vec<Option<PartitionEntry>> = if meta.is_partitioned() {
            crate::service::lock_catalog(server)
                .partitions(meta, &[])?
                .into_iter()
                .map(Some)
                .collect()
        } else {
            vec![None]
        };
        let mut any = false;
        for partition in partitions {
            let pid = partition.as_ref().map(|p| p.id);
            for bucket in 0..meta.buckets {
                let from = offsets.get(&(pid, bucket)).copied().unwrap_or(0);
                let (batches, next) = read_bucket(server, meta, pid, bucket, from, &target)?;
                offsets.insert((pid, bucket), next);
                if batches.is_empty() {
                    continue;
                }
                COMMIT_FAULT.point(if any {
                    "between-data-files"
                } else {
                    "before-data-files"
                });
                any = true;
                let p = partition.clone();
                round = self
                    .io
                    .run(async move {
                        round
                            .write_bucket(p.as_ref(), bucket, batches)
                            .await
                            .map(|()| round)
                    })
                    .await??;
            }
        }
        if !any {
            return Ok(None);
        }
        COMMIT_FAULT.point("data-files");
        let file = self
            .offsets_dir
            .join(round.offsets_file_name(meta.entry.id));
        // fsynced: the snapshot committed below names it, and recovery reads it
        write_synced(&file, &offsets_json(meta.entry.id, meta.buckets, &offsets))
            .map_err(|e| Error::from(e).context(format!("write {}", file.display())))?;
        COMMIT_FAULT.point("offsets-file");
        let f = file.clone();
        let (snapshot_id, committed_at) =
            self.io.run(async move { round.commit(&f).await }).await??;
        COMMIT_FAULT.point("committed");
        let s = LakeSnapshot {
            snapshot_id,
            committed_at,
            offsets,
        };
        lock(&self.tables)
            .entry(meta.entry.id)
            .or_default()
            .snapshots
            .push(s.clone());
        COMMIT_FAULT.point("recorded");
        Ok(Some(s))
    }
}

/// The rows of one bucket from offset `from` up to its high watermark, with the system
/// columns, cast to `target` (the lake table's arrow types), and the change type of each row.
/// Returns them and the offset after the last one read.
fn read_bucket(
    server: &crate::service::Server,
    meta: &TableMeta,
    partition_id: Option<i64>,
    bucket: i32,
    from: i64,
    target: &SchemaRef,
) -> Result<(Vec<TieredBatch>, i64)> {
    let tb = crate::tablets::TableBucket {
        table_id: meta.entry.id,
        partition_id,
        bucket,
    };
    let b = server.tablets.get(&tb)?;
    let g = b.read().unwrap_or_else(|p| p.into_inner());
    let hw = g.log.high_watermark();
    let mut at = from.max(g.log.log_start_offset());
    if at < g.log.local_log_start_offset() {
        // Rows only in remote segments are not read back for the lake (yet).
        return Err(Error::unsupported(format!(
            "{tb}: lake tiering from offset {at}, which is only in remote storage now (local \
             log starts at {})",
            g.log.local_log_start_offset()
        )));
    }
    let mut out = Vec::new();
    while at < hw {
        let buf = g.log.read(at, READ_CHUNK, true)?;
        if buf.is_empty() {
            break;
        }
        let mut progressed = false;
        for item in LogBatchIter::new(&buf) {
            let lb = item?;
            if lb.next_offset() <= at {
                continue;
            }
            if lb.base_offset() >= hw {
                at = hw;
                break;
            }
            progressed = true;
            let schema = meta.arrow_of(lb.schema_id() as i32)?;
            let (kinds, rows) = lb.arrow_records(schema)?;
            let base = lb.base_offset();
            let skip = (at - base).max(0) as usize;
            let end = ((hw.min(lb.next_offset()) - base) as usize).min(rows.num_rows());
            if skip < end {
                let rows = rows.slice(skip, end - skip);
                out.push(TieredBatch {
                    rows: with_system_columns(
                        &rows,
                        bucket,
                        base + skip as i64,
                        lb.commit_timestamp(),
                        target,
                    )?,
                    kinds: kinds.map(|k| k[skip..end].to_vec()),
                });
            }
            at = lb.next_offset().min(hw);
        }
        if !progressed {
            break;
        }
    }
    Ok((out, at.max(from)))
}

/// `rows` (user columns of one log batch, possibly of an older schema with fewer columns)
/// with the system columns appended, every column cast to `target`'s type.
fn with_system_columns(
    rows: &RecordBatch,
    bucket: i32,
    first_offset: i64,
    commit_ts_ms: i64,
    target: &SchemaRef,
) -> Result<RecordBatch> {
    let n = rows.num_rows();
    let user = target.fields().len() - 3;
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(target.fields().len());
    for (i, f) in target.fields().iter().take(user).enumerate() {
        let col = match rows.columns().get(i) {
            Some(c) => cast_column(c, f.data_type())
                .map_err(|e| lake_err(format!("column {}", f.name()), e))?,
            None => arrow_array::new_null_array(f.data_type(), n),
        };
        cols.push(col);
    }
    cols.push(Arc::new(Int32Array::from(vec![bucket; n])));
    cols.push(Arc::new(Int64Array::from_iter_values(
        (0..n as i64).map(|i| first_offset + i),
    )));
    let ts: ArrayRef = Arc::new(arrow_array::TimestampMillisecondArray::from(vec![
        commit_ts_ms;
        n
    ]));
    cols.push(
        cast_column(&ts, target.field(user + 2).data_type())
            .map_err(|e| lake_err("__timestamp", e))?,
    );
    RecordBatch::try_new(target.clone(), cols).map_err(|e| lake_err("batch", e))
}

/// `col` cast to `to`. Timestamps between zone labels (none, `+00:00`, Paimon's `UTC`) keep
/// their epoch values, which are UTC instants whatever the label: only the unit is cast and
/// the label replaced (arrow's own cast to a named zone needs zone data this build lacks).
fn cast_column(
    col: &ArrayRef,
    to: &arrow_schema::DataType,
) -> std::result::Result<ArrayRef, arrow_schema::ArrowError> {
    use arrow_schema::DataType::Timestamp;
    if let (Timestamp(_, from_tz), Timestamp(unit, to_tz)) = (col.data_type(), to) {
        if from_tz != to_tz {
            let unit_cast = arrow_cast::cast(col, &Timestamp(*unit, from_tz.clone()))?;
            let relabelled = unit_cast
                .to_data()
                .into_builder()
                .data_type(to.clone())
                .build()?;
            return Ok(arrow_array::make_array(relabelled));
        }
    }
    arrow_cast::cast(col, to)
}
