//! The server options (`riverlet::client::Admin::describe_cluster_configs` /
//! `alter_cluster_configs`): list them with their source, set or delete a dynamic one. An option
//! the server does not change at run time is `RIVERLET_STATUS_SERVER` with a message naming it.

use std::ffi::c_char;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::BatchReader;
use riverlet::client::ConfigChange;

use crate::args::{non_null, opt_str_arg, str_arg};
use crate::arrow_io::export_stream;
use crate::connection::{connection, RiverletConnection};
use crate::error::{guard, RiverletStatus};

/// Writes every server option to `*out_stream`: utf8 columns key, value (null when unset) and
/// source (`INITIAL_SERVER_CONFIG` or `DYNAMIC_SERVER_CONFIG`). Needs DESCRIBE on the cluster.
///
/// # Safety
/// `connection` a live handle; `out_stream` writable.
#[no_mangle]
pub unsafe extern "C" fn riverlet_describe_cluster_configs(
    connection: *const RiverletConnection,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| {
        non_null(out_stream.cast_const(), "out_stream")?;
        let c = self::connection(connection)?;
        let configs = c.admin().describe_cluster_configs()?;
        let schema = Arc::new(Schema::new(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, true),
            Field::new("source", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from_iter_values(
                    configs.iter().map(|e| e.key.as_str()),
                )),
                Arc::new(StringArray::from_iter(
                    configs.iter().map(|e| e.value.as_deref()),
                )),
                Arc::new(StringArray::from_iter_values(
                    configs.iter().map(|e| e.source.as_str()),
                )),
            ],
        )?;
        let reader = BatchReader::from_batches(schema, vec![batch]);
        // SAFETY: checked non-NULL; caller-allocated per the function's contract.
        unsafe { export_stream(Box::new(reader), out_stream) }
    })
}

/// Sets the dynamic server option `key` to `value`, or deletes it (back to its start-up value)
/// when `value` is NULL. Needs ALTER on the cluster.
///
/// # Safety
/// `connection` a live handle; `key` NUL-terminated; `value` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn riverlet_alter_cluster_config(
    connection: *const RiverletConnection,
    key: *const c_char,
    value: *const c_char,
) -> RiverletStatus {
    guard(|| {
        let c = self::connection(connection)?;
        // SAFETY: C strings per the function's contract.
        let (key, value) = unsafe { (str_arg(key, "key")?, opt_str_arg(value, "value")?) };
        let change = match value {
            Some(v) => ConfigChange::Set(key.to_string(), v.to_string()),
            None => ConfigChange::Delete(key.to_string()),
        };
        Ok(c.admin().alter_cluster_configs(&[change])?)
    })
}
