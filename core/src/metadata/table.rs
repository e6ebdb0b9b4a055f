//! Table paths, partition specs, table descriptors (Fluss's table JSON) and table info.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use super::schema::Schema;
use crate::error::{Error, ErrorKind, Result};

/// Longest database / table name Fluss accepts.
pub const MAX_NAME_LENGTH: usize = 200;
/// Names starting with this prefix are reserved for Fluss internals.
pub const INTERNAL_NAME_PREFIX: &str = "__";
/// Fluss's default database.
pub const DEFAULT_DATABASE: &str = "fluss";
/// Separator between partition values in a partition name.
pub const PARTITION_NAME_SEPARATOR: &str = "$";

/// Property keys Riverlet reads (Fluss ConfigOptions).
pub mod keys {
    /// `table.log.format`: ARROW (default), INDEXED or COMPACTED.
    pub const LOG_FORMAT: &str = "table.log.format";
    /// `table.kv.format`: COMPACTED (default) or INDEXED.
    pub const KV_FORMAT: &str = "table.kv.format";
    /// `table.log.arrow.compression.type`: NONE, LZ4_FRAME, ZSTD (default).
    pub const ARROW_COMPRESSION_TYPE: &str = "table.log.arrow.compression.type";
    /// `table.log.arrow.compression.zstd.level`: default 3.
    pub const ARROW_COMPRESSION_ZSTD_LEVEL: &str = "table.log.arrow.compression.zstd.level";
    /// `table.log.ttl`: default 7 days.
    pub const LOG_TTL: &str = "table.log.ttl";
    /// `table.delete.behavior`: ALLOW (default), IGNORE, DISABLE.
    pub const DELETE_BEHAVIOR: &str = "table.delete.behavior";
    /// `table.merge-engine`: FIRST_ROW, VERSIONED, AGGREGATION (no default).
    pub const MERGE_ENGINE: &str = "table.merge-engine";
    /// `table.merge-engine.versioned.ver-column`.
    pub const MERGE_ENGINE_VERSION_COLUMN: &str = "table.merge-engine.versioned.ver-column";
    /// `table.datalake.format`: paimon, iceberg, hudi, lance (no default).
    pub const DATALAKE_FORMAT: &str = "table.datalake.format";
    /// `table.datalake.enabled`.
    pub const DATALAKE_ENABLED: &str = "table.datalake.enabled";
    /// `table.replication.factor`.
    pub const REPLICATION_FACTOR: &str = "table.replication.factor";
}

/// Fluss's reason why `name` is not a valid database/table name, or None when it is valid.
pub fn detect_invalid_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the empty string is not allowed".into());
    }
    if name == "." {
        return Some("'.' is not allowed".into());
    }
    if name == ".." {
        return Some("'..' is not allowed".into());
    }
    if name.chars().count() > MAX_NAME_LENGTH {
        return Some(format!(
            "the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Some(format!(
            "'{name}' contains one or more characters other than ASCII alphanumerics, '_' and '-'"
        ));
    }
    None
}

fn reserved_prefix_error(name: &str) -> Option<String> {
    name.starts_with(INTERNAL_NAME_PREFIX).then(|| {
        format!("'{INTERNAL_NAME_PREFIX}' is not allowed as prefix, since it is reserved for internal databases/internal tables/internal partitions in Fluss server")
    })
}

/// Validates a database name like Fluss (`InvalidDatabaseException` text).
pub fn validate_database_name(name: &str) -> Result<()> {
    match detect_invalid_name(name).or_else(|| reserved_prefix_error(name)) {
        Some(why) => Err(Error::invalid(format!(
            "Database name {name} is invalid: {why}"
        ))),
        None => Ok(()),
    }
}

/// Validates a table name like Fluss (`InvalidTableException` text).
pub fn validate_table_name(name: &str) -> Result<()> {
    match detect_invalid_name(name).or_else(|| reserved_prefix_error(name)) {
        Some(why) => Err(Error::invalid(format!(
            "Table name {name} is invalid: {why}"
        ))),
        None => Ok(()),
    }
}

/// A table's identity: database and table name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TablePath {
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
}

impl TablePath {
    /// A path from its parts (not validated; see [`TablePath::validate`]).
    pub fn new(database: impl Into<String>, table: impl Into<String>) -> Self {
        TablePath {
            database: database.into(),
            table: table.into(),
        }
    }

    /// Parses `db.table`; both names must be valid Fluss names.
    pub fn parse(text: &str) -> Result<TablePath> {
        let (db, table) = text.split_once('.').ok_or_else(|| {
            Error::invalid(format!(
                "table path '{text}' must be 'database.table' (no '.' found)"
            ))
        })?;
        if table.contains('.') {
            return Err(Error::invalid(format!(
                "table path '{text}' must be 'database.table' (more than one '.')"
            )));
        }
        if let Some(why) = detect_invalid_name(db) {
            return Err(Error::invalid(format!(
                "Database name {db} is invalid: {why}"
            )));
        }
        // `t$lake` and `t$lake$snapshots` name the lake views of table `t` (Fluss's system
        // tables); the name checked is the table's own.
        let base = opened_table_name(table)?;
        if let Some(why) = detect_invalid_name(base) {
            return Err(Error::invalid(format!(
                "Table name {table} is invalid: {why}"
            )));
        }
        Ok(TablePath::new(db, table))
    }

    /// Full validation as Fluss does before creating (names and the reserved `__` prefix).
    pub fn validate(&self) -> Result<()> {
        validate_database_name(&self.database)?;
        validate_table_name(&self.table)
    }

    /// [`TablePath::validate`] of a path a table is opened by, which may name a lake view
    /// (`t$lake`, `t$lake$snapshots`): the table's own name is checked.
    pub fn validate_readable(&self) -> Result<()> {
        let base = opened_table_name(&self.table)?;
        TablePath::new(self.database.as_str(), base).validate()
    }

    /// Whether both names are valid (reserved prefix allowed, like Fluss's `isValid`).
    pub fn is_valid(&self) -> bool {
        detect_invalid_name(&self.database).is_none() && detect_invalid_name(&self.table).is_none()
    }
}

/// What a table name names: the table itself or one of its views (Fluss's virtual tables),
/// by the name's suffix. [`split_table_name`] is the one rule of these names for the core and
/// every binding and engine on it.
///
/// `$changelog` is here although [`crate::client::Connection::table`] does not open it: the
/// core has the changelog as a form of read of the table (`ReadRequest::changelog`, whose
/// `_change_type`, `_log_offset`, `_commit_timestamp` columns are those of Fluss's
/// `t$changelog`), not as a handle of its own, so the engines that show it as a table (the Flink
/// catalog, `riverlet-sql`) read table `t` in that form. The name rule is still one rule, so it
/// lives here with the lake views', which the core does open ([`ViewKind::is_lake_view`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViewKind {
    /// The table (`t`, no suffix).
    Table,
    /// The table's changelog (`t$changelog`): every change with its type, offset and commit
    /// time; read as table `t` with the changelog form.
    Changelog,
    /// The rows of the table's latest lake snapshot (`t$lake`).
    Lake,
    /// One row per lake snapshot of the table (`t$lake$snapshots`).
    LakeSnapshots,
}

impl ViewKind {
    /// The kinds named by a suffix, in the order names are matched (longest suffix first).
    pub const SUFFIXED: [ViewKind; 3] =
        [ViewKind::LakeSnapshots, ViewKind::Lake, ViewKind::Changelog];

    /// The suffix of the kind's names: `""`, `$changelog`, `$lake`, `$lake$snapshots`.
    pub fn suffix(self) -> &'static str {
        match self {
            ViewKind::Table => "",
            ViewKind::Changelog => "$changelog",
            ViewKind::Lake => "$lake",
            ViewKind::LakeSnapshots => "$lake$snapshots",
        }
    }

    /// Whether this is a lake view (`$lake`, `$lake$snapshots`), which
    /// [`crate::client::Connection::table`] opens itself as a read-only, bounded view of its
    /// table.
    pub fn is_lake_view(self) -> bool {
        matches!(self, ViewKind::Lake | ViewKind::LakeSnapshots)
    }
}

/// Whether a `table.datalake.enabled` value (None: not set) turns the lake on; see
/// [`TableDescriptor::lake_enabled`]. Public for descriptors the server holds only as JSON.
pub fn lake_enabled_value(v: Option<&str>) -> bool {
    v.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Splits a table name into the name of the table it belongs to and what it names of that
/// table: `orders` is (`orders`, `Table`), `orders$changelog` (`orders`, `Changelog`),
/// `orders$lake` (`orders`, `Lake`), `orders$lake$snapshots` (`orders`, `LakeSnapshots`).
/// Only the last suffix is taken (`t$changelog$lake` is the lake view of `t$changelog`); the
/// table's name is not validated here ([`validate_table_name`]). A name that is only a suffix
/// (`$lake`) names no table: an `InvalidArgument` error naming it.
pub fn split_table_name(name: &str) -> Result<(&str, ViewKind)> {
    for kind in ViewKind::SUFFIXED {
        if let Some(base) = name.strip_suffix(kind.suffix()) {
            if base.is_empty() {
                return Err(Error::invalid(format!(
                    "table name '{name}' is only the view suffix '{}': put the table's name \
                     before it, e.g. 'orders{}'",
                    kind.suffix(),
                    kind.suffix()
                )));
            }
            return Ok((base, kind));
        }
    }
    Ok((name, ViewKind::Table))
}

/// The name of the table that `name` opens with [`crate::client::Connection::table`]: the
/// table's own for a lake view, else `name` itself (a `$changelog` name is not opened).
fn opened_table_name(name: &str) -> Result<&str> {
    match split_table_name(name)? {
        (base, kind) if kind.is_lake_view() => Ok(base),
        _ => Ok(name),
    }
}

impl fmt::Display for TablePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.database, self.table)
    }
}

impl FromStr for TablePath {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        TablePath::parse(s)
    }
}

/// A partition: ordered `key=value` pairs, one per partition key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PartitionSpec {
    /// `(partition key, value)` in partition-key order.
    pub entries: Vec<(String, String)>,
}

impl PartitionSpec {
    /// A spec from pairs in partition-key order.
    pub fn new<I, K, V>(entries: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        PartitionSpec {
            entries: entries
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// A spec from the partition keys and a partition name (`v1$v2...`).
    pub fn from_partition_name(partition_keys: &[String], name: &str) -> Result<Self> {
        let values: Vec<&str> = name.split(PARTITION_NAME_SEPARATOR).collect();
        if values.len() != partition_keys.len() {
            return Err(Error::invalid(format!(
                "partition name '{name}' has {} values but the table has {} partition keys {partition_keys:?}",
                values.len(),
                partition_keys.len()
            )));
        }
        Ok(PartitionSpec::new(
            partition_keys.iter().cloned().zip(values),
        ))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Fluss's partition name: the values joined by `$`.
    pub fn partition_name(&self) -> String {
        self.entries
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(PARTITION_NAME_SEPARATOR)
    }

    /// Fluss's qualified partition name: `k1=v1/k2=v2`.
    pub fn qualified_name(&self) -> String {
        self.entries
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Orders the entries by `partition_keys`; errors when a key is missing or unknown.
    pub fn resolve(&self, partition_keys: &[String]) -> Result<PartitionSpec> {
        if self.entries.len() != partition_keys.len() {
            return Err(Error::invalid(format!(
                "partition spec {} does not match the partition keys {partition_keys:?}",
                self.qualified_name()
            )));
        }
        let mut out = Vec::with_capacity(partition_keys.len());
        for k in partition_keys {
            let v = self.get(k).ok_or_else(|| {
                Error::invalid(format!(
                    "partition spec {} has no value for partition key '{k}'",
                    self.qualified_name()
                ))
            })?;
            out.push((k.clone(), v.to_string()));
        }
        Ok(PartitionSpec { entries: out })
    }
}

impl fmt::Display for PartitionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.qualified_name())
    }
}

macro_rules! prop_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $text:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $var),* }
        impl $name {
            /// Fluss's upper-case name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $text),* }
            }
            /// Parses a property value, case-insensitively like Fluss's enum options.
            pub fn parse(value: &str) -> Result<Self> {
                let up = value.trim().to_ascii_uppercase();
                $(if up == $text { return Ok($name::$var); })*
                Err(Error::new(ErrorKind::InvalidArgument, format!(
                    "'{value}' is not a valid {}; expected one of {:?}",
                    stringify!($name), [$($text),*]
                )))
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

prop_enum!(
    /// `table.log.format`.
    LogFormat {
        /// Arrow IPC record batches (default).
        Arrow = "ARROW",
        /// IndexedRow records.
        Indexed = "INDEXED",
        /// CompactedRow records.
        Compacted = "COMPACTED",
    }
);
prop_enum!(
    /// `table.kv.format`.
    KvFormat {
        /// CompactedRow values (default).
        Compacted = "COMPACTED",
        /// IndexedRow values.
        Indexed = "INDEXED",
    }
);
prop_enum!(
    /// `table.log.arrow.compression.type`.
    ArrowCompressionType {
        /// No compression.
        None = "NONE",
        /// LZ4 frame.
        Lz4Frame = "LZ4_FRAME",
        /// Zstandard (default).
        Zstd = "ZSTD",
    }
);
prop_enum!(
    /// `table.delete.behavior`.
    DeleteBehavior {
        /// Deletes are applied (default).
        Allow = "ALLOW",
        /// Deletes are silently dropped.
        Ignore = "IGNORE",
        /// Deletes are rejected.
        Disable = "DISABLE",
    }
);
prop_enum!(
    /// `table.merge-engine`.
    MergeEngine {
        /// Keep the first row per key.
        FirstRow = "FIRST_ROW",
        /// Keep the row with the highest version column.
        Versioned = "VERSIONED",
        /// Aggregate columns with their aggregation functions.
        Aggregation = "AGGREGATION",
    }
);

/// Parses a Fluss duration (`TimeUtils.parseDuration`): digits then a unit, e.g. `7d`, `1h`,
/// `100ms`, `30 s`, `2 days`; returns whole milliseconds (micros/nanos are truncated).
pub fn parse_duration_ms(text: &str) -> Result<i64> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::invalid(
            "duration is an empty- or whitespace-only string",
        ));
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(Error::invalid(format!(
            "duration '{text}' does not start with a number"
        )));
    }
    let (num, unit) = t.split_at(digits);
    let value: i64 = num.parse().map_err(|_| {
        Error::invalid(format!(
            "The value '{num}' cannot be re represented as 64bit number (numeric overflow)."
        ))
    })?;
    let unit = unit.trim().to_lowercase();
    if unit.is_empty() {
        return Err(Error::invalid(format!(
            "The time value '{text}' does not specify a time unit. Time must be specified with units milliseconds (ms), seconds (s), minutes (min), hour (h), or day (d). E.g. 50ms, 100s, 3h."
        )));
    }
    // (multiplier to millis as numerator, divisor)
    let (mul, div): (i64, i64) = match unit.as_str() {
        "d" | "day" | "days" => (86_400_000, 1),
        "h" | "hour" | "hours" => (3_600_000, 1),
        "min" | "m" | "minute" | "minutes" => (60_000, 1),
        "s" | "sec" | "secs" | "second" | "seconds" => (1_000, 1),
        "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => (1, 1),
        "µs" | "micro" | "micros" | "microsecond" | "microseconds" => (1, 1_000),
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => (1, 1_000_000),
        other => {
            return Err(Error::invalid(format!(
                "Time interval unit label '{other}' does not match any of the recognized units: DAYS: (d | day | days), HOURS: (h | hour | hours), MINUTES: (min | m | minute | minutes), SECONDS: (s | sec | secs | second | seconds), MILLISECONDS: (ms | milli | millis | millisecond | milliseconds), MICROSECONDS: (µs | micro | micros | microsecond | microseconds), NANOSECONDS: (ns | nano | nanos | nanosecond | nanoseconds)"
            )))
        }
    };
    value
        .checked_mul(mul)
        .map(|v| v / div)
        .ok_or_else(|| Error::invalid(format!("duration '{text}' overflows 64-bit milliseconds")))
}

/// Everything needed to create a table: schema, partitioning, distribution and properties.
///
/// Its `Debug` hides the values of secret-bearing properties (see [`is_secret_property`]):
/// Fluss hands a lake's catalog token and keys to clients in the table properties, and a
/// descriptor printed in a log or an error must not carry them.
#[derive(Clone, PartialEq, Eq)]
pub struct TableDescriptor {
    /// The schema.
    pub schema: Schema,
    /// Optional table comment.
    pub comment: Option<String>,
    /// Partition key columns (empty = not partitioned).
    pub partition_keys: Vec<String>,
    /// Bucket key columns (for primary-key tables normalised to PK minus partition keys).
    pub bucket_keys: Vec<String>,
    /// Number of buckets (None = server default).
    pub bucket_count: Option<i32>,
    /// Fluss table properties (`table.*`).
    pub properties: BTreeMap<String, String>,
    /// User properties Fluss stores but does not interpret.
    pub custom_properties: BTreeMap<String, String>,
}

/// Whether a property's value is a secret to hide when printed: a catalog's token, credential,
/// secret key or password, or an HTTP header (`...header.Authorization`) passed to a catalog.
/// The one rule for every printout of properties (the server's config uses it too).
pub fn is_secret_property(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.starts_with("header.")
        || key.contains(".header.")
        || ["token", "credential", "secret", "password"]
            .iter()
            .any(|s| key.contains(s))
}

/// Properties as printed by `Debug`: secret values replaced by `<hidden>`.
pub fn redacted(props: &BTreeMap<String, String>) -> BTreeMap<&str, &str> {
    props
        .iter()
        .map(|(k, v)| {
            let shown = if is_secret_property(k) {
                "<hidden>"
            } else {
                v.as_str()
            };
            (k.as_str(), shown)
        })
        .collect()
}

impl fmt::Debug for TableDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableDescriptor")
            .field("schema", &self.schema)
            .field("comment", &self.comment)
            .field("partition_keys", &self.partition_keys)
            .field("bucket_keys", &self.bucket_keys)
            .field("bucket_count", &self.bucket_count)
            .field("properties (secrets hidden)", &redacted(&self.properties))
            .field(
                "custom_properties (secrets hidden)",
                &redacted(&self.custom_properties),
            )
            .finish()
    }
}

/// Builds a [`TableDescriptor`] and normalises it like Fluss's `TableDescriptor.Builder`.
#[derive(Debug, Clone)]
pub struct TableDescriptorBuilder {
    d: TableDescriptor,
}

impl TableDescriptorBuilder {
    /// Sets the table comment.
    pub fn comment(mut self, comment: impl Into<String>) -> Self {
        self.d.comment = Some(comment.into());
        self
    }
    /// Sets the partition keys.
    pub fn partitioned_by<I: IntoIterator<Item = S>, S: Into<String>>(mut self, keys: I) -> Self {
        self.d.partition_keys = keys.into_iter().map(Into::into).collect();
        self
    }
    /// Sets the bucket count and bucket keys (empty keys = default).
    pub fn distributed_by<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        bucket_count: Option<i32>,
        keys: I,
    ) -> Self {
        self.d.bucket_count = bucket_count;
        self.d.bucket_keys = keys.into_iter().map(Into::into).collect();
        self
    }
    /// Sets one property.
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.d.properties.insert(key.into(), value.into());
        self
    }
    /// Sets one custom property.
    pub fn custom_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.d.custom_properties.insert(key.into(), value.into());
        self
    }
    /// Sets `table.log.format`.
    pub fn log_format(self, f: LogFormat) -> Self {
        self.property(keys::LOG_FORMAT, f.as_str())
    }
    /// Sets `table.kv.format`.
    pub fn kv_format(self, f: KvFormat) -> Self {
        self.property(keys::KV_FORMAT, f.as_str())
    }
    /// Validates keys and fills default bucket keys.
    pub fn build(self) -> Result<TableDescriptor> {
        let mut d = self.d;
        let names: Vec<&str> = d.schema.column_names();
        for k in &d.partition_keys {
            if !names.contains(&k.as_str()) {
                return Err(Error::invalid(format!(
                    "Partition key '{k}' does not exist in the schema columns {names:?}"
                )));
            }
        }
        for k in &d.bucket_keys {
            if !names.contains(&k.as_str()) {
                return Err(Error::invalid(format!(
                    "Bucket key '{k}' does not exist in the schema columns {names:?}"
                )));
            }
        }
        if let Some(n) = d.bucket_count {
            if n <= 0 {
                return Err(Error::invalid(format!(
                    "bucket count must be positive, got {n}"
                )));
            }
        }
        if d.bucket_keys.iter().any(|k| d.partition_keys.contains(k)) {
            return Err(Error::invalid(format!(
                "Bucket key {:?} shouldn't include any column in partition keys {:?}.",
                d.bucket_keys, d.partition_keys
            )));
        }
        if let Some(pk) = d.schema.primary_key.clone() {
            if !d.partition_keys.iter().all(|p| pk.contains(p)) {
                return Err(Error::invalid(format!(
                    "Partitioned Primary Key Table requires partition key {:?} is a subset of the primary key {pk:?}.",
                    d.partition_keys
                )));
            }
            if d.bucket_keys.is_empty() {
                let defaults: Vec<String> = pk
                    .iter()
                    .filter(|k| !d.partition_keys.contains(k))
                    .cloned()
                    .collect();
                if defaults.is_empty() {
                    return Err(Error::invalid(format!(
                        "Primary Key constraint {pk:?} should not be same with partition fields {:?}.",
                        d.partition_keys
                    )));
                }
                d.bucket_keys = defaults;
            } else if !d.bucket_keys.iter().all(|k| pk.contains(k)) {
                return Err(Error::invalid(format!(
                    "Bucket keys must be a subset of primary keys excluding partition keys for primary-key tables. The primary keys are {pk:?}, the partition keys are {:?}, but the user-defined bucket keys are {:?}.",
                    d.partition_keys, d.bucket_keys
                )));
            }
        }
        super::agg_options::apply_agg_options(&mut d)?;
        Ok(d)
    }
}

/// Everything of a table definition but its columns, as the bindings take it from their users;
/// with [`TableDescriptor::from_arrow`] the one place a table is built from an Arrow schema.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableOptions {
    /// Primary key columns (`Some(empty)` is an error, as in Fluss).
    pub primary_key: Option<Vec<String>>,
    /// The auto-increment column.
    pub auto_increment: Option<String>,
    /// Partition key columns.
    pub partition_keys: Vec<String>,
    /// Number of buckets (None = server default).
    pub bucket_count: Option<i32>,
    /// Bucket key columns (empty = default).
    pub bucket_keys: Vec<String>,
    /// Fluss table properties (`table.*`).
    pub properties: Vec<(String, String)>,
    /// User properties Fluss stores but does not interpret.
    pub custom_properties: Vec<(String, String)>,
    /// Table comment.
    pub comment: Option<String>,
}

impl TableDescriptor {
    /// The descriptor of a table with the columns of an Arrow schema and `options`.
    pub fn from_arrow(
        schema: &arrow_schema::Schema,
        options: TableOptions,
    ) -> Result<TableDescriptor> {
        let mut sb = Schema::builder_from_arrow(schema)?;
        if let Some(pk) = options.primary_key {
            sb = sb.primary_key(pk);
        }
        if let Some(column) = options.auto_increment {
            sb = sb.auto_increment(column);
        }
        let mut d = TableDescriptor::builder(sb.build()?)
            .partitioned_by(options.partition_keys)
            .distributed_by(options.bucket_count, options.bucket_keys);
        for (k, v) in options.properties {
            d = d.property(k, v);
        }
        for (k, v) in options.custom_properties {
            d = d.custom_property(k, v);
        }
        if let Some(c) = options.comment {
            d = d.comment(c);
        }
        d.build()
    }

    /// A builder for a table with `schema`.
    pub fn builder(schema: Schema) -> TableDescriptorBuilder {
        TableDescriptorBuilder {
            d: TableDescriptor {
                schema,
                comment: None,
                partition_keys: Vec::new(),
                bucket_keys: Vec::new(),
                bucket_count: None,
                properties: BTreeMap::new(),
                custom_properties: BTreeMap::new(),
            },
        }
    }

    /// Whether the table has a primary key.
    pub fn has_primary_key(&self) -> bool {
        self.schema.has_primary_key()
    }

    /// Whether the table is partitioned.
    pub fn is_partitioned(&self) -> bool {
        !self.partition_keys.is_empty()
    }

    /// The bucket keys used for bucketing: explicit ones, else PK minus partition keys, else none.
    pub fn effective_bucket_keys(&self) -> Vec<String> {
        if !self.bucket_keys.is_empty() {
            return self.bucket_keys.clone();
        }
        match &self.schema.primary_key {
            Some(pk) => pk
                .iter()
                .filter(|k| !self.partition_keys.contains(k))
                .cloned()
                .collect(),
            None => Vec::new(),
        }
    }

    /// A property value.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties.get(key).map(String::as_str)
    }

    /// `table.log.format` (default ARROW).
    pub fn log_format(&self) -> Result<LogFormat> {
        self.property(keys::LOG_FORMAT)
            .map_or(Ok(LogFormat::Arrow), LogFormat::parse)
    }

    /// `table.kv.format` (default COMPACTED).
    pub fn kv_format(&self) -> Result<KvFormat> {
        self.property(keys::KV_FORMAT)
            .map_or(Ok(KvFormat::Compacted), KvFormat::parse)
    }

    /// `table.log.arrow.compression.type` (default ZSTD).
    pub fn arrow_compression(&self) -> Result<ArrowCompressionType> {
        self.property(keys::ARROW_COMPRESSION_TYPE)
            .map_or(Ok(ArrowCompressionType::Zstd), ArrowCompressionType::parse)
    }

    /// `table.log.arrow.compression.zstd.level` (default 3).
    pub fn arrow_compression_zstd_level(&self) -> Result<i32> {
        match self.property(keys::ARROW_COMPRESSION_ZSTD_LEVEL) {
            None => Ok(3),
            Some(v) => v.trim().parse().map_err(|_| {
                Error::invalid(format!(
                    "'{v}' is not a valid {}",
                    keys::ARROW_COMPRESSION_ZSTD_LEVEL
                ))
            }),
        }
    }

    /// The Arrow codec of the table's log batches, from `table.log.arrow.compression.type` and
    /// its zstd level: the one place both the client's writers and the server choose it.
    pub fn log_compression(&self) -> Result<crate::record::arrow_payload::ArrowCompression> {
        crate::record::arrow_payload::ArrowCompression::from_property(
            self.arrow_compression()?.as_str(),
            Some(self.arrow_compression_zstd_level()?),
        )
    }

    /// `table.log.ttl` in milliseconds (default 7 days; 0 disables expiry).
    pub fn log_ttl_ms(&self) -> Result<i64> {
        match self.property(keys::LOG_TTL) {
            None => Ok(7 * 86_400_000),
            Some(v) => parse_duration_ms(v).map_err(|e| e.context(keys::LOG_TTL)),
        }
    }

    /// `table.delete.behavior` (default ALLOW).
    pub fn delete_behavior(&self) -> Result<DeleteBehavior> {
        self.property(keys::DELETE_BEHAVIOR)
            .map_or(Ok(DeleteBehavior::Allow), DeleteBehavior::parse)
    }

    /// `table.merge-engine` (None when not set).
    pub fn merge_engine(&self) -> Result<Option<MergeEngine>> {
        self.property(keys::MERGE_ENGINE)
            .map(MergeEngine::parse)
            .transpose()
    }

    /// Whether the table is lake-enabled: `table.datalake.enabled = true` (case-insensitive,
    /// as Fluss's boolean options). The one place the rule lives: the reader's union plan, the
    /// lake views, the lake reads, and the server's tiering all ask this.
    pub fn lake_enabled(&self) -> bool {
        lake_enabled_value(self.property(keys::DATALAKE_ENABLED))
    }

    /// `table.datalake.format`, lower-cased (None when not set).
    pub fn datalake_format(&self) -> Option<String> {
        self.property(keys::DATALAKE_FORMAT)
            .map(|s| s.trim().to_ascii_lowercase())
    }

    /// Fluss's TableDescriptorJsonSerde form.
    pub fn to_json_value(&self) -> Value {
        let strs = |v: &[String]| Value::Array(v.iter().map(|s| Value::from(s.clone())).collect());
        let props = |p: &BTreeMap<String, String>| {
            Value::Object(
                p.iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                    .collect::<Map<_, _>>(),
            )
        };
        let mut m = Map::new();
        m.insert("version".into(), Value::from(1));
        m.insert("schema".into(), self.schema.to_json_value());
        if let Some(c) = &self.comment {
            m.insert("comment".into(), Value::from(c.clone()));
        }
        m.insert("partition_key".into(), strs(&self.partition_keys));
        if self.bucket_count.is_some() || !self.bucket_keys.is_empty() {
            m.insert("bucket_key".into(), strs(&self.bucket_keys));
            if let Some(n) = self.bucket_count {
                m.insert("bucket_count".into(), Value::from(n));
            }
        }
        m.insert("properties".into(), props(&self.properties));
        m.insert("custom_properties".into(), props(&self.custom_properties));
        Value::Object(m)
    }

    /// The table JSON bytes (`table_json` of CreateTable / GetTableInfo / metadata).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.to_json_value()).unwrap_or_default()
    }

    /// Parses Fluss's table JSON value.
    pub fn from_json_value(v: &Value) -> Result<TableDescriptor> {
        let schema = Schema::from_json_value(
            v.get("schema")
                .ok_or_else(|| Error::invalid("table JSON has no 'schema'"))?,
        )?;
        let strs = |name: &str| -> Vec<String> {
            v.get(name)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let props = |name: &str| -> BTreeMap<String, String> {
            match v.get(name) {
                Some(Value::Object(o)) => o
                    .iter()
                    .map(|(k, v)| {
                        let s = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), s)
                    })
                    .collect(),
                _ => BTreeMap::new(),
            }
        };
        let mut b = TableDescriptor::builder(schema).partitioned_by(strs("partition_key"));
        if let Some(c) = v.get("comment").and_then(Value::as_str) {
            b = b.comment(c);
        }
        if v.get("bucket_key").is_some() || v.get("bucket_count").is_some() {
            let count = v
                .get("bucket_count")
                .and_then(Value::as_i64)
                .map(|n| n as i32);
            b = b.distributed_by(count, strs("bucket_key"));
        }
        let mut d = b.build()?;
        d.properties = props("properties");
        d.custom_properties = props("custom_properties");
        Ok(d)
    }

    /// Parses Fluss's table JSON bytes.
    pub fn from_json(bytes: &[u8]) -> Result<TableDescriptor> {
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(format!("table JSON does not parse: {e}")))?;
        TableDescriptor::from_json_value(&v)
    }
}

/// A table as the server describes it (GetTableInfo / metadata responses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// Database and table name.
    pub table_path: TablePath,
    /// Server-assigned table id.
    pub table_id: i64,
    /// Current schema id.
    pub schema_id: i32,
    /// The descriptor decoded from `table_json`.
    pub descriptor: TableDescriptor,
    /// Creation time, epoch millis.
    pub created_time: i64,
    /// Last modification time, epoch millis.
    pub modified_time: i64,
    /// The table's earlier schemas by id (after ALTER TABLE ... ADD COLUMN), to read data
    /// written under them; empty for a table still at its first schema.
    pub older_schemas: std::collections::BTreeMap<i32, Schema>,
}

impl TableInfo {
    /// Builds the info from the fields of a GetTableInfo / PbTableMetadata message.
    pub fn from_table_json(
        table_path: TablePath,
        table_id: i64,
        schema_id: i32,
        table_json: &[u8],
        created_time: i64,
        modified_time: i64,
    ) -> Result<TableInfo> {
        Ok(TableInfo {
            table_path,
            table_id,
            schema_id,
            descriptor: TableDescriptor::from_json(table_json)?,
            created_time,
            modified_time,
            older_schemas: std::collections::BTreeMap::new(),
        })
    }

    /// The schema data written under `schema_id` has: the current one or an earlier one, or
    /// Unsupported naming the table when this client does not know it (written under a newer
    /// schema than this table handle's: re-open the table).
    pub fn schema_by_id(&self, schema_id: i32) -> Result<&Schema> {
        if schema_id == self.schema_id {
            return Ok(&self.descriptor.schema);
        }
        self.older_schemas.get(&schema_id).ok_or_else(|| {
            crate::Error::unsupported(format!(
                "data of table '{}' was written with schema id {schema_id}, which this handle \
                 of the table (at schema id {}) does not know (the table was altered after it \
                 was opened); re-open the table after refreshing its info (Admin::table_info, \
                 or a new connection) to read it",
                self.table_path, self.schema_id
            ))
        })
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.descriptor.schema
    }

    /// Number of buckets (1 when the descriptor does not say, as Fluss's default).
    pub fn num_buckets(&self) -> i32 {
        self.descriptor.bucket_count.unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::schema::tests::{schema_0, schema_1, SCHEMA_JSON_0, SCHEMA_JSON_1};

    #[test]
    fn debug_hides_the_lake_catalog_secrets_fluss_hands_to_clients() {
        let d = TableDescriptor::builder(schema_0())
            .property("table.datalake.iceberg.token", "tok-123")
            .property(
                "table.datalake.iceberg.header.Authorization",
                "Bearer b-456",
            )
            .property("table.datalake.iceberg.s3.secret-access-key", "sk-789")
            .property("table.datalake.iceberg.uri", "http://catalog:8181")
            .custom_property("my.password", "pw-0")
            .build()
            .unwrap();
        let shown = format!("{d:?}");
        for secret in ["tok-123", "b-456", "sk-789", "pw-0"] {
            assert!(!shown.contains(secret), "{secret} printed in {shown}");
        }
        assert!(shown.contains("http://catalog:8181"), "{shown}");
        assert!(shown.contains("table.datalake.iceberg.token"), "{shown}");
    }

    /// Golden JSON from fluss-common/src/test/java/org/apache/fluss/utils/json/TableDescriptorJsonSerdeTest.java.
    /// Java keeps properties in a HashMap (arbitrary order); Riverlet writes them sorted, so the
    /// property objects below are the golden ones re-ordered by key; every other byte is as in Java.
    #[test]
    fn table_descriptor_json_golden() {
        let d0 = TableDescriptor::builder(schema_0())
            .comment("first table")
            .partitioned_by(["c"])
            .distributed_by(Some(16), ["a"])
            .property("option-1", "100")
            .property("option-2", "200")
            .custom_property("custom-1", "\"value-1\"")
            .build()
            .unwrap();
        let d1 = TableDescriptor::builder(schema_1())
            .distributed_by(Some(32), Vec::<String>::new())
            .property("option-3", "300")
            .property("option-4", "400")
            .log_format(LogFormat::Indexed)
            .kv_format(KvFormat::Indexed)
            .build()
            .unwrap();
        let j0 = format!(
            r#"{{"version":1,"schema":{SCHEMA_JSON_0},"comment":"first table","partition_key":["c"],"bucket_key":["a"],"bucket_count":16,"properties":{{"option-1":"100","option-2":"200"}},"custom_properties":{{"custom-1":"\"value-1\""}}}}"#
        );
        let j1 = format!(
            r#"{{"version":1,"schema":{SCHEMA_JSON_1},"partition_key":[],"bucket_key":["a"],"bucket_count":32,"properties":{{"option-3":"300","option-4":"400","table.kv.format":"INDEXED","table.log.format":"INDEXED"}},"custom_properties":{{}}}}"#
        );
        assert_eq!(String::from_utf8(d0.to_json()).unwrap(), j0);
        assert_eq!(String::from_utf8(d1.to_json()).unwrap(), j1);
        assert_eq!(TableDescriptor::from_json(j0.as_bytes()).unwrap(), d0);
        assert_eq!(TableDescriptor::from_json(j1.as_bytes()).unwrap(), d1);
        // The Java byte order of properties parses to the same descriptor.
        let java0 = j0.replace(
            r#"{"option-1":"100","option-2":"200"}"#,
            r#"{"option-2":"200","option-1":"100"}"#,
        );
        assert_eq!(TableDescriptor::from_json(java0.as_bytes()).unwrap(), d0);
        assert_eq!(d1.log_format().unwrap(), LogFormat::Indexed);
        assert_eq!(d1.kv_format().unwrap(), KvFormat::Indexed);
        assert_eq!(d0.effective_bucket_keys(), vec!["a".to_string()]);
    }

    #[test]
    fn property_defaults() {
        let d = TableDescriptor::builder(schema_1()).build().unwrap();
        assert_eq!(d.log_format().unwrap(), LogFormat::Arrow);
        assert_eq!(d.kv_format().unwrap(), KvFormat::Compacted);
        assert_eq!(d.arrow_compression().unwrap(), ArrowCompressionType::Zstd);
        assert_eq!(d.arrow_compression_zstd_level().unwrap(), 3);
        assert_eq!(d.log_ttl_ms().unwrap(), 604_800_000);
        assert_eq!(d.delete_behavior().unwrap(), DeleteBehavior::Allow);
        assert_eq!(d.merge_engine().unwrap(), None);
        assert_eq!(d.bucket_keys, vec!["a".to_string()]);
        let d = TableDescriptor::builder(schema_1())
            .property(keys::ARROW_COMPRESSION_TYPE, "lz4_frame")
            .property(keys::LOG_TTL, "1h")
            .property(keys::MERGE_ENGINE, "first_row")
            .property(keys::DELETE_BEHAVIOR, "bogus")
            .build()
            .unwrap();
        assert_eq!(
            d.arrow_compression().unwrap(),
            ArrowCompressionType::Lz4Frame
        );
        assert_eq!(d.log_ttl_ms().unwrap(), 3_600_000);
        assert_eq!(d.merge_engine().unwrap(), Some(MergeEngine::FirstRow));
        assert!(d.delete_behavior().is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("7d").unwrap(), 604_800_000);
        assert_eq!(parse_duration_ms("1h").unwrap(), 3_600_000);
        assert_eq!(parse_duration_ms("100ms").unwrap(), 100);
        assert_eq!(parse_duration_ms(" 30 s ").unwrap(), 30_000);
        assert_eq!(parse_duration_ms("2 DAYS").unwrap(), 172_800_000);
        assert_eq!(parse_duration_ms("5min").unwrap(), 300_000);
        assert_eq!(parse_duration_ms("0ms").unwrap(), 0);
        assert!(parse_duration_ms("1500us").is_err());
        assert_eq!(parse_duration_ms("1500µs").unwrap(), 1);
        assert!(parse_duration_ms("100").is_err());
        assert!(parse_duration_ms("h").is_err());
        assert!(parse_duration_ms("").is_err());
        assert!(parse_duration_ms("99999999999999999999ms").is_err());
    }

    #[test]
    fn table_paths() {
        let p = TablePath::parse("db1.orders-2024_x").unwrap();
        assert_eq!(p.to_string(), "db1.orders-2024_x");
        assert!(TablePath::parse("nodot").is_err());
        assert!(TablePath::parse("a.b.c").is_err());
        assert!(TablePath::parse(".t").is_err());
        let e = TablePath::parse("db.t t").unwrap_err();
        assert!(e.message().contains("ASCII alphanumerics"), "{e}");
        assert!(TablePath::parse(&format!("db.{}", "x".repeat(201))).is_err());
        assert!(TablePath::parse(&format!("db.{}", "x".repeat(200))).is_ok());
        assert!(TablePath::new("db", "__internal").validate().is_err());
        assert!(TablePath::new("db", "__internal").is_valid());
    }

    #[test]
    fn table_name_split() {
        let cases = [
            ("orders", "orders", ViewKind::Table),
            ("orders$changelog", "orders", ViewKind::Changelog),
            ("orders$lake", "orders", ViewKind::Lake),
            ("orders$lake$snapshots", "orders", ViewKind::LakeSnapshots),
            // Only the last suffix is the view's.
            ("t$changelog$lake", "t$changelog", ViewKind::Lake),
            ("t$lake$changelog", "t$lake", ViewKind::Changelog),
            ("t$snapshots", "t$snapshots", ViewKind::Table),
            ("t$lakes", "t$lakes", ViewKind::Table),
        ];
        for (name, base, kind) in cases {
            assert_eq!(split_table_name(name).unwrap(), (base, kind), "{name}");
            assert_eq!(format!("{base}{}", kind.suffix()), name);
        }
        assert!(ViewKind::Lake.is_lake_view() && ViewKind::LakeSnapshots.is_lake_view());
        assert!(!ViewKind::Table.is_lake_view() && !ViewKind::Changelog.is_lake_view());
        for name in ["$changelog", "$lake", "$lake$snapshots"] {
            let e = split_table_name(name).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{name}");
            assert!(e.message().contains(&format!("'{name}'")), "{e}");
        }
        // Paths open lake views, not changelogs; a name that is only a suffix is refused.
        assert_eq!(TablePath::parse("db.t$lake").unwrap().table, "t$lake");
        assert!(TablePath::new("db", "t$lake$snapshots")
            .validate_readable()
            .is_ok());
        assert!(TablePath::parse("db.t$changelog").is_err());
        assert!(TablePath::parse("db.$lake").is_err());
    }

    #[test]
    fn partition_names() {
        let s = PartitionSpec::new([("dt", "2024-01-01"), ("hr", "10")]);
        assert_eq!(s.partition_name(), "2024-01-01$10");
        assert_eq!(s.qualified_name(), "dt=2024-01-01/hr=10");
        let keys = vec!["dt".to_string(), "hr".to_string()];
        assert_eq!(
            PartitionSpec::from_partition_name(&keys, "2024-01-01$10").unwrap(),
            s
        );
        let r = PartitionSpec::new([("hr", "10"), ("dt", "2024-01-01")])
            .resolve(&keys)
            .unwrap();
        assert_eq!(r, s);
        assert!(PartitionSpec::from_partition_name(&keys, "x").is_err());
    }

    #[test]
    fn descriptor_validation() {
        // Partition keys of a PK table must be part of the PK.
        assert!(TableDescriptor::builder(schema_1())
            .partitioned_by(["b"])
            .build()
            .is_err());
        // Bucket key may not be a partition key.
        let s = Schema::builder()
            .column("a", crate::metadata::DataType::int())
            .column("b", crate::metadata::DataType::string())
            .build()
            .unwrap();
        assert!(TableDescriptor::builder(s.clone())
            .partitioned_by(["b"])
            .distributed_by(Some(2), ["b"])
            .build()
            .is_err());
        let log = TableDescriptor::builder(s).build().unwrap();
        assert!(log.effective_bucket_keys().is_empty());
        assert!(!log
            .to_json_value()
            .as_object()
            .unwrap()
            .contains_key("bucket_key"));
    }
}
