//! Timestamps and time ranges of commit time, as described in `docs/concepts/time-range.md`.
//!
//! A time-range read covers the window `[start, end)` of commit time (epoch milliseconds).
//! [`TimePoint`] is one bound as the caller gave it: epoch milliseconds (an integer, or a string
//! of digits), a `yyyy-MM-dd HH:mm:ss` text (also `yyyy-MM-ddTHH:mm:ss`, with optional fractional
//! seconds, and with an optional trailing `Z` / `+08:00` offset, which then wins over the zone),
//! a `yyyy-MM-dd` date (the start of that day), a date, a naive date-time (a wall clock) or an
//! aware date-time / instant. Texts, dates and naive date-times are read in a [`TimeZoneSpec`].
//!
//! **Default zone.** When the caller gives no zone, the process's local zone is used, as chrono
//! finds it: the `TZ` environment variable when set (an IANA name such as `Asia/Shanghai`, or a
//! POSIX TZ string), otherwise the system zone (`/etc/localtime`). Set it per read with
//! `ScanBuilder::time_zone("UTC")` (or an IANA name, or an offset like `+08:00`), or for the
//! whole process with `TZ`.
//!
//! Wall clocks that a zone skips (a daylight-saving gap) are moved forward by the length of the
//! gap, and wall clocks that occur twice take the earlier instant — as `java.time` does.
//!
//! [`TimeRange`] validates a window (the invalid windows of that page); [`TimeRange::pin`]
//! fixes an omitted end to "now" when the read is planned and rejects a start in the future.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc};

use crate::{Error, Result, Warning, WarningKind};

/// The accepted forms, quoted in every parse error.
const ACCEPTED: &str = "It should be epoch milliseconds or follow the format \
'yyyy-MM-dd HH:mm:ss', e.g. '2023-12-09 23:09:12' or '1678883047356' (also accepted: \
'yyyy-MM-dd', a 'T' between date and time, fractional seconds, and a trailing 'Z' or \
'+hh:mm' offset).";

/// The time zone in which wall-clock texts, dates and naive date-times are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeZoneSpec {
    /// The process's local zone (the `TZ` environment variable, else the system zone).
    #[default]
    Local,
    /// UTC.
    Utc,
    /// A fixed offset from UTC, e.g. `+08:00`.
    Fixed(FixedOffset),
    /// An IANA zone, e.g. `Asia/Shanghai`.
    Named(chrono_tz::Tz),
}

impl TimeZoneSpec {
    /// Parses `"local"`, `"UTC"` / `"Z"`, an offset (`+08:00`, `-0530`, `+8`, `UTC+08:00`) or an
    /// IANA name (`Europe/Berlin`).
    pub fn parse(text: &str) -> Result<TimeZoneSpec> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("local") {
            return Ok(TimeZoneSpec::Local);
        }
        if t.eq_ignore_ascii_case("utc") || t.eq_ignore_ascii_case("z") || t == "GMT" {
            return Ok(TimeZoneSpec::Utc);
        }
        let offset_part = t
            .strip_prefix("UTC")
            .or_else(|| t.strip_prefix("GMT"))
            .unwrap_or(t);
        if offset_part.starts_with(['+', '-']) {
            if let Some(off) = parse_offset(offset_part) {
                return Ok(TimeZoneSpec::Fixed(off));
            }
        }
        if let Ok(tz) = t.parse::<chrono_tz::Tz>() {
            return Ok(TimeZoneSpec::Named(tz));
        }
        Err(Error::invalid(format!(
            "unknown time zone '{text}': use an IANA name such as 'Asia/Shanghai', 'UTC', an \
             offset such as '+08:00', or 'local'"
        )))
    }

    /// The instant (epoch ms) of wall clock `wall` in this zone.
    pub fn wall_to_millis(&self, wall: NaiveDateTime) -> i64 {
        fn resolve<Z: TimeZone>(zone: &Z, wall: NaiveDateTime) -> i64 {
            match zone.from_local_datetime(&wall) {
                LocalResult::Single(t) => t.timestamp_millis(),
                LocalResult::Ambiguous(a, b) => a.timestamp_millis().min(b.timestamp_millis()),
                LocalResult::None => {
                    // In a gap: read the wall clock with the offset in force before the gap,
                    // which moves it forward by the gap's length.
                    let probe = wall - chrono::Duration::days(1);
                    let before = zone.offset_from_utc_datetime(&probe).fix();
                    (wall - chrono::Duration::seconds(before.local_minus_utc() as i64))
                        .and_utc()
                        .timestamp_millis()
                }
            }
        }
        match self {
            TimeZoneSpec::Local => resolve(&chrono::Local, wall),
            TimeZoneSpec::Utc => wall.and_utc().timestamp_millis(),
            TimeZoneSpec::Fixed(off) => resolve(off, wall),
            TimeZoneSpec::Named(tz) => resolve(tz, wall),
        }
    }

    /// Formats epoch milliseconds as `yyyy-MM-dd HH:mm:ss.SSS` in this zone with its offset.
    pub fn format_millis(&self, millis: i64) -> String {
        let Some(utc) = DateTime::<Utc>::from_timestamp_millis(millis) else {
            return format!("{millis} ms");
        };
        let fmt = "%Y-%m-%d %H:%M:%S%.3f %:z";
        match self {
            TimeZoneSpec::Local => utc.with_timezone(&chrono::Local).format(fmt).to_string(),
            TimeZoneSpec::Utc => utc.format(fmt).to_string(),
            TimeZoneSpec::Fixed(off) => utc.with_timezone(off).format(fmt).to_string(),
            TimeZoneSpec::Named(tz) => utc.with_timezone(tz).format(fmt).to_string(),
        }
    }
}

impl FromStr for TimeZoneSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        TimeZoneSpec::parse(s)
    }
}

impl fmt::Display for TimeZoneSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeZoneSpec::Local => f.write_str("local"),
            TimeZoneSpec::Utc => f.write_str("UTC"),
            TimeZoneSpec::Fixed(off) => write!(f, "{off}"),
            TimeZoneSpec::Named(tz) => f.write_str(tz.name()),
        }
    }
}

impl From<chrono_tz::Tz> for TimeZoneSpec {
    fn from(tz: chrono_tz::Tz) -> Self {
        TimeZoneSpec::Named(tz)
    }
}

impl From<FixedOffset> for TimeZoneSpec {
    fn from(off: FixedOffset) -> Self {
        TimeZoneSpec::Fixed(off)
    }
}

/// Parses `+08:00`, `+0800`, `+08`, `-5`, `+05:30:00`.
fn parse_offset(text: &str) -> Option<FixedOffset> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let parts: Vec<&str> = if rest.contains(':') {
        rest.split(':').collect()
    } else if rest.len() == 4 && rest.is_ascii() {
        // `+0800`; a non-ASCII text of 4 bytes cannot be split at byte 2 (nor is it an offset).
        vec![&rest[..2], &rest[2..]]
    } else {
        vec![rest]
    };
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return None;
    }
    let mut secs = 0i32;
    for (i, p) in parts.iter().enumerate() {
        if !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: i32 = p.parse().ok()?;
        if i > 0 && v >= 60 {
            return None;
        }
        secs += v * [3600, 60, 1][i];
    }
    FixedOffset::east_opt(sign * secs)
}

/// One bound of a time range, as the caller gave it.
#[derive(Debug, Clone, PartialEq)]
pub enum TimePoint {
    /// Epoch milliseconds.
    EpochMillis(i64),
    /// Text: epoch-millisecond digits, `yyyy-MM-dd HH:mm:ss[.f]` (or with `T`, optionally with an
    /// offset), or `yyyy-MM-dd`.
    Text(String),
    /// A date: the start of that day in the zone.
    Date(NaiveDate),
    /// A wall clock in the zone.
    Naive(NaiveDateTime),
    /// An instant with its own offset (the zone does not apply).
    Instant(DateTime<FixedOffset>),
}

impl From<i64> for TimePoint {
    fn from(v: i64) -> Self {
        TimePoint::EpochMillis(v)
    }
}
impl From<&str> for TimePoint {
    fn from(v: &str) -> Self {
        TimePoint::Text(v.to_string())
    }
}
impl From<String> for TimePoint {
    fn from(v: String) -> Self {
        TimePoint::Text(v)
    }
}
impl From<&String> for TimePoint {
    fn from(v: &String) -> Self {
        TimePoint::Text(v.clone())
    }
}
impl From<NaiveDate> for TimePoint {
    fn from(v: NaiveDate) -> Self {
        TimePoint::Date(v)
    }
}
impl From<NaiveDateTime> for TimePoint {
    fn from(v: NaiveDateTime) -> Self {
        TimePoint::Naive(v)
    }
}
impl From<DateTime<Utc>> for TimePoint {
    fn from(v: DateTime<Utc>) -> Self {
        TimePoint::Instant(v.fixed_offset())
    }
}
impl From<DateTime<FixedOffset>> for TimePoint {
    fn from(v: DateTime<FixedOffset>) -> Self {
        TimePoint::Instant(v)
    }
}
impl From<DateTime<chrono_tz::Tz>> for TimePoint {
    fn from(v: DateTime<chrono_tz::Tz>) -> Self {
        TimePoint::Instant(v.fixed_offset())
    }
}
impl From<SystemTime> for TimePoint {
    fn from(v: SystemTime) -> Self {
        TimePoint::EpochMillis(system_time_millis(v))
    }
}

fn system_time_millis(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// The current time in epoch milliseconds.
pub fn now_millis() -> i64 {
    system_time_millis(SystemTime::now())
}

impl fmt::Display for TimePoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimePoint::EpochMillis(v) => write!(f, "{v}"),
            TimePoint::Text(t) => f.write_str(t),
            TimePoint::Date(d) => write!(f, "{}", d.format("%Y-%m-%d")),
            TimePoint::Naive(t) => write!(f, "{}", t.format("%Y-%m-%d %H:%M:%S%.f")),
            TimePoint::Instant(t) => write!(f, "{}", t.to_rfc3339()),
        }
    }
}

impl TimePoint {
    /// Resolves the bound to epoch milliseconds; `what` names the argument in errors.
    pub fn resolve(&self, tz: &TimeZoneSpec, what: &str) -> Result<i64> {
        match self {
            TimePoint::EpochMillis(v) => Ok(*v),
            TimePoint::Text(t) => parse_timestamp_named(t, tz, what),
            TimePoint::Date(d) => Ok(tz.wall_to_millis(d.and_time(chrono::NaiveTime::MIN))),
            TimePoint::Naive(t) => Ok(tz.wall_to_millis(*t)),
            TimePoint::Instant(t) => Ok(t.timestamp_millis()),
        }
    }
}

/// Parses a timestamp text to epoch milliseconds (see the module doc for the forms).
pub fn parse_timestamp(text: &str, tz: &TimeZoneSpec) -> Result<i64> {
    parse_timestamp_named(text, tz, "timestamp")
}

fn parse_timestamp_named(text: &str, tz: &TimeZoneSpec, what: &str) -> Result<i64> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::invalid(format!(
            "Invalid value for '{what}': the timestamp must not be blank. Provide epoch \
             milliseconds or a 'yyyy-MM-dd HH:mm:ss' timestamp."
        )));
    }
    let bad = || Error::invalid(format!("Invalid value for '{what}': '{text}'. {ACCEPTED}"));
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i64>().map_err(|_| bad());
    }
    match parse_date_time_text(t) {
        Some(DateTimeText::Date(d)) => Ok(tz.wall_to_millis(d.and_time(chrono::NaiveTime::MIN))),
        Some(DateTimeText::Wall(wall)) => Ok(tz.wall_to_millis(wall)),
        Some(DateTimeText::Instant(at)) => Ok(at.timestamp_millis()),
        None => Err(bad()),
    }
}

/// A date-time text as written, before any zone is applied: what [`parse_date_time_text`]
/// found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateTimeText {
    /// `yyyy-MM-dd`.
    Date(NaiveDate),
    /// A wall clock: `yyyy-MM-dd HH:mm[:ss[.f]]`, with a space or a `T` between date and time.
    Wall(NaiveDateTime),
    /// An instant: a wall clock followed by `Z`, ` UTC` or an offset such as `+08:00`.
    Instant(DateTime<FixedOffset>),
}

/// Reads a date-time text in one of the accepted forms. This is the one definition of those
/// forms: time-range bounds ([`parse_timestamp`]) and the DATE / TIMESTAMP literals and string
/// comparisons of filters both read through it.
pub fn parse_date_time_text(text: &str) -> Option<DateTimeText> {
    let t = text.trim();
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Some(DateTimeText::Date(d));
    }
    // An explicit offset or Z makes the text an instant.
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Some(DateTimeText::Instant(dt));
    }
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(t, fmt) {
            return Some(DateTimeText::Instant(dt));
        }
    }
    if let Some(stripped) = t.strip_suffix('Z').or_else(|| t.strip_suffix(" UTC")) {
        if let Some(wall) = parse_wall(stripped.trim_end()) {
            return Some(DateTimeText::Instant(wall.and_utc().fixed_offset()));
        }
    }
    parse_wall(t).map(DateTimeText::Wall)
}

fn parse_wall(t: &str) -> Option<NaiveDateTime> {
    [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ]
    .iter()
    .find_map(|fmt| NaiveDateTime::parse_from_str(t, fmt).ok())
}

/// A validated window `[start, end)` of commit time; the end may still be open (pinned to "now"
/// when the read is planned, see [`TimeRange::pin`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeRange {
    start_ms: i64,
    end_ms: Option<i64>,
    start_text: String,
    end_text: Option<String>,
    start_name: String,
    tz: TimeZoneSpec,
}

impl TimeRange {
    /// A window from `start` to `end` (None: up to the moment the read is planned), reading texts
    /// and wall clocks in `tz`.
    pub fn new(
        start: impl Into<TimePoint>,
        end: Option<TimePoint>,
        tz: &TimeZoneSpec,
    ) -> Result<TimeRange> {
        Self::named(start.into(), end, tz, "start", "end")
    }

    /// A window from epoch milliseconds.
    pub fn from_millis(start_ms: i64, end_ms: Option<i64>) -> Result<TimeRange> {
        Self::new(
            start_ms,
            end_ms.map(TimePoint::EpochMillis),
            &TimeZoneSpec::Utc,
        )
    }

    /// The window of a pair of optional read options: None when neither is set (a plain read);
    /// an error when only the end is set. `start_name` / `end_name` name the options in errors
    /// (e.g. `scan.incremental.start.timestamp`).
    pub fn from_options(
        start: Option<TimePoint>,
        end: Option<TimePoint>,
        tz: &TimeZoneSpec,
        start_name: &str,
        end_name: &str,
    ) -> Result<Option<TimeRange>> {
        match (start, end) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(Error::invalid(format!(
                "'{end_name}' is set but '{start_name}' is missing. An end timestamp alone \
                 cannot truncate a read: give a start timestamp as well, or drop the end for a \
                 plain read."
            ))),
            (Some(s), e) => Self::named(s, e, tz, start_name, end_name).map(Some),
        }
    }

    fn named(
        start: TimePoint,
        end: Option<TimePoint>,
        tz: &TimeZoneSpec,
        start_name: &str,
        end_name: &str,
    ) -> Result<TimeRange> {
        let start_ms = start.resolve(tz, start_name)?;
        let end_ms = match &end {
            Some(e) => Some(e.resolve(tz, end_name)?),
            None => None,
        };
        let start_text = start.to_string();
        let end_text = end.as_ref().map(ToString::to_string);
        if let (Some(e), Some(et)) = (end_ms, &end_text) {
            if start_ms >= e {
                return Err(Error::invalid(format!(
                    "Invalid time range: the start timestamp '{start_text}' ({}) must be strictly \
                     before the end timestamp '{et}' ({}). The window is left-closed right-open \
                     '[start, end)'.",
                    tz.format_millis(start_ms),
                    tz.format_millis(e)
                )));
            }
        }
        Ok(TimeRange {
            start_ms,
            end_ms,
            start_text,
            end_text,
            start_name: start_name.to_string(),
            tz: *tz,
        })
    }

    /// The start, epoch milliseconds (included).
    pub fn start_ms(&self) -> i64 {
        self.start_ms
    }

    /// The end, epoch milliseconds (excluded), when one was given.
    pub fn end_ms(&self) -> Option<i64> {
        self.end_ms
    }

    /// Fixes the window at planning time: an omitted end becomes the end of the current
    /// millisecond (`now_ms + 1`, excluded), so a row acknowledged in the same millisecond as the
    /// read is planned is inside the window (the bucket's high watermark at planning time keeps
    /// later rows out); a start after `now_ms` is an error (only committed data can be read).
    pub fn pin(&self, now_ms: i64) -> Result<PinnedRange> {
        if self.start_ms > now_ms {
            return Err(Error::invalid(format!(
                "Invalid time range: the start timestamp '{}' ({}) of '{}' is in the future (now \
                 is {}); a time-range read covers data committed so far.",
                self.start_text,
                self.tz.format_millis(self.start_ms),
                self.start_name,
                self.tz.format_millis(now_ms)
            )));
        }
        Ok(PinnedRange {
            start_ms: self.start_ms,
            end_ms: self.end_ms.unwrap_or(now_ms.saturating_add(1)),
        })
    }
}

impl fmt::Display for TimeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}, {})",
            self.tz.format_millis(self.start_ms),
            match self.end_ms {
                Some(e) => self.tz.format_millis(e),
                None => "now".to_string(),
            }
        )
    }
}

/// A window with both ends fixed: `[start_ms, end_ms)` in epoch milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedRange {
    /// Included start.
    pub start_ms: i64,
    /// Excluded end.
    pub end_ms: i64,
}

impl PinnedRange {
    /// Whether a commit timestamp lies in the window.
    pub fn contains(&self, ts: i64) -> bool {
        ts >= self.start_ms && ts < self.end_ms
    }

    /// Whether a commit timestamp lies at or after the end (reading a bucket can stop there).
    pub fn is_after(&self, ts: i64) -> bool {
        ts >= self.end_ms
    }

    /// Whether the window holds no instant at all.
    pub fn is_empty(&self) -> bool {
        self.start_ms >= self.end_ms
    }
}

impl fmt::Display for PinnedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tz = TimeZoneSpec::Utc;
        write!(
            f,
            "[{} ({}), {} ({}))",
            tz.format_millis(self.start_ms),
            self.start_ms,
            tz.format_millis(self.end_ms),
            self.end_ms
        )
    }
}

/// Logs a warning (and returns true) when the window starts before `now - ttl`, i.e. part of it
/// may already be deleted by `table.log.ttl`. A TTL of None or <= 0 means data is kept forever.
pub fn warn_if_before_retention(
    table: &str,
    range: &PinnedRange,
    ttl_ms: Option<i64>,
    now_ms: i64,
) -> bool {
    retention_warning(table, range, ttl_ms, now_ms).is_some()
}

/// The warning (also logged as a debug `tracing` event) of a window that starts before `now - ttl`,
/// i.e. part of it may already be deleted by `table.log.ttl`; None when the window is within
/// retention or the TTL is None or <= 0 (data kept forever).
pub fn retention_warning(
    table: &str,
    range: &PinnedRange,
    ttl_ms: Option<i64>,
    now_ms: i64,
) -> Option<Warning> {
    let ttl = ttl_ms.filter(|t| *t > 0)?;
    if range.start_ms >= now_ms.saturating_sub(ttl) {
        return None;
    }
    let message = format!(
        "time-range read of table {table}: the window {range} starts before now - table.log.ttl \
         ({}); rows older than the TTL may already be deleted, so the read can return fewer rows \
         than were written in the window (this is a hint: retention runs per segment)",
        format_duration(ttl)
    );
    // Logged at debug only: callers get the warning as data and every binding shows it once.
    tracing::debug!(table = table, window = %range, ttl_ms = ttl, "{message}");
    Some(Warning::new(WarningKind::BeforeRetention, message))
}

/// `7d`, `36h`, `90min`, `1500ms` style text for a duration in milliseconds.
pub fn format_duration(ms: i64) -> String {
    const UNITS: [(i64, &str); 5] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1000, "s"),
        (1, "ms"),
    ];
    for (size, name) in UNITS {
        if ms != 0 && ms % size == 0 {
            return format!("{}{name}", ms / size);
        }
    }
    "0ms".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc() -> TimeZoneSpec {
        TimeZoneSpec::Utc
    }

    #[test]
    fn four_byte_non_ascii_offset_is_an_error_not_a_panic() {
        // Found by the timestamp_text fuzz target: `+` then U+FFFD (3 bytes) then one byte.
        for text in ["+\u{fffd}0", "-é9Z", "UTC+\u{fffd}0"] {
            let e = TimeZoneSpec::parse(text).unwrap_err();
            assert!(e.message().contains(text), "{e}");
        }
    }

    #[test]
    fn zones_parse() {
        assert_eq!(TimeZoneSpec::parse("UTC").unwrap(), TimeZoneSpec::Utc);
        assert_eq!(TimeZoneSpec::parse("local").unwrap(), TimeZoneSpec::Local);
        assert_eq!(
            TimeZoneSpec::parse("+08:00").unwrap(),
            TimeZoneSpec::Fixed(FixedOffset::east_opt(8 * 3600).unwrap())
        );
        assert_eq!(
            TimeZoneSpec::parse("-0530").unwrap(),
            TimeZoneSpec::Fixed(FixedOffset::east_opt(-(5 * 3600 + 1800)).unwrap())
        );
        assert_eq!(
            TimeZoneSpec::parse("UTC+8").unwrap(),
            TimeZoneSpec::Fixed(FixedOffset::east_opt(8 * 3600).unwrap())
        );
        assert_eq!(
            TimeZoneSpec::parse("Asia/Shanghai").unwrap(),
            TimeZoneSpec::Named(chrono_tz::Asia::Shanghai)
        );
        let e = TimeZoneSpec::parse("Mars/Olympus").unwrap_err();
        assert!(e.message().contains("Mars/Olympus"), "{e}");
        assert!(TimeZoneSpec::parse("+25:00").is_err());
    }

    #[test]
    fn every_form_gives_the_same_instant() {
        // 2024-03-01 12:30:00 at +08:00 = 04:30:00Z.
        let expected = DateTime::parse_from_rfc3339("2024-03-01T04:30:00Z")
            .unwrap()
            .timestamp_millis();
        let sh = TimeZoneSpec::parse("Asia/Shanghai").unwrap();
        let plus8 = TimeZoneSpec::parse("+08:00").unwrap();
        for tz in [sh, plus8] {
            for text in [
                "2024-03-01 12:30:00",
                "2024-03-01T12:30:00",
                "2024-03-01 12:30:00.000",
                "2024-03-01 12:30",
                " 2024-03-01 12:30:00 ",
            ] {
                assert_eq!(parse_timestamp(text, &tz).unwrap(), expected, "{text}");
            }
            // Aware texts ignore the zone.
            assert_eq!(
                parse_timestamp("2024-03-01T04:30:00Z", &tz).unwrap(),
                expected
            );
            assert_eq!(
                parse_timestamp("2024-03-01T12:30:00+08:00", &tz).unwrap(),
                expected
            );
            assert_eq!(
                parse_timestamp("2024-03-01 12:30:00+08:00", &tz).unwrap(),
                expected
            );
            assert_eq!(
                parse_timestamp(&expected.to_string(), &tz).unwrap(),
                expected
            );
            let naive =
                NaiveDateTime::parse_from_str("2024-03-01 12:30:00", "%Y-%m-%d %H:%M:%S").unwrap();
            assert_eq!(
                TimePoint::from(naive).resolve(&tz, "start").unwrap(),
                expected
            );
            let aware = DateTime::parse_from_rfc3339("2024-03-01T04:30:00Z").unwrap();
            assert_eq!(TimePoint::from(aware).resolve(&tz, "s").unwrap(), expected);
            assert_eq!(
                TimePoint::from(expected).resolve(&tz, "s").unwrap(),
                expected
            );
        }
        // The same wall clock in UTC is 8 hours later.
        assert_eq!(
            parse_timestamp("2024-03-01 12:30:00", &utc()).unwrap(),
            expected + 8 * 3_600_000
        );
    }

    #[test]
    fn dates_are_start_of_day_in_the_zone() {
        let sh = TimeZoneSpec::parse("Asia/Shanghai").unwrap();
        let d = NaiveDate::from_ymd_opt(2024, 3, 1).unwrap();
        let expected = parse_timestamp("2024-03-01 00:00:00", &sh).unwrap();
        assert_eq!(TimePoint::from(d).resolve(&sh, "s").unwrap(), expected);
        assert_eq!(parse_timestamp("2024-03-01", &sh).unwrap(), expected);
        assert_eq!(
            parse_timestamp("2024-03-01", &utc()).unwrap(),
            1_709_251_200_000
        );
    }

    #[test]
    fn fractional_seconds_and_z() {
        assert_eq!(
            parse_timestamp("1970-01-01 00:00:01.25", &utc()).unwrap(),
            1250
        );
        assert_eq!(
            parse_timestamp("1970-01-01T00:00:01.5Z", &utc()).unwrap(),
            1500
        );
        assert_eq!(
            parse_timestamp("1970-01-01 00:00:02Z", &utc()).unwrap(),
            2000
        );
    }

    #[test]
    fn dst_gap_and_overlap() {
        let ny = TimeZoneSpec::parse("America/New_York").unwrap();
        // 2024-03-10 02:30 does not exist (clocks jump 02:00 -> 03:00): read as 03:30 EDT.
        let gap = parse_timestamp("2024-03-10 02:30:00", &ny).unwrap();
        assert_eq!(
            gap,
            parse_timestamp("2024-03-10T07:30:00Z", &utc()).unwrap()
        );
        // 2024-11-03 01:30 happens twice: the earlier (EDT, -04:00) instant.
        let twice = parse_timestamp("2024-11-03 01:30:00", &ny).unwrap();
        assert_eq!(
            twice,
            parse_timestamp("2024-11-03T05:30:00Z", &utc()).unwrap()
        );
    }

    #[test]
    fn parse_errors_name_the_value_and_forms() {
        let e = parse_timestamp("yesterday", &utc()).unwrap_err();
        assert!(e.message().contains("'yesterday'"), "{e}");
        assert!(e.message().contains("yyyy-MM-dd HH:mm:ss"), "{e}");
        assert!(e.message().contains("epoch milliseconds"), "{e}");
        let e = TimeRange::new("   ", None, &utc()).unwrap_err();
        assert!(e.message().contains("must not be blank"), "{e}");
        assert!(e.message().contains("'start'"), "{e}");
        let e = TimeRange::new("2024-13-01 00:00:00", None, &utc()).unwrap_err();
        assert!(e.message().contains("2024-13-01 00:00:00"), "{e}");
        let e = TimeRange::new(0, Some("nope".into()), &utc()).unwrap_err();
        assert!(
            e.message().contains("'end'") && e.message().contains("'nope'"),
            "{e}"
        );
    }

    #[test]
    fn window_validation() {
        let e = TimeRange::new(2000, Some(TimePoint::EpochMillis(1000)), &utc()).unwrap_err();
        let m = e.message();
        assert!(m.contains("'2000'") && m.contains("'1000'"), "{m}");
        assert!(
            m.contains("strictly before") && m.contains("[start, end)"),
            "{m}"
        );
        assert!(TimeRange::new(1000, Some(TimePoint::EpochMillis(1000)), &utc()).is_err());
        let r = TimeRange::new(1000, Some(TimePoint::EpochMillis(1001)), &utc()).unwrap();
        assert_eq!((r.start_ms(), r.end_ms()), (1000, Some(1001)));

        let e = TimeRange::from_options(
            None,
            Some("1000".into()),
            &utc(),
            "scan.incremental.start.timestamp",
            "scan.incremental.end.timestamp",
        )
        .unwrap_err();
        assert!(
            e.message()
                .contains("'scan.incremental.end.timestamp' is set but")
                && e.message()
                    .contains("'scan.incremental.start.timestamp' is missing"),
            "{e}"
        );
        assert!(TimeRange::from_options(None, None, &utc(), "s", "e")
            .unwrap()
            .is_none());
        assert!(
            TimeRange::from_options(Some(5.into()), None, &utc(), "s", "e")
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn pin_sets_open_end_and_rejects_future_start() {
        let r = TimeRange::from_millis(1000, None).unwrap();
        let p = r.pin(5000).unwrap();
        assert_eq!(
            p,
            PinnedRange {
                start_ms: 1000,
                end_ms: 5001
            }
        );
        // Rows committed in the millisecond of planning are inside the window.
        assert!(p.contains(1000) && p.contains(5000) && !p.contains(5001) && !p.contains(999));
        assert!(p.is_after(5001) && !p.is_after(5000));
        let e = r.pin(500).unwrap_err();
        assert!(e.message().contains("in the future"), "{e}");
        assert!(e.message().contains("'1000'"), "{e}");
        // An explicit end is kept as given.
        let r = TimeRange::from_millis(1000, Some(9000)).unwrap();
        assert_eq!(r.pin(5000).unwrap().end_ms, 9000);
        // A start equal to now with an open end covers that millisecond, not an error.
        let p = TimeRange::from_millis(5000, None)
            .unwrap()
            .pin(5000)
            .unwrap();
        assert!(!p.is_empty() && p.contains(5000));
    }

    #[test]
    fn retention_warning() {
        let day = 86_400_000;
        let now = 100 * day;
        let old = PinnedRange {
            start_ms: now - 8 * day,
            end_ms: now,
        };
        let fresh = PinnedRange {
            start_ms: now - day,
            end_ms: now,
        };
        assert!(warn_if_before_retention("db.t", &old, Some(7 * day), now));
        assert!(!warn_if_before_retention(
            "db.t",
            &fresh,
            Some(7 * day),
            now
        ));
        assert!(!warn_if_before_retention("db.t", &old, Some(0), now));
        assert!(!warn_if_before_retention("db.t", &old, None, now));
        assert_eq!(format_duration(7 * day), "7d");
        assert_eq!(format_duration(1500), "1500ms");
        assert_eq!(format_duration(90 * 60_000), "90min");
    }

    #[test]
    fn local_zone_follows_chrono_local() {
        let wall =
            NaiveDateTime::parse_from_str("2024-06-01 08:00:00", "%Y-%m-%d %H:%M:%S").unwrap();
        let expected = chrono::Local
            .from_local_datetime(&wall)
            .earliest()
            .unwrap()
            .timestamp_millis();
        assert_eq!(
            parse_timestamp("2024-06-01 08:00:00", &TimeZoneSpec::default()).unwrap(),
            expected
        );
    }
}
