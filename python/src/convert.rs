//! Python values to the core's types: filter literals and expressions (the pyarrow/pandas
//! `filters=` convention), time points of a time-range read, startup modes.
//!
//! Only conversion happens here: parsing timestamp texts, validating windows, evaluating and
//! pruning filters are the core's (`riverlet::scan::{time, expr}`).

use chrono::{FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};
use riverlet::scan::{parse_filter, Expr, Literal, StartupMode, TermOp, TimePoint, TimeZoneSpec};
use riverlet::Error;

use crate::errors::to_py_err;

struct PyTypes {
    datetime: Py<PyAny>,
    date: Py<PyAny>,
    time: Py<PyAny>,
    decimal: Py<PyAny>,
}

static TYPES: PyOnceLock<PyTypes> = PyOnceLock::new();

fn types(py: Python<'_>) -> PyResult<&PyTypes> {
    TYPES.get_or_try_init(py, || {
        let dt = py.import("datetime")?;
        let dec = py.import("decimal")?;
        Ok(PyTypes {
            datetime: dt.getattr("datetime")?.unbind(),
            date: dt.getattr("date")?.unbind(),
            time: dt.getattr("time")?.unbind(),
            decimal: dec.getattr("Decimal")?.unbind(),
        })
    })
}

fn invalid(msg: impl Into<String>) -> PyErr {
    to_py_err(Error::invalid(msg))
}

fn describe(v: &Bound<'_, PyAny>) -> String {
    let ty = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    let repr = v
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    format!("{repr} (of type {ty})")
}

fn get_i64(v: &Bound<'_, PyAny>, attr: &str) -> PyResult<i64> {
    v.getattr(attr)?.extract::<i64>()
}

/// An integer argument converted to `T`, or an invalid-argument error naming the argument and
/// the value (instead of Python's bare `OverflowError`/`TypeError`).
pub fn int_arg<T: TryFrom<i128>>(v: &Bound<'_, PyAny>, what: &str, expected: &str) -> PyResult<T> {
    let bad = || invalid(format!("{what} must be {expected}, got {}", describe(v)));
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(bad());
    }
    let n = v.extract::<i128>().map_err(|_| bad())?;
    T::try_from(n).map_err(|_| bad())
}

fn to_u32(v: i64, what: &str) -> PyResult<u32> {
    u32::try_from(v).map_err(|_| invalid(format!("{what} {v} is out of range")))
}

/// A Python `date` as a chrono date.
fn naive_date(v: &Bound<'_, PyAny>) -> PyResult<NaiveDate> {
    let (y, m, d) = (
        get_i64(v, "year")?,
        get_i64(v, "month")?,
        get_i64(v, "day")?,
    );
    i32::try_from(y)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, to_u32(m, "month").ok()?, to_u32(d, "day").ok()?))
        .ok_or_else(|| invalid(format!("invalid date {}", describe(v))))
}

/// Nanoseconds within the second of a `time` / `datetime` (pandas Timestamps add `nanosecond`).
fn sub_second_nanos(v: &Bound<'_, PyAny>) -> PyResult<u32> {
    let micros = get_i64(v, "microsecond")?;
    let nanos = match v.getattr("nanosecond") {
        Ok(n) => n.extract::<i64>().unwrap_or(0),
        Err(_) => 0,
    };
    to_u32(micros * 1000 + nanos, "sub-second nanoseconds")
}

/// The wall-clock part of a Python `time` / `datetime`.
fn naive_time(v: &Bound<'_, PyAny>) -> PyResult<NaiveTime> {
    let (h, m, s) = (
        get_i64(v, "hour")?,
        get_i64(v, "minute")?,
        get_i64(v, "second")?,
    );
    let ns = sub_second_nanos(v)?;
    NaiveTime::from_hms_nano_opt(
        to_u32(h, "hour")?,
        to_u32(m, "minute")?,
        to_u32(s, "second")?,
        ns,
    )
    .ok_or_else(|| invalid(format!("invalid time {}", describe(v))))
}

/// The UTC offset of an aware `datetime`, None when it is naive.
fn utc_offset(v: &Bound<'_, PyAny>) -> PyResult<Option<FixedOffset>> {
    let off = v.call_method0("utcoffset")?;
    if off.is_none() {
        return Ok(None);
    }
    let secs = get_i64(&off, "days")? * 86_400 + get_i64(&off, "seconds")?;
    let secs = i32::try_from(secs).ok().and_then(FixedOffset::east_opt);
    secs.map(Some)
        .ok_or_else(|| invalid(format!("unsupported UTC offset of {}", describe(v))))
}

/// A Python datetime: its wall clock and, when aware, its offset.
fn datetime_parts(v: &Bound<'_, PyAny>) -> PyResult<(NaiveDateTime, Option<FixedOffset>)> {
    let wall = NaiveDateTime::new(naive_date(v)?, naive_time(v)?);
    Ok((wall, utc_offset(v)?))
}

fn aware(
    wall: NaiveDateTime,
    off: FixedOffset,
    v: &Bound<'_, PyAny>,
) -> PyResult<chrono::DateTime<FixedOffset>> {
    off.from_local_datetime(&wall)
        .single()
        .ok_or_else(|| invalid(format!("datetime {} is out of range", describe(v))))
}

/// One bound of a time-range read (or a subscription start), as the core accepts it: an
/// `int` of epoch milliseconds, a `str` (core parses it in the read's zone), a `datetime`
/// (naive: wall clock in the zone; aware, pandas `Timestamp` included: its own offset) or a
/// `date`.
pub fn time_point(v: &Bound<'_, PyAny>, what: &str) -> PyResult<TimePoint> {
    let py = v.py();
    let t = types(py)?;
    if v.is_instance_of::<PyBool>() {
        return Err(invalid(format!(
            "Invalid value for '{what}': {} is not a timestamp",
            describe(v)
        )));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(TimePoint::EpochMillis(int_arg(
            v,
            &format!("'{what}'"),
            "epoch milliseconds within the 64-bit range",
        )?));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(TimePoint::Text(s.to_cow()?.into_owned()));
    }
    if v.is_instance(t.datetime.bind(py))? {
        let (wall, off) = datetime_parts(v)?;
        return Ok(match off {
            Some(off) => TimePoint::Instant(aware(wall, off, v)?),
            None => TimePoint::Naive(wall),
        });
    }
    if v.is_instance(t.date.bind(py))? {
        return Ok(TimePoint::Date(naive_date(v)?));
    }
    Err(invalid(format!(
        "Invalid value for '{what}': {}. Give epoch milliseconds (int), a 'yyyy-MM-dd HH:mm:ss' \
         string, a datetime, a date or a pandas Timestamp.",
        describe(v)
    )))
}

/// A subscription start: a `str` the core reads as a startup word (`"full"`, `"earliest"`,
/// `"latest"`) or a timestamp text in `tz`, or any other form [`time_point`] accepts.
pub fn startup_mode(v: &Bound<'_, PyAny>, tz: Option<&str>) -> PyResult<StartupMode> {
    let zone = match tz {
        Some(z) => TimeZoneSpec::parse(z).map_err(to_py_err)?,
        None => TimeZoneSpec::Local,
    };
    if let Ok(s) = v.cast::<PyString>() {
        return StartupMode::from_text(&s.to_cow()?, &zone).map_err(to_py_err);
    }
    let ms = time_point(v, "start")?
        .resolve(&zone, "start")
        .map_err(to_py_err)?;
    Ok(StartupMode::Timestamp(ms))
}

/// A filter literal from a Python value.
pub fn literal(v: &Bound<'_, PyAny>) -> PyResult<Literal> {
    let py = v.py();
    let t = types(py)?;
    if v.is_none() {
        return Ok(Literal::Null);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Literal::Boolean(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(Literal::Int)
            .map_err(|_| invalid(format!("integer {} does not fit in 64 bits", describe(v))));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(Literal::Float(f.value()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Literal::String(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(Literal::Binary(b.as_bytes().to_vec()));
    }
    if v.is_instance(t.decimal.bind(py))? {
        return decimal_literal(v);
    }
    if v.is_instance(t.datetime.bind(py))? {
        let (wall, off) = datetime_parts(v)?;
        return Ok(match off {
            Some(off) => Literal::timestamp_ltz(aware(wall, off, v)?),
            None => Literal::timestamp(wall),
        });
    }
    if v.is_instance(t.date.bind(py))? {
        return Ok(Literal::date(naive_date(v)?));
    }
    if v.is_instance(t.time.bind(py))? {
        let tm = naive_time(v)?;
        let nanos = i64::from(chrono::Timelike::num_seconds_from_midnight(&tm)) * 1_000_000_000
            + i64::from(chrono::Timelike::nanosecond(&tm));
        return Ok(Literal::Time(nanos));
    }
    // numpy scalars and similar: use their Python value.
    if let Ok(item) = v.call_method0("item") {
        if !item.is(v) {
            return literal(&item);
        }
    }
    Err(invalid(format!("unsupported filter value {}", describe(v))))
}

fn decimal_literal(v: &Bound<'_, PyAny>) -> PyResult<Literal> {
    let tuple = v.call_method0("as_tuple")?;
    let sign: i64 = tuple.getattr("sign")?.extract()?;
    let exponent = tuple.getattr("exponent")?;
    let exponent: i64 = exponent
        .extract()
        .map_err(|_| invalid(format!("decimal {} is not finite", describe(v))))?;
    let digits: Vec<u8> = tuple.getattr("digits")?.extract()?;
    let mut unscaled: i128 = 0;
    let overflow = || invalid(format!("decimal {} has too many digits", describe(v)));
    for d in digits {
        unscaled = unscaled
            .checked_mul(10)
            .and_then(|u| u.checked_add(i128::from(d)))
            .ok_or_else(overflow)?;
    }
    let mut scale = -exponent;
    while scale < 0 {
        unscaled = unscaled.checked_mul(10).ok_or_else(overflow)?;
        scale += 1;
    }
    let scale = i8::try_from(scale).map_err(|_| overflow())?;
    if sign == 1 {
        unscaled = -unscaled;
    }
    Ok(Literal::decimal(unscaled, scale))
}

fn values(v: &Bound<'_, PyAny>, column: &str, op: &str) -> PyResult<Vec<Literal>> {
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        return Err(invalid(format!(
            "filter ({column:?}, {op:?}, ...) needs a list of values, got {}",
            describe(v)
        )));
    }
    let mut out = Vec::new();
    for item in v.try_iter().map_err(|_| {
        invalid(format!(
            "filter ({column:?}, {op:?}, ...) needs a list of values, got {}",
            describe(v)
        ))
    })? {
        out.push(literal(&item?)?);
    }
    Ok(out)
}

/// One `(column, op, value)` tuple.
fn predicate(item: &Bound<'_, PyAny>) -> PyResult<Expr> {
    let parts: Vec<Bound<'_, PyAny>> = match item.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => match item.cast::<PyList>() {
            Ok(l) => l.iter().collect(),
            Err(_) => {
                return Err(invalid(format!(
                    "a filter term must be a (column, op, value) tuple, got {}",
                    describe(item)
                )))
            }
        },
    };
    if parts.len() < 2 || parts.len() > 3 {
        return Err(invalid(format!(
            "a filter term must be a (column, op, value) tuple, got {}",
            describe(item)
        )));
    }
    let column: String = parts[0].extract().map_err(|_| {
        invalid(format!(
            "the column of filter term {} must be a str",
            describe(item)
        ))
    })?;
    let op_text: String = parts[1].extract().map_err(|_| {
        invalid(format!(
            "the operator of filter term {} must be a str",
            describe(item)
        ))
    })?;
    let op = TermOp::parse(&op_text)
        .map_err(|e| invalid(format!("{} (in {})", e.message(), describe(item))))?;
    let values = match (op.takes_value(), parts.get(2)) {
        (false, _) => Vec::new(),
        (true, None) => {
            return Err(invalid(format!(
                "filter ({column:?}, {op_text:?}) needs a value"
            )))
        }
        (true, Some(v)) if op.takes_list() => values(v, &column, &op_text)?,
        (true, Some(v)) => vec![literal(v)?],
    };
    op.term(&column, values).map_err(to_py_err)
}

fn is_term(v: &Bound<'_, PyAny>) -> bool {
    // A term is a tuple whose first element is a column name; a conjunction is a list of terms.
    match v.cast::<PyTuple>() {
        Ok(t) => t
            .get_item(0)
            .map(|c| c.is_instance_of::<PyString>())
            .unwrap_or(false),
        Err(_) => false,
    }
}

fn conjunction(v: &Bound<'_, PyAny>) -> PyResult<Expr> {
    let mut parts = Vec::new();
    for item in v.try_iter()? {
        parts.push(predicate(&item?)?);
    }
    Ok(match parts.len() {
        1 => parts.remove(0),
        _ => Expr::And(parts),
    })
}

/// The core filter of a `filter=` argument: a `str` in the core's text form (`"a = 1 AND b IN
/// ('x')"`), a `(column, op, value)` tuple, a list of tuples (AND), or a list of lists of tuples
/// (OR of ANDs) as in `pyarrow.parquet` / pandas `filters=`.
pub fn filter_expr(v: &Bound<'_, PyAny>) -> PyResult<Option<Expr>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(s) = v.cast::<PyString>() {
        return parse_filter(&s.to_cow()?).map(Some).map_err(to_py_err);
    }
    if is_term(v) {
        return predicate(v).map(Some);
    }
    if !v.is_instance_of::<PyList>() && !v.is_instance_of::<PyTuple>() {
        return Err(invalid(format!(
            "filter must be a str, a (column, op, value) tuple, a list of them (AND) or a list of \
             lists of them (OR of ANDs); got {}",
            describe(v)
        )));
    }
    let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
    if items.is_empty() {
        return Ok(None);
    }
    if items.iter().all(is_term) {
        return conjunction(v).map(Some);
    }
    let mut ors = Vec::new();
    for group in &items {
        if is_term(group) {
            ors.push(predicate(group)?);
        } else {
            ors.push(conjunction(group)?);
        }
    }
    Ok(Some(match ors.len() {
        1 => ors.remove(0),
        _ => Expr::Or(ors),
    }))
}
