//! Converting C arguments (strings, string arrays, key/value arrays, out-pointers) to Rust.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};

use riverlet::Error;

use crate::error::{CallError, CallResult};

/// Fails with `NULL_ARGUMENT` naming `what` when `ptr` is NULL.
pub fn non_null<T>(ptr: *const T, what: &'static str) -> CallResult<()> {
    if ptr.is_null() {
        Err(CallError::Null(what))
    } else {
        Ok(())
    }
}

/// A required NUL-terminated UTF-8 string.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives the call.
pub unsafe fn str_arg<'a>(ptr: *const c_char, what: &'static str) -> CallResult<&'a str> {
    non_null(ptr, what)?;
    // SAFETY: non-NULL and NUL-terminated per the caller's contract.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str()
        .map_err(|_| Error::invalid(format!("argument '{what}' is not valid UTF-8")).into())
}

/// An optional string: NULL is `None`.
///
/// # Safety
/// As [`str_arg`].
pub unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    what: &'static str,
) -> CallResult<Option<&'a str>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { str_arg(ptr, what) }.map(Some)
    }
}

/// An array of `len` strings; `ptr` may be NULL only when `len` is 0. No element may be NULL.
///
/// # Safety
/// `ptr` points to `len` string pointers, each as in [`str_arg`].
pub unsafe fn str_array(
    ptr: *const *const c_char,
    len: usize,
    what: &'static str,
) -> CallResult<Vec<String>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    non_null(ptr, what)?;
    // SAFETY: `ptr` holds `len` pointers per the caller's contract.
    let items = unsafe { std::slice::from_raw_parts(ptr, len) };
    items
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.is_null() {
                return Err(Error::invalid(format!("element {i} of '{what}' is NULL")).into());
            }
            // SAFETY: non-NULL element of a valid array.
            unsafe { str_arg(*p, what) }.map(str::to_string)
        })
        .collect()
}

/// An array of `len` 32-bit integers; `ptr` may be NULL only when `len` is 0.
///
/// # Safety
/// `ptr` points to `len` integers that outlive the call.
pub unsafe fn i32_array(ptr: *const i32, len: usize, what: &'static str) -> CallResult<Vec<i32>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    non_null(ptr, what)?;
    // SAFETY: `ptr` holds `len` integers per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec())
}

/// Parallel arrays of `len` keys and values as an ordered map; a repeated key is an error.
///
/// # Safety
/// As [`str_array`] for both arrays.
pub unsafe fn key_values(
    keys: *const *const c_char,
    values: *const *const c_char,
    len: usize,
    what: &'static str,
) -> CallResult<BTreeMap<String, String>> {
    // SAFETY: forwarded contract.
    let ks = unsafe { str_array(keys, len, what) }?;
    // SAFETY: forwarded contract.
    let vs = unsafe { str_array(values, len, what) }?;
    let mut map = BTreeMap::new();
    for (k, v) in ks.into_iter().zip(vs) {
        if map.contains_key(&k) {
            return Err(Error::invalid(format!("key '{k}' is given twice in '{what}'")).into());
        }
        map.insert(k, v);
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_arrays() {
        let a = c"alpha";
        let b = c"beta";
        let arr = [a.as_ptr(), b.as_ptr()];
        let v = unsafe { str_array(arr.as_ptr(), 2, "cols") }.unwrap();
        assert_eq!(v, vec!["alpha", "beta"]);
        assert!(unsafe { str_array(std::ptr::null(), 0, "cols") }
            .unwrap()
            .is_empty());
        assert!(matches!(
            unsafe { str_array(std::ptr::null(), 1, "cols") },
            Err(CallError::Null("cols"))
        ));
        let with_null = [a.as_ptr(), std::ptr::null()];
        assert!(unsafe { str_array(with_null.as_ptr(), 2, "cols") }.is_err());
        let kv = unsafe { key_values(arr.as_ptr(), arr.as_ptr(), 2, "props") }.unwrap();
        assert_eq!(kv["alpha"], "alpha");
        let dup = [a.as_ptr(), a.as_ptr()];
        assert!(unsafe { key_values(dup.as_ptr(), arr.as_ptr(), 2, "props") }.is_err());
        let bad = [0xffu8, 0];
        assert!(unsafe { str_arg(bad.as_ptr().cast(), "x") }.is_err());
    }
}
