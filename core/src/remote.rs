//! Remote log storage: where tiered log segments live (a local directory or an `s3://` bucket),
//! Fluss's remote layout and manifest, and the byte access shared by the embedded server (which
//! copies rolled segments there) and the client (which reads them back).
//!
//! Layout (Fluss's `FlussPaths`): `{remote.data.dir}/log/{db}/{table}-{tableId}[/{partition}-p{partitionId}]/{bucket}/`
//! holds one directory per segment, `{segment uuid}/{20-digit base offset}.log` (a byte copy of
//! the local segment: concatenated log batches) with its `.index` and `.timeindex`, and
//! `metadata/{uuid}.manifest` (the bucket's segment list as JSON).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::{Error, ErrorKind, Result};

/// S3 connection settings, by Fluss's option names (`s3.endpoint`, `s3.access-key`, ...).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct S3Options {
    /// `s3.endpoint`: the endpoint URL (`http://host:port` for an S3-compatible server).
    pub endpoint: Option<String>,
    /// `s3.access-key`.
    pub access_key: Option<String>,
    /// `s3.secret-key`.
    pub secret_key: Option<String>,
    /// A session token (from `GetFileSystemSecurityToken`).
    pub session_token: Option<String>,
    /// `s3.region` (default `us-east-1`).
    pub region: Option<String>,
    /// `s3.path.style.access`: address buckets as `endpoint/bucket` instead of `bucket.endpoint`.
    pub path_style: bool,
}

// By hand: the secret key and session token must never reach a log line.
impl std::fmt::Debug for S3Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Options")
            .field("endpoint", &self.endpoint)
            .field("access_key", &self.access_key)
            .field("secret_key", &self.secret_key.as_ref().map(|_| "<hidden>"))
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<hidden>"),
            )
            .field("region", &self.region)
            .field("path_style", &self.path_style)
            .finish()
    }
}

/// Whether `dir` names an S3 location (`s3://` or `s3a://`).
pub fn is_s3(dir: &str) -> bool {
    dir.starts_with("s3://") || dir.starts_with("s3a://")
}

fn local_path(dir: &str) -> &str {
    dir.strip_prefix("file://")
        .or_else(|| dir.strip_prefix("file:"))
        .unwrap_or(dir)
}

/// One remote directory and the store that holds it.
#[derive(Clone)]
pub struct RemoteDir {
    store: Arc<dyn ObjectStore>,
    /// The directory inside the store.
    root: ObjectPath,
    /// The directory as Fluss writes it in responses (`s3://bucket/x` or `/x`).
    uri: String,
}

impl std::fmt::Debug for RemoteDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteDir").field("uri", &self.uri).finish()
    }
}

fn store_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Network, format!("remote storage: {what}: {e}"))
}

impl RemoteDir {
    /// Opens `dir` as [`RemoteDir::open`] does, first creating it when it is a missing local
    /// directory (the server's `remote.data.dir`).
    pub fn create(dir: &str, s3: &S3Options) -> Result<RemoteDir> {
        if !is_s3(dir) {
            let path = local_path(dir);
            std::fs::create_dir_all(path)
                .map_err(|e| Error::invalid(format!("remote directory '{dir}': {e}")))?;
        }
        Self::open(dir, s3)
    }

    /// Opens `dir`: `s3://bucket/prefix` (with `s3`'s settings), or an existing local path
    /// (`/x`, `file:/x`, `file:///x`).
    pub fn open(dir: &str, s3: &S3Options) -> Result<RemoteDir> {
        let dir = dir.trim_end_matches('/');
        if is_s3(dir) {
            let rest = dir.split_once("://").map_or("", |(_, r)| r);
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(Error::invalid(format!(
                    "remote directory '{dir}' names no S3 bucket"
                )));
            }
            crate::rpc::install_default_crypto();
            let mut b = object_store::aws::AmazonS3Builder::new()
                .with_bucket_name(bucket)
                .with_region(s3.region.clone().unwrap_or_else(|| "us-east-1".into()))
                .with_virtual_hosted_style_request(!s3.path_style);
            if let Some(e) = &s3.endpoint {
                b = b.with_endpoint(e).with_allow_http(e.starts_with("http://"));
            }
            if let Some(k) = &s3.access_key {
                b = b.with_access_key_id(k);
            }
            if let Some(k) = &s3.secret_key {
                b = b.with_secret_access_key(k);
            }
            if let Some(t) = &s3.session_token {
                b = b.with_token(t);
            }
            let store = b
                .build()
                .map_err(|e| Error::invalid(format!("remote directory '{dir}': {e}")))?;
            return Ok(RemoteDir {
                store: Arc::new(store),
                root: ObjectPath::from(prefix),
                uri: dir.to_string(),
            });
        }
        let path = local_path(dir);
        if path.contains("://") {
            return Err(Error::invalid(format!(
                "remote directory '{dir}': only local paths and s3:// are supported"
            )));
        }
        let abs = std::path::absolute(path)
            .map_err(|e| Error::invalid(format!("remote directory '{dir}': {e}")))?;
        // Automatic cleanup removes directories a delete leaves empty, as S3 has none to leave.
        let store = object_store::local::LocalFileSystem::new_with_prefix(&abs)
            .map_err(|e| Error::invalid(format!("remote directory '{dir}': {e}")))?
            .with_automatic_cleanup(true);
        Ok(RemoteDir {
            store: Arc::new(store),
            root: ObjectPath::default(),
            uri: abs.to_string_lossy().trim_end_matches('/').to_string(),
        })
    }

    /// The same store at `self/rel`.
    pub fn child(&self, rel: &str) -> RemoteDir {
        RemoteDir {
            store: self.store.clone(),
            root: self.path(rel),
            uri: format!("{}/{}", self.uri, rel.trim_matches('/')),
        }
    }

    /// The directory as Fluss names it in responses.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    fn path(&self, rel: &str) -> ObjectPath {
        rel.split('/')
            .filter(|p| !p.is_empty())
            .fold(self.root.clone(), |p, part| p.clone().join(part))
    }

    /// Writes `rel` (replacing it).
    pub async fn put(&self, rel: &str, data: Bytes) -> Result<()> {
        self.store
            .put(&self.path(rel), PutPayload::from(data))
            .await
            .map_err(|e| store_err(&format!("write {}/{rel}", self.uri), e))?;
        Ok(())
    }

    /// Uploads the local file `local` as `rel`. A file larger than [`UPLOAD_PART_BYTES`] goes
    /// in parts (a multipart upload on S3), so copying a segment of any size holds a few parts
    /// in memory, not the segment. Returns the bytes uploaded.
    pub async fn put_file(&self, rel: &str, local: &std::path::Path) -> Result<u64> {
        use tokio::io::AsyncReadExt;
        let io_err =
            |e: std::io::Error| Error::from(e).context(format!("read {}", local.display()));
        let size = tokio::fs::metadata(local).await.map_err(io_err)?.len();
        if size <= UPLOAD_PART_BYTES as u64 {
            let data = tokio::fs::read(local).await.map_err(io_err)?;
            self.put(rel, Bytes::from(data)).await?;
            return Ok(size);
        }
        let what = || format!("upload {}/{rel}", self.uri);
        let mut file = tokio::fs::File::open(local).await.map_err(io_err)?;
        let upload = self
            .store
            .put_multipart(&self.path(rel))
            .await
            .map_err(|e| store_err(&what(), e))?;
        let mut parts =
            object_store::WriteMultipart::new_with_chunk_size(upload, UPLOAD_PART_BYTES);
        let mut buf = vec![0u8; 1 << 20];
        let mut sent = 0u64;
        loop {
            let n = match file.read(&mut buf).await {
                Ok(n) => n,
                Err(e) => {
                    let _ = parts.abort().await;
                    return Err(io_err(e));
                }
            };
            if n == 0 {
                break;
            }
            // At most two parts in flight: memory stays bounded whatever the file size.
            if let Err(e) = parts.wait_for_capacity(2).await {
                return Err(store_err(&what(), e));
            }
            parts.write(&buf[..n]);
            sent += n as u64;
        }
        parts.finish().await.map_err(|e| store_err(&what(), e))?;
        Ok(sent)
    }

    /// Reads bytes `range` of `rel` (clamped to the object's end).
    pub async fn get_range(&self, rel: &str, range: Range<u64>) -> Result<Bytes> {
        self.store
            .get_range(&self.path(rel), range)
            .await
            .map_err(|e| store_err(&format!("read {}/{rel}", self.uri), e))
    }

    /// Reads the whole of `rel`.
    pub async fn get(&self, rel: &str) -> Result<Bytes> {
        let r = self
            .store
            .get(&self.path(rel))
            .await
            .map_err(|e| store_err(&format!("read {}/{rel}", self.uri), e))?;
        r.bytes()
            .await
            .map_err(|e| store_err(&format!("read {}/{rel}", self.uri), e))
    }

    /// Deletes `rel` (a missing object is not an error).
    pub async fn delete(&self, rel: &str) -> Result<()> {
        match self.store.delete(&self.path(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_err(&format!("delete {}/{rel}", self.uri), e)),
        }
    }

    /// Deletes every object under `rel` (a table's or partition's remote directory); returns
    /// how many were deleted. Each object is tried; the first failure is returned at the end.
    pub async fn delete_all(&self, rel: &str) -> Result<usize> {
        let prefix = self.path(rel);
        let mut listing = self.store.list(Some(&prefix));
        let mut paths = Vec::new();
        while let Some(item) = std::future::poll_fn(|cx| listing.as_mut().poll_next(cx)).await {
            match item {
                Ok(meta) => paths.push(meta.location),
                Err(object_store::Error::NotFound { .. }) => break,
                Err(e) => return Err(store_err(&format!("list {}/{rel}", self.uri), e)),
            }
        }
        let mut first_error = None;
        let mut deleted = 0;
        for p in paths {
            match self.store.delete(&p).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => deleted += 1,
                Err(e) => {
                    first_error.get_or_insert_with(|| store_err(&format!("delete {p}"), e));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(deleted),
        }
    }
}

/// The part size of [`RemoteDir::put_file`]'s multipart uploads (S3 needs at least 5 MiB for
/// every part but the last).
pub const UPLOAD_PART_BYTES: usize = 8 << 20;

/// Fluss's remote directory of a table's log (every bucket and partition under it), relative
/// to `{remote.data.dir}`: `log/{db}/{table}-{tableId}`.
pub fn log_table_rel_dir(database: &str, table: &str, table_id: i64) -> String {
    format!("log/{database}/{table}-{table_id}")
}

/// Fluss's remote directory of one bucket's log, relative to `{remote.data.dir}`:
/// `log/{db}/{table}-{tableId}[/{partition}-p{partitionId}]/{bucket}`.
pub fn log_tablet_rel_dir(
    database: &str,
    table: &str,
    table_id: i64,
    partition: Option<(&str, i64)>,
    bucket: i32,
) -> String {
    match partition {
        Some(p) => format!(
            "{}/{bucket}",
            log_partition_rel_dir(database, table, table_id, p)
        ),
        None => format!("{}/{bucket}", log_table_rel_dir(database, table, table_id)),
    }
}

/// Fluss's remote directory of one partition's log (every bucket of it), relative to
/// `{remote.data.dir}`: `log/{db}/{table}-{tableId}/{partition}-p{partitionId}`.
pub fn log_partition_rel_dir(
    database: &str,
    table: &str,
    table_id: i64,
    (name, id): (&str, i64),
) -> String {
    format!(
        "{}/{name}-p{id}",
        log_table_rel_dir(database, table, table_id)
    )
}

/// The `.log` file of a remote segment, relative to its bucket's remote directory.
pub fn segment_log_file(segment_id: &str, base_offset: i64) -> String {
    format!("{segment_id}/{base_offset:020}.log")
}

/// Credentials in a `GetFileSystemSecurityToken` token (Fluss's `CredentialsJsonSerde`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TokenCredentials {
    /// The format version (1).
    #[serde(default)]
    pub version: i32,
    /// `access_key_id`.
    pub access_key_id: Option<String>,
    /// `access_key_secret`.
    pub access_key_secret: Option<String>,
    /// `security_token`.
    pub security_token: Option<String>,
}

/// The `addition_info` key of a token carrying the S3 endpoint (Hadoop S3A's name).
pub const TOKEN_ENDPOINT_KEY: &str = "fs.s3a.endpoint";
/// The `addition_info` key of a token carrying the S3 region.
pub const TOKEN_REGION_KEY: &str = "fs.s3a.region";
/// The `addition_info` key of a token carrying path-style access.
pub const TOKEN_PATH_STYLE_KEY: &str = "fs.s3a.path.style.access";

/// S3 settings from a `GetFileSystemSecurityToken` answer (token JSON plus addition infos).
pub fn s3_options_from_token(token: &[u8], infos: &[(String, String)]) -> Result<S3Options> {
    let mut o = S3Options::default();
    if !token.is_empty() {
        let c: TokenCredentials = serde_json::from_slice(token).map_err(|e| {
            Error::corrupt(format!(
                "file system security token is not Fluss's JSON: {e}"
            ))
        })?;
        o.access_key = c.access_key_id;
        o.secret_key = c.access_key_secret;
        o.session_token = c.security_token.filter(|t| !t.is_empty());
    }
    for (k, v) in infos {
        match k.as_str() {
            TOKEN_ENDPOINT_KEY => o.endpoint = Some(v.clone()),
            TOKEN_REGION_KEY => o.region = Some(v.clone()),
            TOKEN_PATH_STYLE_KEY => o.path_style = v.eq_ignore_ascii_case("true"),
            _ => {}
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_follows_fluss_paths() {
        assert_eq!(
            log_tablet_rel_dir("fluss", "trades", 7, None, 2),
            "log/fluss/trades-7/2"
        );
        assert_eq!(
            log_tablet_rel_dir("fluss", "trades", 7, Some(("2026", 3)), 0),
            "log/fluss/trades-7/2026-p3/0"
        );
        assert_eq!(segment_log_file("u", 42), "u/00000000000000000042.log");
    }

    #[test]
    fn token_credentials_parse() {
        let t =
            br#"{"version":1,"access_key_id":"a","access_key_secret":"s","security_token":null}"#;
        let o =
            s3_options_from_token(t, &[(TOKEN_ENDPOINT_KEY.into(), "http://h:1".into())]).unwrap();
        assert_eq!(o.access_key.as_deref(), Some("a"));
        assert_eq!(o.secret_key.as_deref(), Some("s"));
        assert_eq!(o.session_token, None);
        assert_eq!(o.endpoint.as_deref(), Some("http://h:1"));
        assert!(s3_options_from_token(b"nope", &[]).is_err());
    }
}
