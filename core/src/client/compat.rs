//! The few places where the client builds or takes apart metadata values, kept in one file so a
//! change in `core::metadata` touches only here.

use crate::error::codes;
use crate::metadata::{PartitionSpec, TableInfo, TablePath};
use crate::proto::{PbKeyValue, PbPartitionSpec, PbTablePath};
use crate::{Error, Result};

/// `db.table` as the wire message (the one conversion; the embedded server uses it too).
impl From<&TablePath> for PbTablePath {
    fn from(path: &TablePath) -> PbTablePath {
        PbTablePath {
            database_name: path.database.clone(),
            table_name: path.table.clone(),
        }
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

/// Apache Fluss 0.9.1 answers some requests about a table that does not exist (GetMetadata
/// of a dropped or unknown table, and so every write, lookup or read that refreshes its
/// leaders) with UNKNOWN_SERVER_ERROR (-1) and a Java stack trace whose cause is the real
/// exception, e.g. `Caused by: org.apache.fluss.exception.TableNotExistException: Table 'db.t'
/// does not exist.`. This turns such an error into the typed one (code and message of the
/// cause); other errors pass unchanged.
pub(crate) fn typed_cause(e: Error) -> Error {
    const CAUSES: &[(&str, i32)] = &[
        ("TableNotExistException", codes::TABLE_NOT_EXIST),
        ("DatabaseNotExistException", codes::DATABASE_NOT_EXIST),
        ("PartitionNotExistException", codes::PARTITION_NOT_EXISTS),
    ];
    if e.fluss_code() != Some(codes::UNKNOWN_SERVER_ERROR) {
        return e;
    }
    for (class, code) in CAUSES {
        let marker = format!(".{class}: ");
        if let Some(at) = e.message().rfind(&marker) {
            let cause = &e.message()[at + marker.len()..];
            let cause = cause.lines().next().unwrap_or_default().trim();
            if !cause.is_empty() {
                return Error::from_fluss(*code, cause.to_string());
            }
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn unknown_server_error_with_a_typed_cause_becomes_that_error() {
        // The shape of Apache Fluss 0.9.1's GetMetadata answer for a dropped table.
        let java = "org.apache.fluss.exception.FlussRuntimeException: Failed to get tables \
                    '[db.t]'.\n\tat org.apache.fluss.server.coordinator.MetadataManager.getTables\
                    (MetadataManager.java:624)\nCaused by: org.apache.fluss.exception.\
                    TableNotExistException: Table 'db.t' does not exist.\n";
        let e = typed_cause(Error::from_fluss(codes::UNKNOWN_SERVER_ERROR, java));
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(e.fluss_code(), Some(codes::TABLE_NOT_EXIST));
        assert_eq!(e.message(), "Table 'db.t' does not exist.");

        let e = typed_cause(Error::from_fluss(
            codes::UNKNOWN_SERVER_ERROR,
            "x\nCaused by: org.apache.fluss.exception.DatabaseNotExistException: Database d \
             does not exist.",
        ));
        assert_eq!(e.fluss_code(), Some(codes::DATABASE_NOT_EXIST));

        // Anything else is left alone.
        let other = Error::from_fluss(codes::UNKNOWN_SERVER_ERROR, "boom");
        assert_eq!(typed_cause(other).message(), "boom");
        let typed = Error::from_fluss(codes::TABLE_NOT_EXIST, "x.TableNotExistException: y");
        assert_eq!(typed_cause(typed).message(), "x.TableNotExistException: y");
    }
}
