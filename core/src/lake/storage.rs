//! The storage the iceberg crate reads and writes lake files through: local files (`/x`,
//! `file:/x`, `file:///x`) and S3 (`s3://`, `s3a://`, `s3n://`), chosen by each path's scheme.
//!
//! iceberg 0.10.1 ships only local and in-memory storage and takes any other as a
//! [`StorageFactory`]; this one puts S3 on `object_store` (which the remote log tiering already
//! uses, so it adds no dependency). The S3 settings are the FileIO properties Iceberg names
//! (parsed by the iceberg crate's own [`S3Config`]): `s3.endpoint`, `s3.region` /
//! `client.region`, `s3.path-style-access`, `s3.access-key-id`, `s3.secret-access-key`,
//! `s3.session-token`, `s3.allow-anonymous`, `s3.sse.type` (`s3`, `kms`, `custom`) with
//! `s3.sse.key`. What a property leaves unset comes from the environment as AWS SDKs take it
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, and the
//! instance or container credentials). A REST catalog's properties reach it merged with the
//! `config` the catalog hands out with each table (vended credentials), later ones winning.
//! Assuming a role (`client.assume-role.*`) is refused with an `Unsupported` error naming the
//! property.
//!
//! Errors name the operation, the `s3://bucket/key` and the endpoint, never a secret; the
//! secret key and session token are hidden from `Debug` too.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt as _;
use iceberg::io::{
    FileMetadata, FileRead, FileWrite, InputFile, LocalFsStorage, OutputFile, S3Config, Storage,
    StorageConfig, StorageFactory,
};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _};
use serde::{Deserialize, Serialize};

/// The [`StorageFactory`] Riverlet opens every Iceberg catalog with: local files and S3.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct LakeStorageFactory;

#[typetag::serde]
impl StorageFactory for LakeStorageFactory {
    fn build(&self, config: &StorageConfig) -> iceberg::Result<Arc<dyn Storage>> {
        Ok(Arc::new(LakeStorage::new(config)?))
    }
}

/// The property keys of an assumed role, which this storage does not do.
const ASSUME_ROLE_KEYS: [&str; 3] = [
    iceberg::io::S3_ASSUME_ROLE_ARN,
    iceberg::io::S3_ASSUME_ROLE_EXTERNAL_ID,
    iceberg::io::S3_ASSUME_ROLE_SESSION_NAME,
];

/// Local files and S3 buckets, by each path's scheme. The S3 client of a bucket is made on
/// its first use and kept.
#[derive(Clone, Serialize, Deserialize)]
pub struct LakeStorage {
    s3: S3Config,
    #[serde(skip)]
    buckets: Arc<Mutex<HashMap<String, Arc<dyn ObjectStore>>>>,
}

// By hand: the secret key, session token and SSE-C key must never reach a log line.
impl std::fmt::Debug for LakeStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |v: &Option<String>| v.as_ref().map(|_| "<hidden>");
        f.debug_struct("LakeStorage")
            .field("endpoint", &self.s3.endpoint)
            .field("region", &self.s3.region)
            .field("path_style_access", &!self.s3.enable_virtual_host_style)
            .field("access_key_id", &self.s3.access_key_id)
            .field("secret_access_key", &hidden(&self.s3.secret_access_key))
            .field("session_token", &hidden(&self.s3.session_token))
            .field("allow_anonymous", &self.s3.allow_anonymous)
            .finish_non_exhaustive()
    }
}

/// Where a path lives.
enum Location<'a> {
    Local,
    S3 { bucket: &'a str, key: &'a str },
}

fn storage_err(kind: iceberg::ErrorKind, message: impl Into<String>) -> iceberg::Error {
    iceberg::Error::new(kind, message)
}

impl LakeStorage {
    /// The storage of a FileIO's properties (see the module docs for the ones read).
    pub fn new(config: &StorageConfig) -> iceberg::Result<LakeStorage> {
        if let Some(k) = ASSUME_ROLE_KEYS.iter().find(|k| config.get(k).is_some()) {
            return Err(storage_err(
                iceberg::ErrorKind::FeatureUnsupported,
                format!("Iceberg FileIO property {k}: Riverlet's S3 storage does not assume roles"),
            ));
        }
        Ok(LakeStorage {
            s3: S3Config::try_from(config)?,
            buckets: Arc::default(),
        })
    }

    fn locate(path: &str) -> iceberg::Result<Location<'_>> {
        let Some((scheme, rest)) = path.split_once("://") else {
            return Ok(Location::Local);
        };
        match scheme {
            "file" => Ok(Location::Local),
            "s3" | "s3a" | "s3n" => {
                let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
                if bucket.is_empty() {
                    return Err(storage_err(
                        iceberg::ErrorKind::DataInvalid,
                        format!("'{path}' names no S3 bucket"),
                    ));
                }
                Ok(Location::S3 { bucket, key })
            }
            other => Err(storage_err(
                iceberg::ErrorKind::FeatureUnsupported,
                format!(
                    "'{path}': Riverlet reads and writes Iceberg files on local disk and S3 \
                     (s3://, s3a://), not {other}://"
                ),
            )),
        }
    }

    /// The endpoint a bucket is reached at, for messages.
    fn endpoint(&self, bucket: &str) -> String {
        match &self.s3.endpoint {
            Some(e) => e.clone(),
            None => format!(
                "https://{bucket}.s3.{}.amazonaws.com",
                self.s3.region.as_deref().unwrap_or("us-east-1")
            ),
        }
    }

    /// The S3 client of `bucket`.
    fn bucket(&self, bucket: &str) -> iceberg::Result<Arc<dyn ObjectStore>> {
        let mut g = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = g.get(bucket) {
            return Ok(s.clone());
        }
        crate::rpc::install_default_crypto();
        let c = &self.s3;
        let mut b = object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_virtual_hosted_style_request(c.enable_virtual_host_style)
            .with_retry(object_store::RetryConfig {
                max_retries: 3,
                retry_timeout: Duration::from_secs(30),
                ..Default::default()
            });
        if let Some(r) = &c.region {
            b = b.with_region(r);
        }
        if let Some(e) = &c.endpoint {
            let e = e.trim_end_matches('/');
            // Iceberg's endpoint is the service's; object_store wants the bucket's own when
            // addressing buckets by host name
            let e = match (c.enable_virtual_host_style, e.split_once("://")) {
                (true, Some((scheme, host))) => format!("{scheme}://{bucket}.{host}"),
                _ => e.to_string(),
            };
            b = b.with_allow_http(e.starts_with("http://")).with_endpoint(e);
        }
        if let Some(k) = &c.access_key_id {
            b = b.with_access_key_id(k);
        }
        if let Some(k) = &c.secret_access_key {
            b = b.with_secret_access_key(k);
        }
        if let Some(t) = &c.session_token {
            b = b.with_token(t);
        }
        if c.allow_anonymous {
            b = b.with_skip_signature(true);
        }
        match (
            c.server_side_encryption.as_deref(),
            &c.server_side_encryption_aws_kms_key_id,
        ) {
            (Some("aws:kms"), Some(key)) => b = b.with_sse_kms_encryption(key),
            (Some(sse), _) => {
                if let Ok(k) = "aws_server_side_encryption".parse() {
                    b = b.with_config(k, sse);
                }
            }
            (None, _) => {}
        }
        if let (Some(_), Some(key)) = (
            &c.server_side_encryption_customer_algorithm,
            &c.server_side_encryption_customer_key,
        ) {
            b = b.with_ssec_encryption(key);
        }
        let store: Arc<dyn ObjectStore> = Arc::new(b.build().map_err(|e| {
            storage_err(
                iceberg::ErrorKind::DataInvalid,
                format!(
                    "S3 bucket {bucket} at {}: the client could not be configured: {e}",
                    self.endpoint(bucket)
                ),
            )
            .with_source(e)
        })?);
        g.insert(bucket.to_string(), store.clone());
        Ok(store)
    }

    /// An S3 failure: the operation, the object and the endpoint, with the object_store error
    /// as its source (for [`crate::lake::error_kind`]).
    fn s3_err(&self, op: &str, bucket: &str, key: &str, e: object_store::Error) -> iceberg::Error {
        let kind = match &e {
            object_store::Error::NotFound { .. } => iceberg::ErrorKind::DataInvalid,
            object_store::Error::NotSupported { .. }
            | object_store::Error::NotImplemented { .. } => iceberg::ErrorKind::FeatureUnsupported,
            _ => iceberg::ErrorKind::Unexpected,
        };
        // the object_store error (what S3 answered) follows as the source
        let message = format!(
            "S3 {op} s3://{bucket}/{key} (endpoint {})",
            self.endpoint(bucket)
        );
        storage_err(kind, message).with_source(e)
    }

    fn s3_object(&self, path: &str) -> iceberg::Result<Option<S3Object>> {
        match Self::locate(path)? {
            Location::Local => Ok(None),
            Location::S3 { bucket, key } => Ok(Some(S3Object {
                store: self.bucket(bucket)?,
                path: ObjectPath::from(key),
                storage: self.clone(),
                bucket: bucket.to_string(),
                key: key.to_string(),
            })),
        }
    }
}

/// One object of a bucket.
struct S3Object {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    storage: LakeStorage,
    bucket: String,
    key: String,
}

impl S3Object {
    fn err(&self, op: &str, e: object_store::Error) -> iceberg::Error {
        self.storage.s3_err(op, &self.bucket, &self.key, e)
    }
}

#[async_trait]
#[typetag::serde]
impl Storage for LakeStorage {
    async fn exists(&self, path: &str) -> iceberg::Result<bool> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().exists(path).await,
            Some(o) => match o.store.head(&o.path).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(o.err("head", e)),
            },
        }
    }

    async fn metadata(&self, path: &str) -> iceberg::Result<FileMetadata> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().metadata(path).await,
            Some(o) => {
                let meta = o.store.head(&o.path).await.map_err(|e| o.err("head", e))?;
                Ok(FileMetadata { size: meta.size })
            }
        }
    }

    async fn read(&self, path: &str) -> iceberg::Result<Bytes> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().read(path).await,
            Some(o) => {
                let got = o.store.get(&o.path).await.map_err(|e| o.err("get", e))?;
                got.bytes().await.map_err(|e| o.err("get", e))
            }
        }
    }

    async fn reader(&self, path: &str) -> iceberg::Result<Box<dyn FileRead>> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().reader(path).await,
            Some(o) => Ok(Box::new(S3Read(o))),
        }
    }

    async fn write(&self, path: &str, bs: Bytes) -> iceberg::Result<()> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().write(path, bs).await,
            Some(o) => {
                o.store
                    .put(&o.path, bs.into())
                    .await
                    .map_err(|e| o.err("put", e))?;
                Ok(())
            }
        }
    }

    async fn writer(&self, path: &str) -> iceberg::Result<Box<dyn FileWrite>> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().writer(path).await,
            Some(o) => {
                let w = object_store::buffered::BufWriter::new(o.store.clone(), o.path.clone());
                Ok(Box::new(S3Write { object: o, w }))
            }
        }
    }

    async fn delete(&self, path: &str) -> iceberg::Result<()> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().delete(path).await,
            Some(o) => match o.store.delete(&o.path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(o.err("delete", e)),
            },
        }
    }

    async fn delete_prefix(&self, path: &str) -> iceberg::Result<()> {
        match self.s3_object(path)? {
            None => LocalFsStorage::new().delete_prefix(path).await,
            Some(o) => {
                let prefix = o.path.clone();
                let listed = o.store.list(Some(&prefix)).map(|m| m.map(|m| m.location));
                let mut gone = o.store.delete_stream(listed.boxed());
                while let Some(r) = gone.next().await {
                    match r {
                        Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(o.err("delete under", e)),
                    }
                }
                Ok(())
            }
        }
    }

    async fn delete_stream(&self, mut paths: BoxStream<'static, String>) -> iceberg::Result<()> {
        while let Some(path) = paths.next().await {
            self.delete(&path).await?;
        }
        Ok(())
    }

    fn new_input(&self, path: &str) -> iceberg::Result<InputFile> {
        Self::locate(path)?;
        Ok(InputFile::new(Arc::new(self.clone()), path.to_string()))
    }

    fn new_output(&self, path: &str) -> iceberg::Result<OutputFile> {
        Self::locate(path)?;
        Ok(OutputFile::new(Arc::new(self.clone()), path.to_string()))
    }
}

/// Range reads of one S3 object.
struct S3Read(S3Object);

#[async_trait]
impl FileRead for S3Read {
    async fn read(&self, range: Range<u64>) -> iceberg::Result<Bytes> {
        let o = &self.0;
        o.store
            .get_range(&o.path, range)
            .await
            .map_err(|e| o.err("get range of", e))
    }
}

/// A write of one S3 object: buffered, and a multipart upload once it outgrows one part.
struct S3Write {
    object: S3Object,
    w: object_store::buffered::BufWriter,
}

#[async_trait]
impl FileWrite for S3Write {
    async fn write(&mut self, bs: Bytes) -> iceberg::Result<()> {
        let S3Write { object, w } = self;
        w.put(bs).await.map_err(|e| object.err("upload", e))
    }

    async fn close(&mut self) -> iceberg::Result<()> {
        use tokio::io::AsyncWriteExt as _;
        let S3Write { object, w } = self;
        w.shutdown().await.map_err(|e| {
            let e = match e.downcast::<object_store::Error>() {
                Ok(e) => e,
                Err(e) => object_store::Error::Generic {
                    store: "S3",
                    source: Box::new(e),
                },
            };
            object.err("upload", e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_secrets() {
        let config = StorageConfig::new()
            .with_prop("s3.endpoint", "http://127.0.0.1:9000")
            .with_prop("s3.access-key-id", "AKID")
            .with_prop("s3.secret-access-key", "very-secret-key")
            .with_prop("s3.session-token", "very-secret-token")
            .with_prop("s3.path-style-access", "true")
            .with_prop("client.region", "eu-west-1");
        let s = LakeStorage::new(&config).unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert!(
            shown.contains("AKID") && shown.contains("eu-west-1"),
            "{shown}"
        );
        assert!(shown.contains("path_style_access: true"), "{shown}");
    }

    #[test]
    fn other_schemes_and_assumed_roles_are_unsupported() {
        let s = LakeStorage::new(&StorageConfig::new()).unwrap();
        let e = s.new_input("gs://b/x.parquet").unwrap_err();
        assert_eq!(e.kind(), iceberg::ErrorKind::FeatureUnsupported);
        assert!(e.to_string().contains("gs://"), "{e}");
        assert!(s.new_input("s3:///x").is_err());
        let config = StorageConfig::new().with_prop("client.assume-role.arn", "arn:aws:iam::1:r");
        let e = LakeStorage::new(&config).unwrap_err();
        assert!(e.to_string().contains("client.assume-role.arn"), "{e}");
    }
}
