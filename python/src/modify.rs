//! DELETE and UPDATE by condition (`Table.delete_where`, `Table.update_where`): the filter and
//! the assignments are converted here; the rules and the work are the core's
//! (`riverlet::write::Assignments`, `riverlet::blocking::Table::{delete_where, update_where}`).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use riverlet::scan::Expr;
use riverlet::write::Assignments;
use riverlet::Error;

use crate::conn::PyTable;
use crate::convert::{filter_expr, literal};
use crate::errors::{to_py_err, PyResultExt};

/// The condition: any `filter=` form of a read; an empty list means every row.
fn condition(filter: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if filter.is_none() {
        return Err(to_py_err(Error::invalid(
            "delete_where/update_where need a filter; pass [] to match every row",
        )));
    }
    Ok(filter_expr(filter)?.unwrap_or(Expr::And(Vec::new())))
}

/// `{column: value}` (values as filter literals) or the text form `"col = literal, ..."`.
fn assignments(set: &Bound<'_, PyAny>) -> PyResult<Assignments> {
    if let Ok(s) = set.cast::<PyString>() {
        return Assignments::parse(&s.to_cow()?).py_err();
    }
    let Ok(d) = set.cast::<PyDict>() else {
        return Err(to_py_err(Error::invalid(format!(
            "the columns to set are a dict of column to value or a str like \"a = 1, b = 'x'\", \
             not {}",
            set.get_type().name()?
        ))));
    };
    let mut out = Assignments::new();
    for (k, v) in d.iter() {
        let column: String = k.extract().map_err(|_| {
            to_py_err(Error::invalid(format!(
                "the columns to set are named by str keys, not {}",
                k.repr().map(|r| r.to_string()).unwrap_or_default()
            )))
        })?;
        let value = literal(&v).map_err(|e| {
            to_py_err(Error::invalid(format!(
                "the value for column '{column}' cannot be used: {e}"
            )))
        })?;
        out = out.set(column, value);
    }
    Ok(out)
}

/// Deletes the rows matching `filter`; the number deleted.
pub fn delete_where(py: Python<'_>, table: &PyTable, filter: &Bound<'_, PyAny>) -> PyResult<u64> {
    table.ready()?;
    let expr = condition(filter)?;
    let t = table.inner.clone();
    py.detach(move || t.delete_where(&expr)).py_err()
}

/// Sets columns of the rows matching `filter`; the number updated.
pub fn update_where(
    py: Python<'_>,
    table: &PyTable,
    filter: &Bound<'_, PyAny>,
    set: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    table.ready()?;
    let expr = condition(filter)?;
    let set = assignments(set)?;
    let t = table.inner.clone();
    py.detach(move || t.update_where(&expr, &set)).py_err()
}
