//! The plain requests every binding fills: [`ReadRequest`] (a bounded read) and
//! [`SubscribeRequest`] (an unbounded subscription), with [`BucketOffset`] for the positions a
//! subscription starts from and reports. Bindings convert their own types into these structs
//! (or pass Fluss-style option strings to `from_options`) and hand them to one core entry point
//! (`blocking::Table::{read, count, subscribe}`); every option is interpreted here or further
//! down in the core, never in a binding.

use super::{
    reader::table_name, Expr, PartitionSelector, ScanBuilder, StartupMode, TimePoint, TimeZoneSpec,
};
use crate::client::Table;
use crate::{Error, Result};

/// A row filter: the text form of [`super::parse_filter`] or an already built [`Expr`].
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// Filter text, e.g. `amount >= 10 AND dt IN ('2026-01-01')`.
    Text(String),
    /// A built expression.
    Expr(Expr),
}

impl From<&str> for Filter {
    fn from(v: &str) -> Self {
        Filter::Text(v.to_string())
    }
}
impl From<String> for Filter {
    fn from(v: String) -> Self {
        Filter::Text(v)
    }
}
impl From<Expr> for Filter {
    fn from(v: Expr) -> Self {
        Filter::Expr(v)
    }
}

/// Everything a bounded read can ask for. `ReadRequest::default()` reads every row and column
/// of every partition and bucket. Invalid values (an unknown column, a bad filter, time-zone or
/// timestamp text, a bucket the table does not have) are reported when the read is planned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadRequest {
    /// Columns to return, in this order (None: all).
    pub columns: Option<Vec<String>>,
    /// Rows to keep (None: all).
    pub filter: Option<Filter>,
    /// Partitions to read, by name (`v1$v2`) or spec (None: all).
    pub partitions: Option<Vec<PartitionSelector>>,
    /// Buckets to read in every partition read (None: all). One Spark input partition or
    /// Flink split reads one bucket of one partition.
    pub buckets: Option<Vec<i32>>,
    /// At most this many rows.
    pub limit: Option<usize>,
    /// Start of the commit-time window `[start, end)` (inclusive).
    pub start: Option<TimePoint>,
    /// End of the window (exclusive; None with a start: up to the moment the read is planned).
    /// An end without a start is an error.
    pub end: Option<TimePoint>,
    /// Zone of timestamp texts, dates and wall clocks of the window: an IANA name, `UTC`, an
    /// offset like `+08:00`, or `local` (None: the process's zone).
    pub time_zone: Option<String>,
    /// Snapshot-only read of a primary-key table (not combinable with a window).
    pub read_optimized: bool,
    /// The changelog form: `_change_type`, `_log_offset`, `_commit_timestamp` columns first.
    pub changelog: bool,
    /// At most this many rows per returned batch (None or 0: as produced).
    pub batch_size: Option<usize>,
    /// The caller keeps every batch until the read ends (a read into one table): decoded
    /// batches then share large memory blocks, which the system fills with far fewer page
    /// faults. A block is freed only when all its batches are, so a stream dropped batch by
    /// batch leaves this false.
    pub keep_batches: bool,
}

/// The option keys [`ReadRequest::from_options`] understands (Fluss's names where Fluss has one).
pub const READ_OPTION_KEYS: &[&str] = &[
    "columns",
    "filter",
    "partitions",
    "buckets",
    "limit",
    "scan.incremental.start.timestamp",
    "scan.incremental.end.timestamp",
    "time-zone",
    "read.optimized",
    "changelog",
    "batch-size",
];

/// The option keys [`SubscribeRequest::from_options`] understands.
pub const SUBSCRIBE_OPTION_KEYS: &[&str] = &[
    "columns",
    "partitions",
    "buckets",
    "scan.startup.mode",
    "scan.startup.timestamp",
    "time-zone",
];

impl ReadRequest {
    /// A read of everything (the same as `Default`).
    pub fn new() -> ReadRequest {
        ReadRequest::default()
    }

    /// A request from string options, keyed as in [`READ_OPTION_KEYS`]: `columns`,
    /// `partitions` (names) and `buckets` comma separated; `scan.incremental.start.timestamp` /
    /// `.end.timestamp` as epoch milliseconds or `yyyy-MM-dd HH:mm:ss` (read in `time-zone`);
    /// `read.optimized` and `changelog` `true`/`false`; `limit`, `batch-size` numbers. An
    /// unknown key or a bad value is an invalid-argument error naming it.
    pub fn from_options<K, V>(options: impl IntoIterator<Item = (K, V)>) -> Result<ReadRequest>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut r = ReadRequest::default();
        for (k, v) in options {
            let (key, value) = (k.as_ref(), v.as_ref());
            match key {
                "columns" => r.columns = Some(list(value)),
                "filter" => r.filter = Some(Filter::Text(value.to_string())),
                "partitions" => {
                    r.partitions = Some(list(value).into_iter().map(Into::into).collect())
                }
                "buckets" => r.buckets = Some(bucket_list(key, value)?),
                "limit" => r.limit = Some(number(key, value)?),
                "scan.incremental.start.timestamp" => r.start = Some(TimePoint::from(value)),
                "scan.incremental.end.timestamp" => r.end = Some(TimePoint::from(value)),
                "time-zone" => r.time_zone = Some(value.to_string()),
                "read.optimized" => r.read_optimized = boolean(key, value)?,
                "changelog" => r.changelog = boolean(key, value)?,
                "batch-size" => r.batch_size = Some(number(key, value)?),
                _ => return Err(unknown_key(key, READ_OPTION_KEYS)),
            }
        }
        Ok(r)
    }

    /// The async read this request describes.
    pub fn to_scan(&self, table: &Table) -> ScanBuilder {
        self.apply(ScanBuilder::new(table.clone()))
    }

    pub(crate) fn apply(&self, mut b: ScanBuilder) -> ScanBuilder {
        if let Some(c) = &self.columns {
            b = b.project_names(c.clone());
        }
        match &self.filter {
            Some(Filter::Text(t)) => b = b.filter_text(t),
            Some(Filter::Expr(e)) => b = b.filter(e.clone()),
            None => {}
        }
        if let Some(p) = &self.partitions {
            b = b.partitions(p.clone());
        }
        if let Some(ids) = &self.buckets {
            b = b.buckets(ids.iter().copied());
        }
        if let Some(n) = self.limit {
            b = b.limit(n);
        }
        b = b.between_options(self.start.clone(), self.end.clone());
        if let Some(tz) = &self.time_zone {
            b = b.time_zone(tz);
        }
        b.read_optimized(self.read_optimized)
            .changelog(self.changelog)
            .batch_size(self.batch_size.unwrap_or(0))
            .keep_batches(self.keep_batches)
    }
}

/// The next offset of one bucket: where a subscription starts reading it (in
/// [`SubscribeRequest::start_offsets`]) or has got to (a subscription's `position()`), so a
/// checkpointed position can be restored.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketOffset {
    /// The partition's id (None for a table without partitions). When starting, a partition is
    /// matched by `partition_name` when that is given, else by this id.
    pub partition_id: Option<i64>,
    /// The partition's name, `v1$v2` (None for a table without partitions).
    pub partition_name: Option<String>,
    /// The bucket.
    pub bucket: i32,
    /// The log offset of the next record to read.
    pub offset: i64,
}

impl BucketOffset {
    /// The offset of a bucket of a table without partitions.
    pub fn new(bucket: i32, offset: i64) -> BucketOffset {
        BucketOffset {
            partition_id: None,
            partition_name: None,
            bucket,
            offset,
        }
    }

    /// The offset of a bucket of the partition named `partition`.
    pub fn in_partition(partition: impl Into<String>, bucket: i32, offset: i64) -> BucketOffset {
        BucketOffset {
            partition_id: None,
            partition_name: Some(partition.into()),
            bucket,
            offset,
        }
    }

    /// Whether this names `bucket` of the partition `(id, name)` (both None: no partitions).
    pub(crate) fn names(&self, id: Option<i64>, name: Option<&str>, bucket: i32) -> bool {
        if self.bucket != bucket {
            return false;
        }
        match (&self.partition_name, self.partition_id) {
            (Some(n), _) => Some(n.as_str()) == name,
            (None, Some(i)) => Some(i) == id,
            (None, None) => id.is_none(),
        }
    }
}

impl std::fmt::Display for BucketOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.partition_name, self.partition_id) {
            (Some(n), _) => write!(f, "partition '{n}' ")?,
            (None, Some(i)) => write!(f, "partition id {i} ")?,
            (None, None) => {}
        }
        write!(f, "bucket {} offset {}", self.bucket, self.offset)
    }
}

/// Everything a subscription can ask for. `SubscribeRequest::default()` subscribes to every
/// column, partition and bucket from [`StartupMode::Full`] (Fluss's default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubscribeRequest {
    /// Columns to return, in this order (None: all).
    pub columns: Option<Vec<String>>,
    /// Partitions to read, by name or spec (None: all that exist when subscribing).
    pub partitions: Option<Vec<PartitionSelector>>,
    /// Buckets to read in every partition (None: all).
    pub buckets: Option<Vec<i32>>,
    /// Where buckets without an entry in `start_offsets` start.
    pub startup_mode: StartupMode,
    /// Explicit next offsets of some buckets (e.g. a restored checkpoint): these buckets start
    /// there, whatever the startup mode. Each must name a bucket the subscription reads.
    pub start_offsets: Vec<BucketOffset>,
}

impl SubscribeRequest {
    /// A subscription to everything from `mode`.
    pub fn new(mode: StartupMode) -> SubscribeRequest {
        SubscribeRequest {
            startup_mode: mode,
            ..SubscribeRequest::default()
        }
    }

    /// A request from string options, keyed as in [`SUBSCRIBE_OPTION_KEYS`]: `columns`,
    /// `partitions`, `buckets` comma separated; `scan.startup.mode` = `full` | `earliest` |
    /// `latest` | `timestamp` with `scan.startup.timestamp` (epoch milliseconds or
    /// `yyyy-MM-dd HH:mm:ss` in `time-zone`), as Fluss's Flink connector takes them.
    pub fn from_options<K, V>(options: impl IntoIterator<Item = (K, V)>) -> Result<SubscribeRequest>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut r = SubscribeRequest::default();
        let (mut mode, mut timestamp, mut zone) = (None, None, None);
        for (k, v) in options {
            let (key, value) = (k.as_ref(), v.as_ref());
            match key {
                "columns" => r.columns = Some(list(value)),
                "partitions" => {
                    r.partitions = Some(list(value).into_iter().map(Into::into).collect())
                }
                "buckets" => r.buckets = Some(bucket_list(key, value)?),
                "scan.startup.mode" => mode = Some(value.to_string()),
                "scan.startup.timestamp" => timestamp = Some(value.to_string()),
                "time-zone" => zone = Some(value.to_string()),
                _ => return Err(unknown_key(key, SUBSCRIBE_OPTION_KEYS)),
            }
        }
        let zone = match zone {
            Some(z) => TimeZoneSpec::parse(&z)?,
            None => TimeZoneSpec::Local,
        };
        r.startup_mode = StartupMode::from_options(mode.as_deref(), timestamp.as_deref(), &zone)?;
        Ok(r)
    }
}

/// The buckets a read or subscription covers: all of the table's, or the selected ones
/// (ascending, each once); a bucket the table does not have is an invalid-argument error.
pub(crate) fn select_buckets(table: &Table, selected: Option<&[i32]>) -> Result<Vec<i32>> {
    let n = table.info.num_buckets();
    let Some(sel) = selected else {
        return Ok((0..n).collect());
    };
    if let Some(bad) = sel.iter().find(|b| !(0..n).contains(*b)) {
        crate::bail_invalid!(
            "bucket {bad} does not exist in table '{}', which has {n} bucket(s) (0..={})",
            table_name(table),
            n - 1
        );
    }
    let mut out = sel.to_vec();
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn bucket_list(key: &str, value: &str) -> Result<Vec<i32>> {
    list(value)
        .iter()
        .map(|b| {
            b.parse::<i32>().map_err(|_| {
                Error::invalid(format!(
                    "option '{key}': '{b}' is not a bucket id (a comma-separated list of \
                     integers, e.g. '0,2')"
                ))
            })
        })
        .collect()
}

fn number(key: &str, value: &str) -> Result<usize> {
    value.trim().parse::<usize>().map_err(|_| {
        Error::invalid(format!(
            "option '{key}': '{value}' is not a non-negative integer"
        ))
    })
}

fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::invalid(format!(
            "option '{key}': '{value}' is not a boolean (true or false)"
        ))),
    }
}

fn unknown_key(key: &str, known: &[&str]) -> Error {
    Error::invalid(format!(
        "unknown option '{key}'; the options are: {}",
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_options_parse_fluss_names() {
        let r = ReadRequest::from_options([
            ("columns", "a, b"),
            ("buckets", "2,0"),
            ("scan.incremental.start.timestamp", "2024-01-01 00:00:00"),
            ("scan.incremental.end.timestamp", "1704070800000"),
            ("time-zone", "UTC"),
            ("read.optimized", "FALSE"),
            ("changelog", "true"),
            ("limit", "7"),
            ("batch-size", "100"),
            ("partitions", "2024$eu,2025$us"),
            ("filter", "a > 1"),
        ])
        .unwrap();
        assert_eq!(r.columns, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(r.buckets, Some(vec![2, 0]));
        assert_eq!(r.start, Some(TimePoint::Text("2024-01-01 00:00:00".into())));
        assert_eq!(r.end, Some(TimePoint::Text("1704070800000".into())));
        assert!(r.changelog && !r.read_optimized);
        assert_eq!((r.limit, r.batch_size), (Some(7), Some(100)));
        assert_eq!(
            r.partitions,
            Some(vec!["2024$eu".into(), PartitionSelector::from("2025$us")])
        );
        assert_eq!(r.filter, Some(Filter::Text("a > 1".into())));
    }

    #[test]
    fn bad_options_name_the_key_and_value() {
        let e = ReadRequest::from_options([("colums", "a")]).unwrap_err();
        assert!(e.message().contains("'colums'"), "{e}");
        assert!(e.message().contains("columns"), "{e}");
        let e = ReadRequest::from_options([("buckets", "1,x")]).unwrap_err();
        assert!(e.message().contains("'x'"), "{e}");
        let e = ReadRequest::from_options([("read.optimized", "yes")]).unwrap_err();
        assert!(e.message().contains("'yes'"), "{e}");
        let e = ReadRequest::from_options([("limit", "-1")]).unwrap_err();
        assert!(e.message().contains("'-1'"), "{e}");
    }

    #[test]
    fn subscribe_options_parse_startup_words() {
        let r = SubscribeRequest::from_options([("scan.startup.mode", "Earliest")]).unwrap();
        assert_eq!(r.startup_mode, StartupMode::Earliest);
        assert_eq!(
            SubscribeRequest::from_options(Vec::<(String, String)>::new())
                .unwrap()
                .startup_mode,
            StartupMode::Full
        );
        let r = SubscribeRequest::from_options([
            ("scan.startup.mode", "timestamp"),
            ("scan.startup.timestamp", "2023-12-09 23:09:12"),
            ("time-zone", "+08:00"),
            ("buckets", "1"),
        ])
        .unwrap();
        // 2023-12-09 15:09:12 UTC
        assert_eq!(r.startup_mode, StartupMode::Timestamp(1_702_134_552_000));
        assert_eq!(r.buckets, Some(vec![1]));
        let e = SubscribeRequest::from_options([("scan.startup.mode", "timestamp")]).unwrap_err();
        assert!(e.message().contains("scan.startup.timestamp"), "{e}");
        let e = SubscribeRequest::from_options([("scan.startup.mode", "newest")]).unwrap_err();
        assert!(e.message().contains("newest"), "{e}");
    }

    #[test]
    fn bucket_offsets_match_by_name_then_id() {
        let o = BucketOffset::in_partition("2024", 1, 5);
        assert!(o.names(Some(9), Some("2024"), 1));
        assert!(!o.names(Some(9), Some("2025"), 1));
        assert!(!o.names(Some(9), Some("2024"), 0));
        let by_id = BucketOffset {
            partition_id: Some(9),
            ..BucketOffset::new(1, 5)
        };
        assert!(by_id.names(Some(9), Some("x"), 1));
        assert!(!by_id.names(Some(8), Some("x"), 1));
        assert!(BucketOffset::new(0, 1).names(None, None, 0));
        assert!(!BucketOffset::new(0, 1).names(Some(1), Some("p"), 0));
    }
}
