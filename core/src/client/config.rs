//! Client settings: bootstrap servers, timeouts, SASL, retries, the writer settings and the
//! lake catalog options a lake read adds to a table's (its secrets, which table info omits).

use std::collections::BTreeMap;
use std::time::Duration;

use super::writer_config::{NoKeyAssigner, WriterConfig};
use crate::rpc::{ConnectionConfig, SaslConfig, TlsClientConfig};
use crate::{Error, Result};

/// Everything a [`super::Connection`] needs.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `host:port[,host:port...]`: servers asked for the cluster's metadata.
    pub bootstrap_servers: String,
    /// Deadline of one TCP connect plus handshake (`client.connect-timeout`). 10 s where
    /// Fluss's Java client waits 120 s: each attempt is retried (`client.retries`) with backoff,
    /// so an unreachable address fails in well under a minute instead of hanging a notebook.
    pub connect_timeout: Duration,
    /// Deadline of every request (`client.request-timeout`, 30 s as in Fluss).
    pub request_timeout: Duration,
    /// SASL/PLAIN credentials; `None` = plaintext.
    pub sasl: Option<SaslConfig>,
    /// TLS around every connection (`client.security.protocol` SSL or SASL_SSL); `None` =
    /// plain TCP.
    pub tls: Option<TlsClientConfig>,
    /// Largest response frame accepted, in bytes.
    pub max_frame_size: usize,
    /// Writer batching, memory, acks and retries.
    pub writer: WriterConfig,
    /// How often bootstrap, metadata and read-only admin requests are retried on network errors.
    pub retries: u32,
    /// First wait between retries; it doubles on each retry up to `max_retry_backoff`.
    pub retry_backoff: Duration,
    /// Longest wait between retries.
    pub max_retry_backoff: Duration,
    /// Lake catalog options by Fluss's catalog names (`paimon.s3.access-key`, ...), which lake
    /// reads add to the table info's `table.datalake.<format>.*` (see [`LakeCatalogOptions`]).
    pub lake_catalog: LakeCatalogOptions,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            bootstrap_servers: "localhost:9123".to_string(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            sasl: None,
            tls: None,
            max_frame_size: i32::MAX as usize,
            writer: WriterConfig::default(),
            retries: 3,
            retry_backoff: Duration::from_millis(100),
            max_retry_backoff: Duration::from_secs(2),
            lake_catalog: LakeCatalogOptions::default(),
        }
    }
}

/// The lake catalog options a client is given, as Fluss's Flink catalog takes them: keys
/// `<format>.<catalog option>` (`paimon.s3.access-key`, `paimon.s3.secret-key`,
/// `iceberg.s3.secret-access-key`, `iceberg.jdbc.password`...). A cluster hands readers its lake
/// catalog's options in each lake-enabled table's info as `table.datalake.<format>.*`, but drops
/// every one whose key contains `key`, `secret` or `password` (Fluss's
/// `MetadataManager.removeSensitiveTableOptions`), so the credentials of an S3 warehouse must
/// come from the reader's own configuration: Fluss's Flink catalog adds its `<format>.*`
/// options to the table's, its own winning (`LakeFlinkCatalog.getLakeCatalog`), and a lake read
/// here does the same ([`Self::of_format`]).
///
/// `Debug` shows the keys and hides the values of secret-looking ones.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct LakeCatalogOptions(BTreeMap<String, String>);

impl LakeCatalogOptions {
    /// The key prefixes of lake catalog options: Fluss's `DataLakeFormat` values, each followed
    /// by a dot (Fluss's `FlinkCatalogFactory` takes every option starting with one).
    pub const PREFIXES: [&'static str; 3] = ["paimon.", "iceberg.", "lance."];

    /// Whether `key` is a lake catalog option (starts with one of [`Self::PREFIXES`]).
    pub fn is_lake_option(key: &str) -> bool {
        Self::PREFIXES.iter().any(|p| key.starts_with(p))
    }

    /// Sets one option; a key without a [`Self::PREFIXES`] prefix, or with nothing after it,
    /// is an `InvalidArgument` error naming the key.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> Result<()> {
        let key = key.into();
        let rest = Self::PREFIXES.iter().find_map(|p| key.strip_prefix(p));
        if rest.is_none_or(|r| r.trim().is_empty()) {
            crate::bail_invalid!(
                "lake catalog option '{key}' must be '<format>.<catalog option>' with format \
                 paimon, iceberg or lance (e.g. paimon.s3.access-key)"
            );
        }
        self.0.insert(key, value.into());
        Ok(())
    }

    /// The options of lake format `format` (`paimon`, `iceberg`) without the `<format>.`
    /// prefix: the catalog options a read of that format adds to the table's.
    pub fn of_format(&self, format: &str) -> BTreeMap<String, String> {
        let prefix = format!("{format}.");
        self.0
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_string(), v.clone())))
            .collect()
    }

    /// Whether no option is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the value of `key` must not be shown: the table-property rule
    /// ([`crate::metadata::table::is_secret_property`]: tokens, credentials, secrets,
    /// passwords, headers) and Fluss's (any key containing `key`, such as `s3.access-key`).
    fn is_hidden(key: &str) -> bool {
        crate::metadata::table::is_secret_property(key) || key.to_ascii_lowercase().contains("key")
    }
}

// By hand: the values are catalog credentials, which must never reach a log line.
impl std::fmt::Debug for LakeCatalogOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| {
                let shown = if Self::is_hidden(k) {
                    "<hidden>"
                } else {
                    v.as_str()
                };
                (k, shown)
            }))
            .finish()
    }
}

impl ClientConfig {
    /// Defaults with the given bootstrap servers.
    pub fn new(bootstrap_servers: impl Into<String>) -> Self {
        ClientConfig {
            bootstrap_servers: bootstrap_servers.into(),
            ..Default::default()
        }
    }

    /// Sets SASL/PLAIN credentials.
    pub fn with_sasl_plain(
        mut self,
        username: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.sasl = Some(SaslConfig {
            username: username.into(),
            password: password.into(),
        });
        self
    }

    /// Sets a lake catalog option (`paimon.s3.access-key`, ...; see [`LakeCatalogOptions`]).
    pub fn with_lake_option(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self> {
        self.lake_catalog.set(key, value)?;
        Ok(self)
    }

    /// Connects over TLS, trusting the CA certificates of the PEM file `ca_file`.
    pub fn with_tls_ca_file(mut self, ca_file: impl AsRef<std::path::Path>) -> Result<Self> {
        self.tls = Some(TlsClientConfig::from_ca_file(ca_file, None)?);
        Ok(self)
    }

    /// The bootstrap list split into `host:port` entries, with a clear error when it is empty
    /// or an entry has no port.
    pub fn bootstrap_list(&self) -> Result<Vec<String>> {
        let list: Vec<String> = self
            .bootstrap_servers
            .split(',')
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| s.strip_prefix("FLUSS://").unwrap_or(s).to_string())
            .collect();
        if list.is_empty() {
            crate::bail_invalid!("bootstrap_servers is empty; expected 'host:port[,host:port...]'");
        }
        for entry in &list {
            let port = entry.rsplit_once(':').map(|(_, p)| p);
            if port.and_then(|p| p.parse::<u16>().ok()).is_none() {
                crate::bail_invalid!(
                    "bootstrap server '{entry}' has no valid port; expected 'host:port'"
                );
            }
        }
        Ok(list)
    }

    /// The per-connection settings handed to [`crate::rpc::ServerConnection::connect`].
    pub fn connection_config(&self) -> ConnectionConfig {
        ConnectionConfig {
            connect_timeout: self.connect_timeout,
            request_timeout: self.request_timeout,
            max_frame_size: self.max_frame_size,
            sasl: self.sasl.clone(),
            tls: self.tls.clone(),
            ..ConnectionConfig::default()
        }
    }

    /// Builds a config from Fluss's option names (what every binding passes as a string map;
    /// the one place option names are read): `bootstrap.servers`, `client.connect-timeout`,
    /// `client.request-timeout`, `client.security.protocol` (PLAINTEXT, SASL, and Riverlet's SSL
    /// and SASL_SSL for TLS with `client.security.ssl.ca-file` and optionally
    /// `client.security.ssl.server-name`),
    /// `client.security.sasl.mechanism` (PLAIN), `client.security.sasl.username`,
    /// `client.security.sasl.password`, `client.security.sasl.jaas.config` (a PlainLoginModule
    /// line with `username="..." password="..."`), `client.writer.buffer.memory-size`,
    /// `client.writer.batch-size`, `client.writer.batch-timeout`, `client.writer.acks`,
    /// `client.writer.retries`, `client.writer.enable-idempotence`,
    /// `client.writer.bucket.no-key-assigner`, `client.writer.request-max-size`,
    /// `client.writer.dynamic-create-partition.enabled`, and Riverlet's `client.retries`,
    /// `client.retry-backoff`; and the lake catalog options `paimon.*`, `iceberg.*`, `lance.*`
    /// (Fluss's Flink catalog options: [`LakeCatalogOptions`]). The other client options of Fluss
    /// ([`FLUSS_OPTIONS_WITHOUT_EFFECT`]) are accepted, so a Fluss configuration works
    /// unchanged, and have no effect. Unknown keys are an error naming the key. The README's
    /// "Client options" table lists every option with Riverlet's and Fluss's default.
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self> {
        let mut c = ClientConfig::default();
        let mut protocol = None;
        let (mut user, mut pass) = (None, None);
        let (mut ca_file, mut server_name) = (None, None);
        for (key, value) in props {
            let v = value.trim();
            let bad = |what: &str| {
                Error::invalid(format!(
                    "invalid value '{value}' for '{key}': expected {what}"
                ))
            };
            match key.as_str() {
                "bootstrap.servers" => c.bootstrap_servers = v.to_string(),
                "client.connect-timeout" => {
                    c.connect_timeout = parse_duration(v).ok_or_else(|| bad("a duration"))?
                }
                "client.request-timeout" => {
                    c.request_timeout = parse_duration(v).ok_or_else(|| bad("a duration"))?
                }
                "client.retries" => c.retries = v.parse().map_err(|_| bad("an integer"))?,
                "client.retry-backoff" => {
                    c.retry_backoff = parse_duration(v).ok_or_else(|| bad("a duration"))?
                }
                "client.security.protocol" => protocol = Some(v.to_ascii_uppercase()),
                "client.security.sasl.mechanism" => {
                    if !v.eq_ignore_ascii_case("PLAIN") {
                        return Err(Error::unsupported(format!(
                            "SASL mechanism '{v}' is not supported; only PLAIN is"
                        )));
                    }
                }
                "client.security.sasl.username" => user = Some(v.to_string()),
                "client.security.ssl.ca-file" => ca_file = Some(v.to_string()),
                "client.security.ssl.server-name" => server_name = Some(v.to_string()),
                "client.security.sasl.password" => pass = Some(value.to_string()),
                "client.security.sasl.jaas.config" => {
                    let (u, p) = jaas_plain_credentials(value).ok_or_else(|| {
                        Error::invalid(format!(
                            "'{key}' has no username=\"...\" and password=\"...\" (a \
                             PlainLoginModule line is expected)"
                        ))
                    })?;
                    user = user.or(Some(u));
                    pass = pass.or(Some(p));
                }
                "client.writer.buffer.memory-size" => {
                    c.writer.buffer_memory = parse_size(v).ok_or_else(|| bad("a size"))?
                }
                "client.writer.batch-size" => {
                    c.writer.batch_size = parse_size(v).ok_or_else(|| bad("a size"))?
                }
                "client.writer.request-max-size" => {
                    c.writer.request_max_size = parse_size(v).ok_or_else(|| bad("a size"))?
                }
                "client.writer.batch-timeout" => {
                    c.writer.linger = parse_duration(v).ok_or_else(|| bad("a duration"))?
                }
                "client.writer.acks" => {
                    c.writer.acks = match v.to_ascii_lowercase().as_str() {
                        "all" | "-1" => -1,
                        "0" => 0,
                        "1" => 1,
                        _ => return Err(bad("all, -1, 0 or 1")),
                    }
                }
                "client.writer.retries" => {
                    c.writer.retries = v.parse().map_err(|_| bad("an integer"))?
                }
                "client.writer.enable-idempotence" => {
                    c.writer.idempotence = parse_bool(v).ok_or_else(|| bad("true or false"))?
                }
                "client.writer.bucket.no-key-assigner" => {
                    c.writer.no_key_assigner = NoKeyAssigner::parse(v)?
                }
                "client.writer.max-inflight-requests-per-bucket" => {
                    c.writer.max_in_flight_per_bucket = v.parse().map_err(|_| bad("an integer"))?
                }
                "client.writer.dynamic-create-partition.enabled" => {
                    c.writer.create_missing_partitions =
                        parse_bool(v).ok_or_else(|| bad("true or false"))?
                }
                // the value as given: a secret may hold spaces
                k if LakeCatalogOptions::is_lake_option(k) => c.lake_catalog.set(k, value)?,
                k if FLUSS_OPTIONS_WITHOUT_EFFECT.contains(&k) => {
                    tracing::debug!("client option '{k}' is accepted but has no effect in Riverlet")
                }
                _ => crate::bail_invalid!(
                    "unknown client option '{key}' (the options are Fluss's client.* names and \
                     the lake catalog's paimon.* / iceberg.* options; see the README's client \
                     options table)"
                ),
            }
        }
        let tls = matches!(protocol.as_deref(), Some("SSL") | Some("SASL_SSL"));
        match (tls, ca_file) {
            (true, Some(file)) => c.tls = Some(TlsClientConfig::from_ca_file(file, server_name)?),
            (true, None) => crate::bail_invalid!(
                "client.security.protocol={} needs client.security.ssl.ca-file (the PEM file of \
                 the CA certificates that issued the server's certificate)",
                protocol.as_deref().unwrap_or_default()
            ),
            (false, Some(file)) => crate::bail_invalid!(
                "client.security.ssl.ca-file '{file}' is set but client.security.protocol is not \
                 SSL or SASL_SSL"
            ),
            (false, None) => {}
        }
        match protocol.as_deref() {
            None | Some("PLAINTEXT") | Some("SSL") => {
                if protocol.is_none() && (user.is_some() || pass.is_some()) {
                    c.sasl = Some(SaslConfig {
                        username: user.unwrap_or_default(),
                        password: pass.unwrap_or_default(),
                    });
                }
            }
            Some("SASL") | Some("SASL_PLAINTEXT") | Some("SASL_SSL") => {
                let (Some(username), Some(password)) = (user, pass) else {
                    crate::bail_invalid!(
                        "client.security.protocol=SASL needs client.security.sasl.username and client.security.sasl.password"
                    );
                };
                c.sasl = Some(SaslConfig { username, password });
            }
            Some(other) => crate::bail_invalid!(
                "unknown client.security.protocol '{other}'; expected PLAINTEXT, SASL, SSL or \
                 SASL_SSL"
            ),
        }
        c.writer.validate()?;
        Ok(c)
    }
}

/// Fluss client options that Riverlet accepts but does not use: tuning knobs of the Java
/// client's internals (buffer pages, lookup batching, remote-log download, metrics) and fetch
/// sizes Riverlet sets itself (see the README's client options table for each reason).
pub const FLUSS_OPTIONS_WITHOUT_EFFECT: &[&str] = &[
    "client.id",
    "client.writer.buffer.page-size",
    "client.writer.buffer.per-request-memory-size",
    "client.writer.buffer.wait-timeout",
    "client.writer.dynamic-batch-size.enabled",
    "client.writer.max-inflight-requests-per-bucket",
    "client.writer.kv-backpressure.max-throttle",
    "client.scanner.log.check-crc",
    "client.scanner.log.max-poll-records",
    "client.scanner.log.fetch.max-bytes",
    "client.scanner.log.fetch.max-bytes-for-bucket",
    "client.scanner.log.fetch.wait-max-time",
    "client.scanner.log.fetch.min-bytes",
    "client.scanner.kv.fetch.max-bytes",
    "client.scanner.kv.batch-strategy",
    "client.scanner.remote-log.prefetch-num",
    "client.scanner.log.read-preference",
    "client.scanner.io.tmpdir",
    "client.remote-file.download-thread-num",
    "client.lookup.queue-size",
    "client.lookup.max-batch-size",
    "client.lookup.max-inflight-requests",
    "client.lookup.batch-timeout",
    "client.lookup.max-retries",
    "client.security.enable-plugin-discovery",
    "client.filesystem.security.token.renewal.backoff",
    "client.filesystem.security.token.renewal.time-ratio",
    "client.metrics.enabled",
];

/// The `username="..."` and `password="..."` of a JAAS PlainLoginModule line.
fn jaas_plain_credentials(jaas: &str) -> Option<(String, String)> {
    let field = |name: &str| {
        let start = jaas.find(&format!("{name}=\""))? + name.len() + 2;
        let len = jaas[start..].find('"')?;
        Some(jaas[start..start + len].to_string())
    };
    Some((field("username")?, field("password")?))
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Parses `500ms`, `30s`, `2min`, `1h`, or plain digits as milliseconds.
pub(crate) fn parse_duration(v: &str) -> Option<Duration> {
    let v = v.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let ms = match unit.trim() {
        "" | "ms" => n,
        "s" | "sec" | "secs" | "second" | "seconds" => n.checked_mul(1000)?,
        "min" | "m" | "minute" | "minutes" => n.checked_mul(60_000)?,
        "h" | "hour" | "hours" => n.checked_mul(3_600_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(ms))
}

/// Parses a Fluss memory size: `64mb`, `128kb`, `1gb`, `2 mb`, or plain digits as bytes.
pub fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: usize = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_fluss() {
        let c = ClientConfig::default();
        assert_eq!(c.request_timeout, Duration::from_secs(30));
        assert_eq!(c.writer.buffer_memory, 64 << 20);
        assert_eq!(c.writer.batch_size, 2 << 20);
        assert_eq!(c.writer.linger, Duration::from_millis(100));
        assert_eq!(c.writer.acks, -1);
        assert_eq!(c.writer.retries, i32::MAX as u32);
        assert!(c.writer.idempotence);
        assert_eq!(c.writer.no_key_assigner, NoKeyAssigner::Sticky);
        assert_eq!(c.writer.request_max_size, 10 << 20);
        assert!(c.writer.create_missing_partitions);
    }

    #[test]
    fn jaas_config_gives_the_credentials() {
        let mut p = BTreeMap::new();
        p.insert("bootstrap.servers".to_string(), "h:1".to_string());
        p.insert("client.security.protocol".to_string(), "SASL".to_string());
        p.insert(
            "client.security.sasl.jaas.config".to_string(),
            "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required \
             username=\"admin\" password=\"s3cret\";"
                .to_string(),
        );
        let c = ClientConfig::from_properties(&p).unwrap();
        let sasl = c.sasl.unwrap();
        assert_eq!(
            (sasl.username.as_str(), sasl.password.as_str()),
            ("admin", "s3cret")
        );
        p.insert(
            "client.security.sasl.jaas.config".to_string(),
            "PlainLoginModule required;".to_string(),
        );
        let e = ClientConfig::from_properties(&p).unwrap_err();
        assert!(e.message().contains("jaas.config"), "{e}");
    }

    #[test]
    fn lake_catalog_options_by_format_with_secrets_hidden() {
        let mut p = BTreeMap::new();
        p.insert("bootstrap.servers".to_string(), "h:1".to_string());
        p.insert("paimon.s3.access-key".to_string(), "AKID".to_string());
        p.insert(
            "paimon.s3.secret-key".to_string(),
            " very secret ".to_string(),
        );
        p.insert("paimon.s3.region".to_string(), "eu-west-1".to_string());
        p.insert(
            "iceberg.jdbc.password".to_string(),
            "pw-never-shown".to_string(),
        );
        let c = ClientConfig::from_properties(&p).unwrap();
        let paimon = c.lake_catalog.of_format("paimon");
        assert_eq!(paimon.len(), 3);
        assert_eq!(paimon["s3.secret-key"], " very secret ", "kept as given");
        assert_eq!(paimon["s3.region"], "eu-west-1");
        assert_eq!(
            c.lake_catalog.of_format("iceberg")["jdbc.password"],
            "pw-never-shown"
        );
        let shown = format!("{c:?}");
        for secret in ["AKID", "very secret", "pw-never-shown"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("paimon.s3.secret-key") && shown.contains("eu-west-1"));
        p.insert("paimon.".to_string(), "x".to_string());
        let e = ClientConfig::from_properties(&p).unwrap_err();
        assert!(e.message().contains("'paimon.'"), "{e}");
    }

    #[test]
    fn bootstrap_list_parses_and_rejects() {
        let c = ClientConfig::new(" a:1 , b:2,");
        assert_eq!(c.bootstrap_list().unwrap(), vec!["a:1", "b:2"]);
        assert!(ClientConfig::new("").bootstrap_list().is_err());
        let e = ClientConfig::new("host").bootstrap_list().unwrap_err();
        assert!(e.message().contains("'host'"), "{e}");
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("64mb"), Some(64 << 20));
        assert_eq!(parse_size("128 kb"), Some(128 << 10));
        assert_eq!(parse_size("7"), Some(7));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_duration("100ms"), Some(Duration::from_millis(100)));
        assert_eq!(parse_duration("2 s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("1min"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("250"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("1y"), None);
    }

    #[test]
    fn from_properties_maps_fluss_keys() {
        let mut p = BTreeMap::new();
        p.insert("bootstrap.servers".to_string(), "h:9123".to_string());
        p.insert("client.writer.batch-size".to_string(), "1mb".to_string());
        p.insert(
            "client.writer.bucket.no-key-assigner".to_string(),
            "ROUND_ROBIN".to_string(),
        );
        p.insert("client.security.protocol".to_string(), "SASL".to_string());
        p.insert("client.security.sasl.username".to_string(), "u".to_string());
        p.insert("client.security.sasl.password".to_string(), "p".to_string());
        let c = ClientConfig::from_properties(&p).unwrap();
        assert_eq!(c.bootstrap_servers, "h:9123");
        assert_eq!(c.writer.batch_size, 1 << 20);
        assert_eq!(c.writer.no_key_assigner, NoKeyAssigner::RoundRobin);
        assert_eq!(c.sasl.as_ref().unwrap().username, "u");

        // Fluss's own knobs are accepted; the partition-creation default is Fluss's (on).
        p.insert("client.lookup.max-batch-size".to_string(), "64".to_string());
        assert!(
            ClientConfig::from_properties(&p)
                .unwrap()
                .writer
                .create_missing_partitions
        );
        p.insert(
            "client.writer.dynamic-create-partition.enabled".to_string(),
            "false".to_string(),
        );
        assert!(
            !ClientConfig::from_properties(&p)
                .unwrap()
                .writer
                .create_missing_partitions
        );

        p.insert("client.nope".to_string(), "1".to_string());
        let e = ClientConfig::from_properties(&p).unwrap_err();
        assert!(e.message().contains("client.nope"));
    }
}
