//! Apache Fluss's layout of a bucket's KV snapshots and the `_METADATA` handle that describes
//! one (Fluss 0.9.1: `FlussPaths.remoteKvSnapshotDir` / `remoteKvSharedDir`,
//! `CompletedSnapshotJsonSerde`). In the bucket's snapshot directory (Fluss's remote KV tablet
//! directory):
//!
//! - `snap-{id}/`: the snapshot's private RocksDB files (MANIFEST, CURRENT, OPTIONS, ...) and
//!   `_METADATA`, the JSON handle naming every file: its path, size and local RocksDB name;
//! - `shared/{uuid}`: its SST files, under random names (Fluss shares them between
//!   incremental snapshots; here each snapshot writes its own).
//!
//! Only the JSON is handled here, so a server built without the `kv-snapshot` feature still
//! recovers and serves the RocksDB snapshots a server built with it wrote.

use std::path::{Path, PathBuf};

use riverlet::error::codes;
use riverlet::{Error, Result};
use serde_json::{json, Value};

/// Fluss's `REMOTE_KV_SNAPSHOT_DIR_PREFIX`.
pub const SNAPSHOT_DIR_PREFIX: &str = "snap-";
/// Fluss's `REMOTE_KV_SNAPSHOT_SHARED_DIR`.
pub const SHARED_DIR: &str = "shared";
/// Fluss's `CompletedSnapshot.SNAPSHOT_METADATA_FILE_NAME`.
pub const METADATA_FILE: &str = "_METADATA";
/// `CompletedSnapshotJsonSerde.VERSION`.
const VERSION: i64 = 1;

/// One file of a snapshot: where it is (a `file://` URL) and the name RocksDB knows it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// The file's path, as `_METADATA` and GetKvSnapshotMetadata give it.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its name in the RocksDB directory a reader rebuilds (`000012.sst`, `CURRENT`, ...).
    pub local_name: String,
}

/// What `_METADATA` says about one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotHandle {
    /// The bucket: table id, partition id, bucket.
    pub table_id: i64,
    /// Partition id of a partitioned table's bucket.
    pub partition_id: Option<i64>,
    /// Bucket number.
    pub bucket: i32,
    /// Snapshot id.
    pub snapshot_id: i64,
    /// The `snap-{id}` directory, as a `file://` URL.
    pub location: String,
    /// The SST files (in `shared/`).
    pub shared: Vec<SnapshotFile>,
    /// Every other file (in `snap-{id}/`).
    pub private: Vec<SnapshotFile>,
    /// The log offset the state covers.
    pub log_offset: i64,
    /// Rows in the snapshot.
    pub row_count: Option<i64>,
}

/// The `file://` URL of a local absolute path.
pub fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The local path of a `file:` URL (`file:///x` or `file:/x`), if it is one.
pub fn local_path(url: &str) -> Option<PathBuf> {
    let p = url
        .strip_prefix("file://")
        .or_else(|| url.strip_prefix("file:"))?;
    p.starts_with('/').then(|| PathBuf::from(p))
}

/// The id of a `snap-{id}` directory name.
pub fn snapshot_dir_id(name: &str) -> Option<i64> {
    name.strip_prefix(SNAPSHOT_DIR_PREFIX)?
        .parse::<i64>()
        .ok()
        .filter(|id| *id >= 0)
}

impl SnapshotHandle {
    /// Every file, private ones first: the order Fluss's GetKvSnapshotMetadata lists them in.
    pub fn files(&self) -> impl Iterator<Item = &SnapshotFile> {
        self.private.iter().chain(self.shared.iter())
    }

    /// The `_METADATA` document (`CompletedSnapshotJsonSerde.serialize`'s fields and order).
    pub fn to_json(&self) -> Vec<u8> {
        let files = |fs: &[SnapshotFile]| {
            fs.iter()
                .map(|f| {
                    json!({
                        "kv_file_handle": { "path": f.path, "size": f.size },
                        "local_path": f.local_name,
                    })
                })
                .collect::<Vec<_>>()
        };
        let incremental: u64 = self.files().map(|f| f.size).sum();
        let mut doc = serde_json::Map::new();
        doc.insert("version".into(), json!(VERSION));
        doc.insert("table_id".into(), json!(self.table_id));
        if let Some(p) = self.partition_id {
            doc.insert("partition_id".into(), json!(p));
        }
        doc.insert("bucket_id".into(), json!(self.bucket));
        doc.insert("snapshot_id".into(), json!(self.snapshot_id));
        doc.insert("snapshot_location".into(), json!(self.location));
        doc.insert(
            "kv_snapshot_handle".into(),
            json!({
                "shared_file_handles": files(&self.shared),
                "private_file_handles": files(&self.private),
                // Every file is new in each snapshot here (no SST is shared between them).
                "snapshot_incremental_size": incremental,
            }),
        );
        doc.insert("log_offset".into(), json!(self.log_offset));
        if let Some(n) = self.row_count {
            doc.insert("row_count".into(), json!(n));
        }
        serde_json::to_vec(&Value::Object(doc)).unwrap_or_default()
    }

    /// Parses a `_METADATA` document; `file` names it in the error.
    pub fn from_json(bytes: &[u8], file: &Path) -> Result<SnapshotHandle> {
        let bad = |why: String| {
            Error::from_fluss(
                codes::KV_STORAGE_EXCEPTION,
                format!("kv snapshot handle {}: {why}", file.display()),
            )
        };
        let doc: Value =
            serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
        let int = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_i64)
                .ok_or_else(|| bad(format!("no integer '{key}'")))
        };
        let text = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad(format!("no string '{key}'")))
        };
        let version = int(&doc, "version")?;
        if version != VERSION {
            return Err(bad(format!(
                "version {version}, this server reads version {VERSION}"
            )));
        }
        let handle = doc
            .get("kv_snapshot_handle")
            .ok_or_else(|| bad("no 'kv_snapshot_handle'".into()))?;
        let files = |key: &str| -> Result<Vec<SnapshotFile>> {
            let list = handle
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| bad(format!("no array '{key}'")))?;
            list.iter()
                .map(|f| {
                    let h = f
                        .get("kv_file_handle")
                        .ok_or_else(|| bad(format!("a file of '{key}' has no 'kv_file_handle'")))?;
                    let size = int(h, "size")?;
                    Ok(SnapshotFile {
                        path: text(h, "path")?,
                        size: u64::try_from(size)
                            .map_err(|_| bad(format!("a file of '{key}' has size {size}")))?,
                        local_name: text(f, "local_path")?,
                    })
                })
                .collect()
        };
        let bucket = int(&doc, "bucket_id")?;
        Ok(SnapshotHandle {
            table_id: int(&doc, "table_id")?,
            partition_id: doc.get("partition_id").and_then(Value::as_i64),
            bucket: i32::try_from(bucket).map_err(|_| bad(format!("bucket_id {bucket}")))?,
            snapshot_id: int(&doc, "snapshot_id")?,
            location: text(&doc, "snapshot_location")?,
            shared: files("shared_file_handles")?,
            private: files("private_file_handles")?,
            log_offset: int(&doc, "log_offset")?,
            row_count: doc.get("row_count").and_then(Value::as_i64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle() -> SnapshotHandle {
        SnapshotHandle {
            table_id: 7,
            partition_id: Some(3),
            bucket: 1,
            snapshot_id: 4,
            location: "file:///d/snap-4".into(),
            shared: vec![SnapshotFile {
                path: "file:///d/shared/6f1c".into(),
                size: 1200,
                local_name: "000009.sst".into(),
            }],
            private: vec![SnapshotFile {
                path: "file:///d/snap-4/5e2a".into(),
                size: 16,
                local_name: "CURRENT".into(),
            }],
            log_offset: 42,
            row_count: Some(3),
        }
    }

    #[test]
    fn the_handle_has_flusss_fields_and_reads_back() {
        let h = handle();
        let bytes = h.to_json();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        // The field names CompletedSnapshotJsonSerde (Fluss 0.9.1) reads.
        assert_eq!(doc["kv_snapshot_handle"]["snapshot_incremental_size"], 1216);
        assert_eq!(
            doc["kv_snapshot_handle"]["shared_file_handles"][0]["kv_file_handle"]["path"],
            "file:///d/shared/6f1c"
        );
        assert_eq!(
            doc["kv_snapshot_handle"]["private_file_handles"][0]["local_path"],
            "CURRENT"
        );
        assert_eq!(doc["partition_id"], 3);
        let back = SnapshotHandle::from_json(&bytes, Path::new("/d/snap-4/_METADATA")).unwrap();
        assert_eq!(back, h);
        let names: Vec<_> = back.files().map(|f| f.local_name.as_str()).collect();
        assert_eq!(names, ["CURRENT", "000009.sst"]);
    }

    #[test]
    fn a_bad_handle_is_an_error_naming_the_file() {
        let e = SnapshotHandle::from_json(b"{\"version\":1}", Path::new("/d/snap-1/_METADATA"))
            .unwrap_err();
        assert!(e.message().contains("/d/snap-1/_METADATA"), "{e}");
        let mut doc: Value = serde_json::from_slice(&handle().to_json()).unwrap();
        doc["version"] = json!(2);
        let e = SnapshotHandle::from_json(&serde_json::to_vec(&doc).unwrap(), Path::new("/m"))
            .unwrap_err();
        assert!(e.message().contains("version 2"), "{e}");
    }

    #[test]
    fn names_and_urls() {
        assert_eq!(snapshot_dir_id("snap-12"), Some(12));
        assert_eq!(snapshot_dir_id("snap-x"), None);
        assert_eq!(snapshot_dir_id("snap--1"), None);
        assert_eq!(snapshot_dir_id("12"), None);
        assert_eq!(local_path("file:///a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(local_path("file:/a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(local_path("s3://a/b"), None);
        assert_eq!(file_url(Path::new("/a/b")), "file:///a/b");
    }
}
