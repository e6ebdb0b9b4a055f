//! KV snapshots on the read side: the latest snapshot of each bucket (GetLatestKvSnapshots) and
//! the state one holds (GetKvSnapshotMetadata, then its files). Riverlet reads a snapshot whose
//! files are riverlet-server's snapshot file (`record::kv_snapshot`, named by a `file:` URL);
//! Apache Fluss's snapshots, and riverlet-server's when it is built with its `kv-snapshot`
//! feature, are RocksDB checkpoints, which it reads when built with the `kv-snapshot` feature
//! (`rocks`, RocksDB opened read-only on a local copy of the files).

#[cfg(feature = "kv-snapshot")]
mod rocks;

use std::collections::HashMap;

use arrow_array::RecordBatch;

use super::plan::{table_name, BucketRead};
use crate::client::Table;
use crate::proto::{GetKvSnapshotMetadataRequest, GetLatestKvSnapshotsRequest, PbTablePath};
use crate::record::kv_snapshot::{decode_kv_snapshot, is_kv_snapshot, KV_SNAPSHOT_FILE_NAME};
use crate::{Error, Result};

/// Rows per batch of a snapshot's state.
const OUTPUT_ROWS: usize = 8192;

/// One bucket's latest KV snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SnapshotRef {
    pub id: i64,
    /// The log offset it covers: changes before it are in it.
    pub log_offset: i64,
}

/// The latest snapshot of every bucket of the table (or of one partition) that has one.
pub(crate) async fn latest_snapshots(
    table: &Table,
    partition_name: Option<&str>,
) -> Result<HashMap<i32, SnapshotRef>> {
    let req = GetLatestKvSnapshotsRequest {
        table_path: PbTablePath::from(&table.info.table_path),
        partition_name: partition_name.map(str::to_string),
    };
    let resp = table.conn.request_coordinator(&req, true).await?;
    Ok(resp
        .latest_snapshots
        .into_iter()
        .filter_map(|s| match (s.snapshot_id, s.log_offset) {
            (Some(id), Some(log_offset)) => Some((s.bucket_id, SnapshotRef { id, log_offset })),
            _ => None,
        })
        .collect())
}

/// The state a snapshot holds (full table schema), or why Riverlet cannot read it (`Err`
/// inside: its files are not a riverlet-server snapshot file, e.g. Fluss's RocksDB files, or
/// that file is not on this machine).
pub(crate) async fn read_snapshot(
    table: &Table,
    b: &BucketRead,
    snap: SnapshotRef,
) -> Result<std::result::Result<Vec<RecordBatch>, String>> {
    let info = &table.info;
    let req = GetKvSnapshotMetadataRequest {
        table_id: info.table_id,
        partition_id: b.partition_id,
        bucket_id: b.bucket,
        snapshot_id: snap.id,
    };
    let meta = table.conn.request_coordinator(&req, true).await?;
    let file = match meta.snapshot_files.as_slice() {
        [f] if f.local_file_name == KV_SNAPSHOT_FILE_NAME => f,
        #[cfg(feature = "kv-snapshot")]
        files => return read_rocksdb_snapshot(table, b, snap, meta.log_offset, files).await,
        #[cfg(not(feature = "kv-snapshot"))]
        files => {
            return Ok(Err(format!(
                "its {} file(s) ({}) are a RocksDB snapshot (Apache Fluss's, or riverlet-server's \
                 built with `kv-snapshot`), which Riverlet reads only when built with the \
                 `kv-snapshot` feature",
                files.len(),
                files
                    .iter()
                    .take(3)
                    .map(|f| f.local_file_name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let Some(path) = file
        .remote_path
        .strip_prefix("file://")
        .or_else(|| file.remote_path.strip_prefix("file:"))
    else {
        return Ok(Err(format!(
            "its file is at '{}', which Riverlet reads only on a local file system (file:)",
            file.remote_path
        )));
    };
    let bytes = match tokio::fs::read(path).await {
        Ok(b) => b,
        Err(e) => {
            return Ok(Err(format!(
                "its file '{}' cannot be read from this machine: {e}",
                file.remote_path
            )))
        }
    };
    if !is_kv_snapshot(&bytes) {
        return Ok(Err(format!(
            "its file '{}' is not a riverlet-server snapshot file",
            file.remote_path
        )));
    }
    let context = |e: Error| {
        Error::corrupt(format!(
            "KV snapshot {} of {} of table '{}' ({}): {}",
            snap.id,
            b.describe(),
            table_name(table),
            file.remote_path,
            e.message()
        ))
    };
    let (log_offset, values) = decode_kv_snapshot(&bytes).map_err(context)?;
    if log_offset != snap.log_offset || meta.log_offset != snap.log_offset {
        return Err(context(Error::corrupt(format!(
            "the snapshot was announced at log offset {} but its file/metadata say {log_offset}/{}",
            snap.log_offset, meta.log_offset
        ))));
    }
    let mut out = Vec::new();
    for chunk in values.chunks(OUTPUT_ROWS) {
        out.push(super::pk_view::values_to_batch(table, chunk)?);
    }
    Ok(Ok(out))
}

/// The state of an Apache Fluss KV snapshot (a RocksDB checkpoint), full table schema.
#[cfg(feature = "kv-snapshot")]
async fn read_rocksdb_snapshot(
    table: &Table,
    b: &BucketRead,
    snap: SnapshotRef,
    meta_log_offset: i64,
    files: &[crate::proto::PbRemotePathAndLocalFile],
) -> Result<std::result::Result<Vec<RecordBatch>, String>> {
    let what = format!(
        "KV snapshot {} of {} of table '{}'",
        snap.id,
        b.describe(),
        table_name(table)
    );
    if meta_log_offset != snap.log_offset {
        return Err(Error::corrupt(format!(
            "{what}: announced at log offset {} but its metadata says {meta_log_offset}",
            snap.log_offset
        )));
    }
    let values = match rocks::read_values(table, &what, files).await? {
        Ok(v) => v,
        Err(why) => return Ok(Err(why)),
    };
    let mut out = Vec::new();
    for chunk in values.chunks(OUTPUT_ROWS) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        out.push(
            super::pk_view::values_to_batch(table, &refs)
                .map_err(|e| e.context(format!("{what}: decoding its values")))?,
        );
    }
    Ok(Ok(out))
}
