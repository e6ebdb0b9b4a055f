//! Server configuration.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// When appended data is forced to disk before the write is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// `fsync` (fdatasync) every append before acking it. Safe against power loss.
    #[default]
    Always,
    /// Never fsync on the write path (data reaches the OS page cache before the ack, so a killed
    /// process loses nothing, but a machine crash may). Files are still synced on clean shutdown.
    Never,
}

/// Configuration of one embedded server.
#[derive(Clone)]
pub struct ServerConfig {
    /// Directory holding the catalog, log segments and KV state. Created when missing.
    pub data_dir: PathBuf,
    /// Host to bind and to advertise (default `127.0.0.1`).
    pub host: String,
    /// Port to bind (default 9123; 0 picks a free port).
    pub port: u16,
    /// Fsync policy of the write path.
    pub fsync: FsyncPolicy,
    /// A log segment rolls when appending would make it larger than this (default 1 GiB).
    pub segment_bytes: u64,
    /// A non-empty log segment rolls when it is older than this (default 7 days).
    pub segment_ms: i64,
    /// Bytes between two entries of the offset and time indexes (default 4096).
    pub index_interval_bytes: u32,
    /// How often expired segments (table.log.ttl) are looked for (default 5 minutes).
    pub ttl_check_interval: Duration,
    /// SASL/PLAIN users (user -> password). `None` = plaintext, no authentication.
    pub sasl_users: Option<BTreeMap<String, String>>,
    /// TLS on the listener (certificate chain and key); `None` = plain TCP.
    pub tls: Option<riverlet::rpc::TlsServerConfig>,
    /// Largest request frame accepted (default 100 MiB, as Fluss's `netty.server.max-request-size`).
    pub max_frame_size: usize,
    /// Requests of one connection served at once (default 32). While that many are in flight
    /// the connection's next frame is not read, so a client that pipelines without bound (or
    /// never reads its responses) is slowed by TCP backpressure instead of queueing unbounded
    /// work and responses on the server.
    pub max_in_flight_per_connection: usize,
    /// Bytes of KV write-ahead log after which a KV snapshot is written (default 64 MiB).
    pub kv_snapshot_wal_bytes: u64,
    /// Default bucket count of tables created without one (Fluss `default.bucket.number`, 1).
    pub default_bucket_number: i32,
    /// Serve only the APIs of Apache Fluss 0.9.x: no ScanKv (1061), which Fluss 1.0 added
    /// (default false). Lets tests cover the client's 0.9.x read paths.
    pub fluss_0_9_apis: bool,
    /// Every option given by its Fluss name ([`ServerConfig::set`]), as given.
    pub options: BTreeMap<String, String>,
    /// `remote.data.dir`: where rolled log segments are copied (a local path or `s3://bucket/prefix`).
    pub remote_data_dir: Option<String>,
    /// S3 settings of `remote.data.dir` (`s3.endpoint`, `s3.access-key`, ...).
    pub s3: riverlet::remote::S3Options,
    /// `table.log.tiered.local-segments`: rolled segments kept locally once copied (default 2).
    pub tiered_local_segments: usize,
    /// `remote.log.task-interval-duration`: how often rolled segments are copied (default 1 min).
    pub remote_log_task_interval: Duration,
    /// How often every primary-key bucket whose state changed gets a new KV snapshot (Fluss
    /// `kv.snapshot.interval`): the snapshots GetLatestKvSnapshots reports and read-optimized
    /// reads serve. Default [`DEFAULT_KV_SNAPSHOT_INTERVAL`].
    pub kv_snapshot_interval: Option<Duration>,
    /// `datalake.format`: the lake that tables with `table.datalake.enabled` are tiered to
    /// (`iceberg` or `paimon`; `None` = no lake, such tables are refused as Fluss does).
    pub datalake_format: Option<String>,
    /// The `datalake.iceberg.*` options without their prefix (`warehouse`, `uri`, `name`,
    /// `type`): the Iceberg catalog's properties, as Fluss passes them on.
    pub datalake_iceberg: BTreeMap<String, String>,
    /// The `datalake.paimon.*` options without their prefix (`metastore`, `warehouse`,
    /// `s3.*`): the Paimon catalog's options, as Fluss passes them on.
    pub datalake_paimon: BTreeMap<String, String>,
    /// `authorizer.enabled`: requests are checked against ACLs (default false: everyone may do
    /// everything, and the ACL APIs answer SECURITY_DISABLED_EXCEPTION).
    pub authorizer_enabled: bool,
    /// `super.users`: principals every check allows (e.g. `User:admin;User:ops`).
    pub super_users: Vec<riverlet::acl::Principal>,
    /// `coordinator.producer-offsets.ttl`: how long a producer-offsets registration lives when
    /// its request names no TTL (default 24 h, as Fluss).
    pub producer_offsets_ttl: Duration,
}

/// The options [`ServerConfig::set`] accepts, by their Apache Fluss names, with what they do.
pub const SERVER_OPTIONS: &[(&str, &str)] = &[
    (
        "remote.data.dir",
        "where rolled log segments are copied: a local path or s3://bucket/prefix",
    ),
    (
        "remote.log.task-interval-duration",
        "how often rolled segments are copied to remote.data.dir (default 1 min)",
    ),
    (
        "table.log.tiered.local-segments",
        "rolled segments kept locally after they were copied (default 2)",
    ),
    (
        "log.segment.file-size",
        "a log segment rolls when it would grow past this size (default 1024mb)",
    ),
    (
        "netty.server.max-request-size",
        "largest request frame a client may send (default 100mb); a larger one is refused and \
         its connection closed",
    ),
    (
        "log.index.interval-size",
        "bytes between two offset / time index entries (default 4kb)",
    ),
    (
        "default.bucket.number",
        "bucket count of tables created without one (default 1)",
    ),
    (
        "kv.snapshot.interval",
        "how often primary-key buckets get the KV snapshot read-optimized reads serve (off unless \
         set; Fluss's 10 min with the `kv-snapshot` feature, whose snapshots are RocksDB files)",
    ),
    (
        "datalake.format",
        "the lake tables with table.datalake.enabled are tiered to (iceberg or paimon)",
    ),
    (
        "datalake.iceberg.warehouse",
        "the Iceberg warehouse: a local directory (required with datalake.format and a sql \
         catalog; a rest catalog's warehouse name or location, optional)",
    ),
    (
        "datalake.iceberg.uri",
        "the SQL catalog's database (default sqlite:WAREHOUSE/catalog.db), or the REST \
         catalog's URI (required with type rest)",
    ),
    (
        "datalake.iceberg.name",
        "the Iceberg catalog's name (default fluss-iceberg-catalog)",
    ),
    (
        "datalake.iceberg.type",
        "the Iceberg catalog type: sql (default) or rest; a rest catalog takes its client \
         properties as datalake.iceberg.* (token, credential, oauth2-server-uri, scope, \
         header.NAME, ...)",
    ),
    (
        "datalake.paimon.warehouse",
        "the Paimon filesystem catalog's warehouse: a local directory, file:// or s3:// URL \
         (required with datalake.format paimon)",
    ),
    (
        "datalake.paimon.metastore",
        "the Paimon catalog type: filesystem (the default and the only one)",
    ),
    (
        "datalake.paimon.s3.*",
        "the S3 options of an s3:// Paimon warehouse, by Paimon's names (s3.endpoint, \
         s3.access-key, s3.secret-key, s3.region, s3.path-style-access)",
    ),
    (
        "authorizer.enabled",
        "check every request against ACLs (true/false, default false)",
    ),
    (
        "super.users",
        "principals allowed everything when authorizer.enabled, e.g. User:admin;User:ops",
    ),
    (
        "coordinator.producer-offsets.ttl",
        "how long producer offsets registered without a TTL are kept (default 24 h)",
    ),
    ("s3.endpoint", "S3 endpoint URL of an s3:// remote.data.dir"),
    ("s3.region", "S3 region (default us-east-1)"),
    ("s3.access-key", "S3 access key id"),
    ("s3.secret-key", "S3 secret access key"),
    (
        "s3.path.style.access",
        "address buckets by path (endpoint/bucket) rather than by host name (true/false)",
    ),
];

/// The REST catalog client properties `datalake.iceberg.<property>` takes (with
/// `datalake.iceberg.type = rest`), by the names Iceberg-Java's `RESTCatalog` and iceberg-rust's
/// REST catalog both read: authentication (`token`, `credential`, `oauth2-server-uri`, `scope`,
/// `audience`, `resource`), `prefix`, `disable-header-redaction`, extra HTTP headers
/// (`header.NAME`), and the FileIO keys of a Fluss configuration (`io-impl`, `s3.*`,
/// `client.*`), which readers receive in the table's properties.
const REST_CATALOG_PROPERTIES: [&str; 8] = [
    "token",
    "credential",
    "oauth2-server-uri",
    "scope",
    "audience",
    "resource",
    "prefix",
    "disable-header-redaction",
];

fn is_rest_catalog_property(p: &str) -> bool {
    REST_CATALOG_PROPERTIES.contains(&p)
        || p == "io-impl"
        || ["header.", "s3.", "client."]
            .iter()
            .any(|prefix| p.len() > prefix.len() && p.starts_with(prefix))
}

/// `kv.snapshot.interval` when it is not set. With the `kv-snapshot` feature, Fluss's default
/// (`ConfigOptions.KV_SNAPSHOT_INTERVAL`, 10 minutes): snapshots are then RocksDB files that
/// Fluss's clients open. Without it, off: the snapshot files are in Riverlet's own format, and
/// Fluss's Java clients, which open snapshot files as RocksDB, would fail on them where they
/// now replay the changelog from its start.
pub const DEFAULT_KV_SNAPSHOT_INTERVAL: Option<Duration> = if cfg!(feature = "kv-snapshot") {
    Some(Duration::from_secs(10 * 60))
} else {
    None
};

impl ServerConfig {
    /// A configuration with defaults for the given data directory.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        ServerConfig {
            data_dir: data_dir.into(),
            host: "127.0.0.1".to_string(),
            port: 9123,
            fsync: FsyncPolicy::Always,
            segment_bytes: 1024 * 1024 * 1024,
            segment_ms: 7 * 24 * 3600 * 1000,
            index_interval_bytes: 4096,
            ttl_check_interval: Duration::from_secs(300),
            sasl_users: None,
            tls: None,
            max_frame_size: 100 * 1024 * 1024,
            max_in_flight_per_connection: 32,
            kv_snapshot_wal_bytes: 64 * 1024 * 1024,
            default_bucket_number: 1,
            fluss_0_9_apis: false,
            options: BTreeMap::new(),
            remote_data_dir: None,
            s3: riverlet::remote::S3Options::default(),
            tiered_local_segments: 2,
            remote_log_task_interval: Duration::from_secs(60),
            kv_snapshot_interval: DEFAULT_KV_SNAPSHOT_INTERVAL,
            datalake_format: None,
            datalake_iceberg: BTreeMap::new(),
            datalake_paimon: BTreeMap::new(),
            authorizer_enabled: false,
            super_users: Vec::new(),
            producer_offsets_ttl: Duration::from_secs(24 * 60 * 60),
        }
    }

    /// Sets an option by its Apache Fluss name (see [`SERVER_OPTIONS`]); an unknown key or a
    /// bad value is an error naming it.
    pub fn set(&mut self, key: &str, value: &str) -> riverlet::Result<()> {
        let bad = |what: &str| {
            riverlet::Error::invalid(format!(
                "invalid value '{value}' for server option '{key}': expected {what}"
            ))
        };
        let size = || {
            riverlet::client::parse_size(value)
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("a memory size such as 1mb, 64kb or 4096"))
        };
        let v = value.trim();
        match key {
            "remote.data.dir" => {
                if v.is_empty() {
                    return Err(bad("a local path or s3://bucket/prefix"));
                }
                self.remote_data_dir = Some(v.to_string());
            }
            "remote.log.task-interval-duration" => {
                let ms = riverlet::metadata::table::parse_duration_ms(v)
                    .ok()
                    .filter(|ms| *ms > 0)
                    .ok_or_else(|| bad("a positive duration such as 1 min or 500ms"))?;
                self.remote_log_task_interval = Duration::from_millis(ms as u64);
            }
            "table.log.tiered.local-segments" => {
                self.tiered_local_segments = v
                    .parse::<usize>()
                    .map_err(|_| bad("a non-negative integer"))?;
            }
            "log.segment.file-size" => self.segment_bytes = size()? as u64,
            "netty.server.max-request-size" => {
                self.max_frame_size = Some(size()?)
                    .filter(|n| *n <= riverlet::rpc::frame::MAX_WIRE_FRAME_SIZE)
                    .ok_or_else(|| bad("a memory size of at most 2gb"))?
            }
            "log.index.interval-size" => {
                self.index_interval_bytes =
                    u32::try_from(size()?).map_err(|_| bad("a size below 4gb"))?
            }
            "default.bucket.number" => {
                self.default_bucket_number = v
                    .parse::<i32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad("a positive integer"))?
            }
            "kv.snapshot.interval" => {
                let ms = riverlet::metadata::table::parse_duration_ms(v)
                    .ok()
                    .filter(|ms| *ms > 0)
                    .ok_or_else(|| bad("a positive duration such as 10 min or 100ms"))?;
                self.kv_snapshot_interval = Some(Duration::from_millis(ms as u64));
            }
            "datalake.format" => {
                let f = v.to_ascii_lowercase();
                if f != "iceberg" && f != "paimon" {
                    return Err(bad(
                        "iceberg or paimon (the lake formats the embedded server tiers to)",
                    ));
                }
                self.datalake_format = Some(f);
            }
            "datalake.iceberg.type" => {
                let t = v.trim().to_ascii_lowercase();
                let t = match t.as_str() {
                    "sql" | "jdbc" => "sql",
                    "rest" => "rest",
                    _ => {
                        return Err(bad(
                            "sql (the SQL catalog; jdbc is taken as sql) or rest (an Iceberg \
                             REST catalog)",
                        ))
                    }
                };
                self.datalake_iceberg.insert("type".into(), t.into());
            }
            "datalake.iceberg.warehouse" | "datalake.iceberg.uri" | "datalake.iceberg.name" => {
                if v.is_empty() {
                    return Err(bad("a non-empty value"));
                }
                let k = key.trim_start_matches("datalake.iceberg.");
                self.datalake_iceberg.insert(k.into(), v.to_string());
            }
            // a REST catalog's client properties, passed to it as riverlet::lake::open_catalog
            // describes
            _ if key
                .strip_prefix("datalake.iceberg.")
                .is_some_and(is_rest_catalog_property) =>
            {
                let k = key.trim_start_matches("datalake.iceberg.");
                self.datalake_iceberg.insert(k.into(), value.to_string());
            }
            "datalake.paimon.metastore" => {
                let m = v.trim().to_ascii_lowercase();
                if m != "filesystem" {
                    return Err(bad(
                        "filesystem (the Paimon catalog the embedded server tiers to)",
                    ));
                }
                self.datalake_paimon.insert("metastore".into(), m);
            }
            "datalake.paimon.warehouse" => {
                if v.is_empty() {
                    return Err(bad("a non-empty value"));
                }
                self.datalake_paimon
                    .insert("warehouse".into(), v.to_string());
            }
            // the S3 options of the warehouse, by Paimon's names (riverlet::lake::open_paimon_catalog)
            _ if key
                .strip_prefix("datalake.paimon.s3.")
                .is_some_and(|k| !k.is_empty()) =>
            {
                let k = key.trim_start_matches("datalake.paimon.");
                self.datalake_paimon.insert(k.into(), value.to_string());
            }
            "authorizer.enabled" => {
                self.authorizer_enabled = match v.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad("true or false")),
                }
            }
            "super.users" => {
                self.super_users = riverlet::acl::Principal::parse_list(v)
                    .map_err(|e| bad(&format!("PrincipalType:name;... ({})", e.message())))?;
            }
            "coordinator.producer-offsets.ttl" => {
                let ms = riverlet::metadata::table::parse_duration_ms(v)
                    .ok()
                    .filter(|ms| *ms > 0)
                    .ok_or_else(|| bad("a positive duration such as 24 h or 500ms"))?;
                self.producer_offsets_ttl = Duration::from_millis(ms as u64);
            }
            "s3.endpoint" => self.s3.endpoint = Some(v.to_string()),
            "s3.region" => self.s3.region = Some(v.to_string()),
            "s3.access-key" => self.s3.access_key = Some(v.to_string()),
            "s3.secret-key" => self.s3.secret_key = Some(value.to_string()),
            "s3.path.style.access" => {
                self.s3.path_style = match v.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad("true or false")),
                }
            }
            _ => {
                let known: Vec<&str> = SERVER_OPTIONS.iter().map(|(k, _)| *k).collect();
                return Err(riverlet::Error::invalid(format!(
                    "unknown server option '{key}'; known options: {}",
                    known.join(", ")
                )));
            }
        }
        self.options.insert(key.to_string(), value.to_string());
        Ok(())
    }

    /// [`ServerConfig::set`] for each `(key, value)`.
    pub fn with_options<K: AsRef<str>, V: AsRef<str>>(
        mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> riverlet::Result<Self> {
        for (k, v) in options {
            self.set(k.as_ref(), v.as_ref())?;
        }
        Ok(self)
    }

    /// Sets the port (0 = a free one).
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Serves TLS with the PEM certificate chain `cert_file` and key `key_file` (an error names
    /// the file that cannot be used).
    pub fn with_tls(
        mut self,
        cert_file: impl AsRef<std::path::Path>,
        key_file: impl AsRef<std::path::Path>,
    ) -> riverlet::Result<Self> {
        self.tls = Some(riverlet::rpc::TlsServerConfig::from_pem_files(
            cert_file, key_file,
        )?);
        Ok(self)
    }

    /// Adds a SASL/PLAIN user (enables SASL).
    pub fn with_sasl_user(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.sasl_users
            .get_or_insert_with(BTreeMap::new)
            .insert(user.into(), password.into());
        self
    }
}

// By hand: the SASL passwords must never reach a log line through `{:?}`.
impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let users: Option<Vec<&String>> = self.sasl_users.as_ref().map(|u| u.keys().collect());
        // a REST catalog's token, credential, secret keys and headers (Authorization...)
        let iceberg = riverlet::metadata::table::redacted(&self.datalake_iceberg);
        let paimon = riverlet::metadata::table::redacted(&self.datalake_paimon);
        f.debug_struct("ServerConfig")
            .field("data_dir", &self.data_dir)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("fsync", &self.fsync)
            .field("segment_bytes", &self.segment_bytes)
            .field("segment_ms", &self.segment_ms)
            .field("index_interval_bytes", &self.index_interval_bytes)
            .field("ttl_check_interval", &self.ttl_check_interval)
            .field("sasl_users (passwords hidden)", &users)
            .field("tls", &self.tls)
            .field("max_frame_size", &self.max_frame_size)
            .field(
                "max_in_flight_per_connection",
                &self.max_in_flight_per_connection,
            )
            .field("kv_snapshot_wal_bytes", &self.kv_snapshot_wal_bytes)
            .field("default_bucket_number", &self.default_bucket_number)
            .field("fluss_0_9_apis", &self.fluss_0_9_apis)
            .field("remote_data_dir", &self.remote_data_dir)
            .field("s3", &self.s3)
            .field("tiered_local_segments", &self.tiered_local_segments)
            .field("remote_log_task_interval", &self.remote_log_task_interval)
            .field("datalake_format", &self.datalake_format)
            .field("datalake_iceberg (secrets hidden)", &iceberg)
            .field("datalake_paimon (secrets hidden)", &paimon)
            .field("authorizer_enabled", &self.authorizer_enabled)
            .field("super_users", &self.super_users)
            .field("producer_offsets_ttl", &self.producer_offsets_ttl)
            .finish()
    }
}
