//! Apache Fluss's KV snapshots (feature `kv-snapshot`): a bucket's snapshot is a RocksDB
//! checkpoint in remote storage. As Fluss's `KvSnapshotBatchScanner` does, its files (the
//! shared SSTs and the private MANIFEST/CURRENT/OPTIONS that GetKvSnapshotMetadata names, each
//! with the local RocksDB name it must get) are copied into a fresh local directory, RocksDB
//! opens that directory READ-ONLY with default options and the default column family, and the
//! values are read in key order (`SnapshotFilesReader`). A value is Fluss's KV value, a schema
//! id and a row, which the caller decodes as ScanKv's values are decoded.
//!
//! The files are read through [`crate::remote::RemoteDir`], as tiered log segments are: a
//! local `remote.data.dir` (`/x`, `file:/x`) or S3 (credentials from GetFileSystemSecurityToken);
//! any other scheme is [`Unsupported`](crate::ErrorKind::Unsupported), naming the file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::client::Table;
use crate::proto::PbRemotePathAndLocalFile;
use crate::{Error, ErrorKind, Result};

/// One snapshot's local copy: removed (with everything in it) when dropped.
struct LocalCopy(PathBuf);

impl LocalCopy {
    fn create() -> Result<LocalCopy> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "riverlet-kv-snapshot-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("creating the local directory '{}': {e}", dir.display()),
            )
        })?;
        Ok(LocalCopy(dir))
    }
}

impl Drop for LocalCopy {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!(dir = %self.0.display(), "could not remove a KV snapshot copy: {e}");
        }
    }
}

/// The remote directory and file name of `remote_path` (`dir/name`).
fn split_remote(remote_path: &str) -> Option<(&str, &str)> {
    let (dir, name) = remote_path.trim_end_matches('/').rsplit_once('/')?;
    if name.is_empty() || name == "." || name == ".." {
        return None;
    }
    // A file right under the root (`/x`, `file:/x`) is no snapshot file.
    if dir.is_empty() || dir.ends_with(':') {
        return None;
    }
    Some((dir, name))
}

/// The local path of `remote_path` when it is on this machine's file system (`/x`, `file:/x`,
/// `file:///x`), as Fluss names files of a local `remote.data.dir`.
fn local_file(remote_path: &str) -> Option<&str> {
    let p = remote_path
        .strip_prefix("file://")
        .or_else(|| remote_path.strip_prefix("file:"))
        .unwrap_or(remote_path);
    (p.starts_with('/') && !p.contains("://")).then_some(p)
}

/// Whether `remote_path` is in storage Riverlet reads (a local path or S3).
fn readable_scheme(remote_path: &str) -> bool {
    match remote_path.split_once("://") {
        None => true,
        Some((scheme, _)) => matches!(scheme, "file" | "s3" | "s3a"),
    }
}

/// A local RocksDB file name from GetKvSnapshotMetadata, checked to stay inside the copy.
fn local_name(name: &str) -> Option<&str> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.contains('\\')
        && !name.contains('\0');
    ok.then_some(name)
}

/// The values (schema id + row bytes, in key order) of the RocksDB snapshot whose files are
/// `files`. `what` names the snapshot (id, bucket, table) in every error. `Ok(Err(why))` when
/// the files are in storage Riverlet does not read (the caller may rebuild the state from the
/// log instead); `Err` when reading them fails.
pub(super) async fn read_values(
    table: &Table,
    what: &str,
    files: &[PbRemotePathAndLocalFile],
) -> Result<std::result::Result<Vec<Vec<u8>>, String>> {
    if files.is_empty() {
        return Err(Error::corrupt(format!(
            "{what}: GetKvSnapshotMetadata names no files"
        )));
    }
    if let Some(f) = files.iter().find(|f| !readable_scheme(&f.remote_path)) {
        return Ok(Err(format!(
            "its file '{}' is in storage Riverlet does not read (only local paths and s3://)",
            f.remote_path
        )));
    }
    let copy = LocalCopy::create().map_err(|e| e.context(what))?;
    for f in files {
        let name = local_name(&f.local_file_name).ok_or_else(|| {
            Error::corrupt(format!(
                "{what}: file '{}' has the local name '{}', which is not a plain file name",
                f.remote_path, f.local_file_name
            ))
        })?;
        let (dir, remote_name) = split_remote(&f.remote_path).ok_or_else(|| {
            Error::corrupt(format!(
                "{what}: '{}' is not a path of a file in a directory",
                f.remote_path
            ))
        })?;
        let local = copy.0.join(name);
        let io_err = |e: std::io::Error| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorKind::NotFound
            } else {
                ErrorKind::Io
            };
            Error::new(
                kind,
                format!(
                    "{what}: copying '{}' to '{}': {e}",
                    f.remote_path,
                    local.display()
                ),
            )
        };
        if let Some(path) = local_file(&f.remote_path) {
            // A local remote.data.dir: a plain file copy (no whole file in memory).
            tokio::fs::copy(path, &local).await.map_err(io_err)?;
        } else {
            let context = |e: Error| e.context(format!("{what}: file '{}'", f.remote_path));
            let remote = table.conn.remote_dir(dir).await.map_err(context)?;
            let bytes = remote.get(remote_name).await.map_err(context)?;
            tokio::fs::write(&local, &bytes).await.map_err(io_err)?;
        }
    }
    let what_owned = what.to_string();
    let values = tokio::task::spawn_blocking(move || {
        let values = read_db(&copy.0, &what_owned);
        drop(copy);
        values
    })
    .await
    .map_err(|e| Error::internal(format!("{what}: the RocksDB reader task failed: {e}")))??;
    Ok(Ok(values))
}

/// Opens the RocksDB checkpoint in `dir` read-only and returns its values in key order.
fn read_db(dir: &Path, what: &str) -> Result<Vec<Vec<u8>>> {
    let corrupt = |step: &str, e: rocksdb::Error| {
        Error::corrupt(format!(
            "{what}: RocksDB {step} of its files (copied to '{}'): {e}",
            dir.display()
        ))
    };
    let options = rocksdb::Options::default();
    let db = rocksdb::DB::open_for_read_only(&options, dir, false)
        .map_err(|e| corrupt("open (read-only)", e))?;
    let mut values = Vec::new();
    for kv in db.iterator(rocksdb::IteratorMode::Start) {
        let (_, value) = kv.map_err(|e| corrupt("iteration", e))?;
        values.push(value.into_vec());
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths_split_into_directory_and_name() {
        assert_eq!(
            split_remote("file:/r/kv/d/t-1/0/shared/abc"),
            Some(("file:/r/kv/d/t-1/0/shared", "abc"))
        );
        assert_eq!(
            split_remote("/r/kv/d/t-1/0/snap-2/MANIFEST-000004"),
            Some(("/r/kv/d/t-1/0/snap-2", "MANIFEST-000004"))
        );
        assert_eq!(
            split_remote("s3://b/p/kv/0/shared/x"),
            Some(("s3://b/p/kv/0/shared", "x"))
        );
        assert_eq!(split_remote("CURRENT"), None);
        assert_eq!(split_remote("/CURRENT"), None);
        assert_eq!(split_remote("file:/CURRENT"), None);
        assert_eq!(split_remote("/x/.."), None);
    }

    #[test]
    fn local_names_stay_inside_the_copy() {
        assert_eq!(local_name("000012.sst"), Some("000012.sst"));
        assert_eq!(local_name("CURRENT"), Some("CURRENT"));
        for bad in ["", ".", "..", "../x", "a/b", "a\\b"] {
            assert_eq!(local_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn local_files_are_copied_directly() {
        assert_eq!(local_file("/r/kv/0/shared/x"), Some("/r/kv/0/shared/x"));
        assert_eq!(local_file("file:/r/x"), Some("/r/x"));
        assert_eq!(local_file("file:///r/x"), Some("/r/x"));
        assert_eq!(local_file("s3://b/r/x"), None);
        assert_eq!(local_file("relative/x"), None);
    }

    #[test]
    fn schemes_riverlet_reads() {
        assert!(readable_scheme("/r/x"));
        assert!(readable_scheme("file:/r/x"));
        assert!(readable_scheme("file:///r/x"));
        assert!(readable_scheme("s3://b/x"));
        assert!(!readable_scheme("hdfs://nn/r/x"));
        assert!(!readable_scheme("oss://b/x"));
    }

    #[test]
    fn a_directory_that_is_no_rocksdb_is_a_corrupt_error_naming_it() {
        let copy = LocalCopy::create().unwrap();
        std::fs::write(copy.0.join("CURRENT"), b"MANIFEST-000001\n").unwrap();
        let e = read_db(&copy.0, "KV snapshot 3 of bucket 0 of table 'd.t'").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(
            e.message()
                .contains("KV snapshot 3 of bucket 0 of table 'd.t'"),
            "{e}"
        );
        let dir = copy.0.clone();
        drop(copy);
        assert!(!dir.exists());
    }
}
