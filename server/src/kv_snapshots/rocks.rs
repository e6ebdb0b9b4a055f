//! Writing a KV snapshot as Apache Fluss does (feature `kv-snapshot`): the bucket's state goes
//! into a fresh RocksDB (the encoded primary key as the key, `int16 schema id | row` as the
//! value: what Fluss's KvTablet puts in its RocksDB), a RocksDB checkpoint of it is taken, and
//! its files are laid out as Fluss's `RocksIncrementalSnapshot` uploads them: `*.sst` under
//! random names in `shared/`, everything else in `snap-{id}/`, with the `_METADATA` handle
//! ([`super::fluss_layout`]).
//!
//! Fluss 0.9.1's clients open the files with frocksdb 6.20 (`KvSnapshotBatchScanner`), so the
//! SSTs use what 6.20 reads: table format version 5 and CRC32c block checksums (RocksDB 7.8,
//! which this links, would pick the same today; they are set so a newer RocksDB does not
//! change them), LZ4 as Fluss's level-0 compression.

use std::fs;
use std::path::Path;

use riverlet::error::codes;
use riverlet::{Error, Result};

use super::fluss_layout::{
    file_url, SnapshotFile, SnapshotHandle, METADATA_FILE, SHARED_DIR, SNAPSHOT_DIR_PREFIX,
};

/// Puts per RocksDB write batch (bounds the batch's memory, not the snapshot's).
const BATCH_ENTRIES: usize = 4096;

fn rocks_err(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::from_fluss(
        codes::KV_STORAGE_EXCEPTION,
        format!("kv snapshot: {what} {}: {e}", path.display()),
    )
}

/// The bucket a snapshot belongs to and where its snapshots live.
pub struct Target<'a> {
    /// The bucket's snapshot directory (Fluss's remote KV tablet directory), absolute.
    pub dir: &'a Path,
    /// Table id.
    pub table_id: i64,
    /// Partition id.
    pub partition_id: Option<i64>,
    /// Bucket.
    pub bucket: i32,
}

/// Writes snapshot `id` of `entries` (key, value; in key order) covering the log up to
/// `log_offset`. On success `snap-{id}/` (with `_METADATA`) and its `shared/` files exist;
/// on failure what was written is removed (or left for [`super::KvSnapshotStore::open`] to
/// remove: `snap-{id}.tmp`, `snap-{id}.work`, shared files no handle names).
pub fn write(
    t: &Target<'_>,
    id: i64,
    log_offset: i64,
    entries: &[(Vec<u8>, Vec<u8>)],
) -> Result<SnapshotHandle> {
    let work = t.dir.join(format!("{SNAPSHOT_DIR_PREFIX}{id}.work"));
    let staged = t.dir.join(format!("{SNAPSHOT_DIR_PREFIX}{id}.tmp"));
    let done = t.dir.join(format!("{SNAPSHOT_DIR_PREFIX}{id}"));
    let shared = t.dir.join(SHARED_DIR);
    for d in [&work, &staged] {
        let _ = fs::remove_dir_all(d);
    }
    let mut moved_shared = Vec::new();
    let result = (|| {
        fs::create_dir(&work).map_err(|e| rocks_err("create", &work, e))?;
        fs::create_dir(&staged).map_err(|e| rocks_err("create", &staged, e))?;
        fs::create_dir_all(&shared).map_err(|e| rocks_err("create", &shared, e))?;
        let checkpoint = work.join("checkpoint");
        build_checkpoint(&work.join("db"), &checkpoint, entries)?;
        let mut handle = SnapshotHandle {
            table_id: t.table_id,
            partition_id: t.partition_id,
            bucket: t.bucket,
            snapshot_id: id,
            location: file_url(&done),
            shared: Vec::new(),
            private: Vec::new(),
            log_offset,
            row_count: Some(entries.len() as i64),
        };
        let mut names: Vec<_> = fs::read_dir(&checkpoint)
            .map_err(|e| rocks_err("list", &checkpoint, e))?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().to_string()))
            .collect::<std::io::Result<_>>()
            .map_err(|e| rocks_err("list", &checkpoint, e))?;
        names.sort();
        for name in names {
            let from = checkpoint.join(&name);
            let size = fs::metadata(&from)
                .map_err(|e| rocks_err("stat", &from, e))?
                .len();
            // Fluss names uploaded files by a random UUID and keeps the RocksDB name in the
            // handle's `local_path`.
            let remote_name = uuid::Uuid::new_v4().to_string();
            let is_sst = name.ends_with(".sst");
            let (to, final_path) = if is_sst {
                let to = shared.join(&remote_name);
                (to.clone(), to)
            } else {
                (staged.join(&remote_name), done.join(&remote_name))
            };
            fs::rename(&from, &to).map_err(|e| rocks_err("move", &from, e))?;
            let list = if is_sst {
                moved_shared.push(to);
                &mut handle.shared
            } else {
                &mut handle.private
            };
            list.push(SnapshotFile {
                path: file_url(&final_path),
                size,
                local_name: name,
            });
        }
        let meta = staged.join(METADATA_FILE);
        write_synced(&meta, &handle.to_json())?;
        crate::log::sync_dir(&shared);
        crate::log::sync_dir(&staged);
        fs::rename(&staged, &done).map_err(|e| rocks_err("rename", &staged, e))?;
        crate::log::sync_dir(t.dir);
        Ok(handle)
    })();
    let _ = fs::remove_dir_all(&work);
    if result.is_err() {
        let _ = fs::remove_dir_all(&staged);
        for f in moved_shared {
            let _ = fs::remove_file(f);
        }
    }
    result
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = fs::File::create(path).map_err(|e| rocks_err("create", path, e))?;
    f.write_all(bytes)
        .map_err(|e| rocks_err("write", path, e))?;
    f.sync_all().map_err(|e| rocks_err("fsync", path, e))
}

/// Puts `entries` into a new RocksDB at `db_dir`, flushes it and checkpoints it to
/// `checkpoint` (as Fluss's `Checkpoint.createCheckpoint`).
fn build_checkpoint(
    db_dir: &Path,
    checkpoint: &Path,
    entries: &[(Vec<u8>, Vec<u8>)],
) -> Result<()> {
    let mut table = rocksdb::BlockBasedOptions::default();
    table.set_format_version(5);
    table.set_checksum_type(rocksdb::ChecksumType::CRC32c);
    let mut options = rocksdb::Options::default();
    options.create_if_missing(true);
    options.set_block_based_table_factory(&table);
    options.set_compression_type(rocksdb::DBCompressionType::Lz4);
    // The state is written once and flushed: a WAL would only be copied into the checkpoint.
    let mut no_wal = rocksdb::WriteOptions::default();
    no_wal.disable_wal(true);
    let db = rocksdb::DB::open(&options, db_dir).map_err(|e| rocks_err("open", db_dir, e))?;
    for chunk in entries.chunks(BATCH_ENTRIES) {
        let mut batch = rocksdb::WriteBatch::default();
        for (k, v) in chunk {
            batch.put(k, v);
        }
        db.write_opt(batch, &no_wal)
            .map_err(|e| rocks_err("write to", db_dir, e))?;
    }
    db.flush().map_err(|e| rocks_err("flush", db_dir, e))?;
    rocksdb::checkpoint::Checkpoint::new(&db)
        .and_then(|c| c.create_checkpoint(checkpoint))
        .map_err(|e| rocks_err("checkpoint", checkpoint, e))
}
