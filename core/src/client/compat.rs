//! The few places where the client builds or takes apart metadata values, kept in one file so a
//! change in `core::metadata` touches only here.

use crate::metadata::{PartitionSpec, TableDescriptor, TableInfo, TablePath};
use crate::proto::{PbKeyValue, PbPartitionSpec, PbTablePath};
use crate::record::arrow_payload::ArrowCompression;
use crate::Result;

/// `db.table` as the wire message.
pub(crate) fn pb_path(path: &TablePath) -> PbTablePath {
    PbTablePath {
        database_name: path.database.clone(),
        table_name: path.table.clone(),
    }
}

/// A partition spec from the wire message.
pub(crate) fn spec_from_pb(pb: &PbPartitionSpec) -> PartitionSpec {
    PartitionSpec::new(
        pb.partition_key_values
            .iter()
            .map(|kv| (kv.key.clone(), kv.value.clone())),
    )
}

/// The wire message of a partition spec.
pub(crate) fn spec_to_pb(spec: &PartitionSpec) -> PbPartitionSpec {
    PbPartitionSpec {
        partition_key_values: spec_pairs(spec)
            .into_iter()
            .map(|(key, value)| PbKeyValue { key, value })
            .collect(),
    }
}

/// The ordered key/value pairs of a spec.
pub(crate) fn spec_pairs(spec: &PartitionSpec) -> Vec<(String, String)> {
    spec.entries.clone()
}

/// Fluss's partition name: the values joined by `$`.
pub(crate) fn spec_name(spec: &PartitionSpec) -> String {
    spec.partition_name()
}

/// A table info from GetTableInfo / metadata fields.
pub(crate) fn table_info(
    path: &TablePath,
    table_id: i64,
    schema_id: i32,
    table_json: &[u8],
    created_time: i64,
    modified_time: i64,
) -> Result<TableInfo> {
    TableInfo::from_table_json(
        path.clone(),
        table_id,
        schema_id,
        table_json,
        created_time,
        modified_time,
    )
    .map_err(|e| {
        e.context(format!(
            "table '{path}': bad descriptor JSON from the server"
        ))
    })
}

/// The Arrow compression of a table's log batches.
pub(crate) fn arrow_compression(d: &TableDescriptor) -> Result<ArrowCompression> {
    let t = d.arrow_compression()?;
    ArrowCompression::from_property(t.as_str(), Some(d.arrow_compression_zstd_level()?))
}
