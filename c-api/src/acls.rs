//! ACLs (the server needs `authorizer.enabled`): add one, list and drop the ones matching a
//! filter. The texts are parsed by `riverlet::acl` (`AclBinding::parse`, `AclFilter::parse`).
//! A refusal by the server's authorizer is `RIVERLET_STATUS_AUTHENTICATION` with
//! `riverlet_last_error_fluss_code()` 48 (AUTHORIZATION_EXCEPTION) and a message naming the
//! principal, the operation and the resource.

use std::ffi::c_char;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use riverlet::acl::{AclBinding, AclFilter};
use riverlet::blocking::BatchReader;

use crate::args::{non_null, opt_str_arg, str_arg};
use crate::arrow_io::export_stream;
use crate::connection::{connection, RiverletConnection};
use crate::error::{guard, CallResult, RiverletStatus};

/// The bindings as one batch of utf8 columns resource, principal, operation, host, permission.
fn acl_stream(bindings: &[AclBinding]) -> CallResult<BatchReader> {
    let names = ["resource", "principal", "operation", "host", "permission"];
    let schema = Arc::new(Schema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let column = |f: &dyn Fn(&AclBinding) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(bindings.iter().map(f)))
    };
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            column(&|b| b.resource.text()),
            column(&|b| b.principal.to_string()),
            column(&|b| b.operation.to_string()),
            column(&|b| b.host.clone()),
            column(&|b| b.permission.to_string()),
        ],
    )?;
    Ok(BatchReader::from_batches(schema, vec![batch]))
}

/// The filter of five optional texts.
///
/// # Safety
/// Each pointer NULL or a NUL-terminated string.
unsafe fn filter(
    resource: *const c_char,
    principal: *const c_char,
    operation: *const c_char,
    host: *const c_char,
    permission: *const c_char,
) -> CallResult<AclFilter> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok(AclFilter::parse(
            opt_str_arg(resource, "resource")?,
            opt_str_arg(principal, "principal")?,
            opt_str_arg(operation, "operation")?,
            opt_str_arg(host, "host")?,
            opt_str_arg(permission, "permission")?,
        )?)
    }
}

/// Allows `principal` (`Type:name`, e.g. `User:alice`) `operation` (`READ`, `WRITE`, `CREATE`,
/// `DROP`, `ALTER`, `DESCRIBE` or `ALL`) on `resource` (`cluster`, `cluster.db` or
/// `cluster.db.table`) from `host` (NULL: every host). Needs ALTER on the resource (a table's:
/// its database).
///
/// # Safety
/// `connection` a live handle; the strings NUL-terminated (`host` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn riverlet_create_acl(
    connection: *const RiverletConnection,
    resource: *const c_char,
    principal: *const c_char,
    operation: *const c_char,
    host: *const c_char,
) -> RiverletStatus {
    guard(|| {
        let c = self::connection(connection)?;
        // SAFETY: C strings per the function's contract.
        let b = unsafe {
            AclBinding::parse(
                str_arg(resource, "resource")?,
                str_arg(principal, "principal")?,
                str_arg(operation, "operation")?,
                opt_str_arg(host, "host")?,
            )
        }?;
        Ok(c.admin().create_acls(std::slice::from_ref(&b))?)
    })
}

/// Writes the ACLs matching the filter (each argument NULL or `ANY`: everything) on the
/// resources the caller may DESCRIBE to `*out_stream`: utf8 columns resource, principal,
/// operation, host, permission.
///
/// # Safety
/// `connection` a live handle; the strings NULL or NUL-terminated; `out_stream` writable.
#[no_mangle]
pub unsafe extern "C" fn riverlet_list_acls(
    connection: *const RiverletConnection,
    resource: *const c_char,
    principal: *const c_char,
    operation: *const c_char,
    host: *const c_char,
    permission: *const c_char,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| {
        non_null(out_stream.cast_const(), "out_stream")?;
        let c = self::connection(connection)?;
        // SAFETY: C strings per the function's contract.
        let f = unsafe { filter(resource, principal, operation, host, permission) }?;
        let found = c.admin().list_acls(&f)?;
        // SAFETY: checked non-NULL; caller-allocated per the function's contract.
        unsafe { export_stream(Box::new(acl_stream(&found)?), out_stream) }
    })
}

/// Removes the ACLs matching the filter (as [`riverlet_list_acls`]) and writes them to
/// `*out_stream` (same columns). Needs ALTER on each matched resource (a table's: its
/// database).
///
/// # Safety
/// As [`riverlet_list_acls`].
#[no_mangle]
pub unsafe extern "C" fn riverlet_drop_acls(
    connection: *const RiverletConnection,
    resource: *const c_char,
    principal: *const c_char,
    operation: *const c_char,
    host: *const c_char,
    permission: *const c_char,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| {
        non_null(out_stream.cast_const(), "out_stream")?;
        let c = self::connection(connection)?;
        // SAFETY: C strings per the function's contract.
        let f = unsafe { filter(resource, principal, operation, host, permission) }?;
        let gone = c.admin().drop_acls(&[f])?;
        // SAFETY: checked non-NULL; caller-allocated per the function's contract.
        unsafe { export_stream(Box::new(acl_stream(&gone)?), out_stream) }
    })
}
