//! Dynamic server options (DescribeClusterConfigs / AlterClusterConfigs), as Fluss's
//! `DynamicConfigManager` and `DynamicServerConfig` keep them: the options a user may change
//! while the server runs are Fluss's list ([`FLUSS_DYNAMIC_OPTIONS`] and the `datalake.`
//! prefix); of those, this server applies the ones in [`APPLIED_DYNAMIC_OPTIONS`]. A change
//! is validated as a start-up option ([`ServerConfig::set`]), applied at once and persisted in
//! [`DYNAMIC_CONFIGS_FILE`] of the data directory (Fluss: ZooKeeper), so it survives a
//! restart, where it overrides the start-up value. Any other option is refused with Fluss's
//! message naming it ("The config key ... is not allowed to be changed dynamically.").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use riverlet::error::codes;
use riverlet::{Error, Result};
use tokio::sync::watch;

use crate::config::ServerConfig;

/// The file of the data directory holding the dynamic options.
pub const DYNAMIC_CONFIGS_FILE: &str = "dynamic_configs.json";

/// The options Fluss lets a user change at run time (`DynamicServerConfig`'s
/// `ALLOWED_CONFIG_KEYS`, Fluss main; 0.9.1 has `datalake.format` and
/// `kv.rocksdb.shared-rate-limiter.bytes-per-sec`), besides every `datalake.` option.
pub const FLUSS_DYNAMIC_OPTIONS: &[&str] = &[
    "datalake.format",
    "log.retention.roll-active-segment.enabled",
    "log.replica.min-in-sync-replicas-number",
    "kv.leader-replica.memory-reserved",
    "kv.rocksdb.shared-rate-limiter.bytes-per-sec",
    "kv.snapshot.interval",
    "server.data-disk.write-recover-ratio",
    "server.data-disk.write-limit-ratio",
    "server.historical-partition.lookup-cache.max-disk-ratio",
    "server.historical-partition.lookuper-cache.expire-after-access",
    "remote.data.dirs",
    "remote.data.dirs.strategy",
    "remote.data.dirs.weights",
    "security.sasl.plain.credentials",
];

/// Fluss's dynamic option prefix (`ALLOWED_CONFIG_PREFIXES`).
const FLUSS_DYNAMIC_PREFIX: &str = "datalake.";

/// The dynamic options this server applies while it runs.
pub const APPLIED_DYNAMIC_OPTIONS: &[&str] = &["kv.snapshot.interval"];

/// Fluss's `ConfigSource` names, as DescribeClusterConfigs answers them.
pub const INITIAL_SERVER_CONFIG: &str = "INITIAL_SERVER_CONFIG";
/// See [`INITIAL_SERVER_CONFIG`].
pub const DYNAMIC_SERVER_CONFIG: &str = "DYNAMIC_SERVER_CONFIG";

/// Fluss's `AlterConfigOpType` codes.
pub const OP_SET: i32 = 0;
/// See [`OP_SET`].
pub const OP_DELETE: i32 = 1;

/// Fluss answers a `ConfigException` (not one of its API errors) as UNKNOWN_SERVER_ERROR with
/// its message.
fn config_error(msg: impl Into<String>) -> Error {
    Error::from_fluss(codes::UNKNOWN_SERVER_ERROR, msg)
}

/// Why `key` cannot be changed at run time here, or None when it can.
pub fn refusal(key: &str) -> Option<String> {
    if APPLIED_DYNAMIC_OPTIONS.contains(&key) {
        return None;
    }
    let fluss = format!("The config key {key} is not allowed to be changed dynamically.");
    if FLUSS_DYNAMIC_OPTIONS.contains(&key) || key.starts_with(FLUSS_DYNAMIC_PREFIX) {
        Some(format!(
            "{fluss} Apache Fluss changes it at run time, but the embedded server reads it at \
             start-up only (dynamic here: {}).",
            APPLIED_DYNAMIC_OPTIONS.join(", ")
        ))
    } else {
        Some(fluss)
    }
}

/// The dynamic options of a running server.
pub struct DynamicConfigs {
    path: PathBuf,
    values: Mutex<BTreeMap<String, String>>,
    initial: ServerConfig,
    snapshot_interval: watch::Sender<Option<Duration>>,
}

fn read_file(path: &Path) -> Result<BTreeMap<String, String>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(Error::from(e).context(format!("reading {}", path.display()))),
    };
    #[derive(serde::Deserialize)]
    struct Doc {
        configs: BTreeMap<String, String>,
    }
    let doc: Doc = serde_json::from_slice(&bytes).map_err(|e| {
        Error::corrupt(format!(
            "{}: not a dynamic-configs document: {e}",
            path.display()
        ))
    })?;
    Ok(doc.configs)
}

fn write_file(path: &Path, values: &BTreeMap<String, String>) -> Result<()> {
    let doc = serde_json::json!({ "version": 1, "configs": values });
    let bytes = serde_json::to_vec_pretty(&doc)
        .map_err(|e| Error::internal(format!("encode dynamic configs: {e}")))?;
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| Error::from(e).context(format!("writing {}", path.display())))
}

/// `initial` with `values` applied (each validated as a start-up option; an error names it).
fn effective(initial: &ServerConfig, values: &BTreeMap<String, String>) -> Result<ServerConfig> {
    let mut c = initial.clone();
    for (k, v) in values {
        c.set(k, v).map_err(|e| {
            config_error(format!(
                "Cannot apply '{v}' to config '{k}': {}",
                e.message()
            ))
        })?;
    }
    Ok(c)
}

impl DynamicConfigs {
    /// The dynamic options stored in `config`'s data directory, over `config`. A stored option
    /// this server no longer takes is an error naming it and the file.
    pub fn open(config: &ServerConfig) -> Result<DynamicConfigs> {
        let path = config.data_dir.join(DYNAMIC_CONFIGS_FILE);
        let values = read_file(&path)?;
        for k in values.keys() {
            if let Some(why) = refusal(k) {
                return Err(Error::invalid(format!("{}: {why}", path.display())));
            }
        }
        let now =
            effective(config, &values).map_err(|e| e.context(format!("{}", path.display())))?;
        Ok(DynamicConfigs {
            path,
            values: Mutex::new(values),
            initial: config.clone(),
            snapshot_interval: watch::Sender::new(now.kv_snapshot_interval),
        })
    }

    /// The current `kv.snapshot.interval` (None: no periodic snapshots).
    pub fn kv_snapshot_interval(&self) -> Option<Duration> {
        *self.snapshot_interval.borrow()
    }

    /// Follows `kv.snapshot.interval` as it changes.
    pub fn watch_kv_snapshot_interval(&self) -> watch::Receiver<Option<Duration>> {
        self.snapshot_interval.subscribe()
    }

    /// Every option and where its value comes from (Fluss's `describeConfigs`): the start-up
    /// options not overridden (INITIAL_SERVER_CONFIG), then the dynamic ones
    /// (DYNAMIC_SERVER_CONFIG). Secret values (passwords, keys, tokens) are hidden.
    pub fn describe(&self) -> Vec<(String, String, &'static str)> {
        let dynamic = lock(&self.values).clone();
        let hide = |k: &str, v: &str| {
            if riverlet::metadata::table::is_secret_property(k) {
                "<hidden>".to_string()
            } else {
                v.to_string()
            }
        };
        let mut out: Vec<(String, String, &'static str)> = self
            .initial
            .options
            .iter()
            .filter(|(k, _)| !dynamic.contains_key(*k))
            .map(|(k, v)| (k.clone(), hide(k, v), INITIAL_SERVER_CONFIG))
            .collect();
        out.extend(
            dynamic
                .iter()
                .map(|(k, v)| (k.clone(), hide(k, v), DYNAMIC_SERVER_CONFIG)),
        );
        out
    }

    /// Applies `changes` ((key, value, op type)) as one: every key is checked, the new set
    /// validated, persisted, then applied; any refusal leaves everything as it was.
    pub fn alter(&self, changes: &[(String, Option<String>, i32)]) -> Result<()> {
        let mut values = lock(&self.values);
        let mut next = values.clone();
        for (key, value, op) in changes {
            if let Some(why) = refusal(key) {
                return Err(config_error(why));
            }
            match *op {
                OP_SET => {
                    let v = value.clone().ok_or_else(|| {
                        config_error(format!("No value given to set config '{key}'"))
                    })?;
                    next.insert(key.clone(), v);
                }
                OP_DELETE => {
                    next.remove(key);
                }
                other => {
                    let name = match other {
                        2 => "APPEND".to_string(),
                        3 => "SUBTRACT".to_string(),
                        n => n.to_string(),
                    };
                    return Err(config_error(format!(
                        "Unsupported config operation type {name}"
                    )));
                }
            }
        }
        let now = effective(&self.initial, &next)?;
        write_file(&self.path, &next)?;
        *values = next;
        self.snapshot_interval
            .send_if_modified(|cur| std::mem::replace(cur, now.kv_snapshot_interval) != *cur);
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_applied_options_change_and_they_persist() {
        let dir = tempfile::tempdir().unwrap();
        let config = ServerConfig::new(dir.path());
        let d = DynamicConfigs::open(&config).unwrap();
        let default = crate::config::DEFAULT_KV_SNAPSHOT_INTERVAL;
        assert_eq!(d.kv_snapshot_interval(), default);
        d.alter(&[("kv.snapshot.interval".into(), Some("2 s".into()), OP_SET)])
            .unwrap();
        assert_eq!(d.kv_snapshot_interval(), Some(Duration::from_secs(2)));
        let e = d
            .alter(&[("log.segment.file-size".into(), Some("1mb".into()), OP_SET)])
            .unwrap_err();
        assert!(e.message().contains("log.segment.file-size"), "{e}");
        let e = d
            .alter(&[("kv.snapshot.interval".into(), Some("soon".into()), OP_SET)])
            .unwrap_err();
        assert!(e.message().contains("soon"), "{e}");
        assert_eq!(d.kv_snapshot_interval(), Some(Duration::from_secs(2)));
        let again = DynamicConfigs::open(&config).unwrap();
        assert_eq!(again.kv_snapshot_interval(), Some(Duration::from_secs(2)));
        again
            .alter(&[("kv.snapshot.interval".into(), None, OP_DELETE)])
            .unwrap();
        assert_eq!(again.kv_snapshot_interval(), default);
    }
}
