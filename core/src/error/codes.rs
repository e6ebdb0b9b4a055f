//! Every Fluss error code (fluss-rpc `Errors.java`): its name, its kind, and whether it is retriable.

use crate::error::ErrorKind;

/// One row of the Fluss error table.
#[derive(Debug, Clone, Copy)]
pub struct FlussErrorCode {
    /// The numeric code on the wire.
    pub code: i32,
    /// Fluss's enum name.
    pub name: &'static str,
    /// Whether a client may retry the request (Fluss's `RetriableException` subclasses).
    pub retriable: bool,
    /// The Riverlet kind a binding maps it to.
    pub kind: ErrorKind,
}

macro_rules! codes {
    ($( $code:literal $name:ident $retriable:literal $kind:ident ),* $(,)?) => {
        /// The whole table, in code order.
        pub const ALL: &[FlussErrorCode] = &[
            $( FlussErrorCode { code: $code, name: stringify!($name), retriable: $retriable, kind: ErrorKind::$kind } ),*
        ];
        $(
            #[allow(missing_docs)]
            pub const $name: i32 = $code;
        )*
    };
}

codes! {
    -1 UNKNOWN_SERVER_ERROR false Server,
    0 NONE false Server,
    1 NETWORK_EXCEPTION true Network,
    2 UNSUPPORTED_VERSION false Unsupported,
    3 CORRUPT_MESSAGE true Corrupt,
    4 DATABASE_NOT_EXIST false NotFound,
    5 DATABASE_NOT_EMPTY false InvalidArgument,
    6 DATABASE_ALREADY_EXIST false AlreadyExists,
    7 TABLE_NOT_EXIST false NotFound,
    8 TABLE_ALREADY_EXIST false AlreadyExists,
    9 SCHEMA_NOT_EXIST true NotFound,
    10 LOG_STORAGE_EXCEPTION true Server,
    11 KV_STORAGE_EXCEPTION true Server,
    12 NOT_LEADER_OR_FOLLOWER true Network,
    13 RECORD_TOO_LARGE_EXCEPTION false InvalidArgument,
    14 CORRUPT_RECORD_EXCEPTION true Corrupt,
    15 INVALID_TABLE_EXCEPTION false InvalidArgument,
    16 INVALID_DATABASE_EXCEPTION false InvalidArgument,
    17 INVALID_REPLICATION_FACTOR false InvalidArgument,
    18 INVALID_REQUIRED_ACKS false InvalidArgument,
    19 LOG_OFFSET_OUT_OF_RANGE_EXCEPTION false InvalidArgument,
    20 NON_PRIMARY_KEY_TABLE_EXCEPTION false InvalidArgument,
    21 UNKNOWN_TABLE_OR_BUCKET_EXCEPTION true NotFound,
    22 INVALID_UPDATE_VERSION_EXCEPTION false Server,
    23 INVALID_COORDINATOR_EXCEPTION false Server,
    24 FENCED_LEADER_EPOCH_EXCEPTION false Server,
    25 REQUEST_TIME_OUT true Timeout,
    26 STORAGE_EXCEPTION true Server,
    27 OPERATION_NOT_ATTEMPTED_EXCEPTION false Server,
    28 NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION true Server,
    29 NOT_ENOUGH_REPLICAS_EXCEPTION true Server,
    30 SECURITY_TOKEN_EXCEPTION false Authentication,
    31 OUT_OF_ORDER_SEQUENCE_EXCEPTION false Server,
    32 DUPLICATE_SEQUENCE_EXCEPTION false Server,
    33 UNKNOWN_WRITER_ID_EXCEPTION false Server,
    34 INVALID_COLUMN_PROJECTION false InvalidArgument,
    35 INVALID_TARGET_COLUMN false InvalidArgument,
    36 PARTITION_NOT_EXISTS false NotFound,
    37 TABLE_NOT_PARTITIONED_EXCEPTION false InvalidArgument,
    38 INVALID_TIMESTAMP_EXCEPTION false InvalidArgument,
    39 INVALID_CONFIG_EXCEPTION false InvalidArgument,
    40 LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION false Unsupported,
    41 KV_SNAPSHOT_NOT_EXIST false NotFound,
    42 PARTITION_ALREADY_EXISTS false AlreadyExists,
    43 PARTITION_SPEC_INVALID_EXCEPTION false InvalidArgument,
    44 LEADER_NOT_AVAILABLE_EXCEPTION true Network,
    45 PARTITION_MAX_NUM_EXCEPTION false InvalidArgument,
    46 AUTHENTICATE_EXCEPTION false Authentication,
    47 SECURITY_DISABLED_EXCEPTION false Authentication,
    48 AUTHORIZATION_EXCEPTION false Authentication,
    49 BUCKET_MAX_NUM_EXCEPTION false InvalidArgument,
    50 FENCED_TIERING_EPOCH_EXCEPTION false Server,
    51 RETRIABLE_AUTHENTICATE_EXCEPTION true Authentication,
    52 INVALID_SERVER_RACK_INFO_EXCEPTION false InvalidArgument,
    53 LAKE_SNAPSHOT_NOT_EXIST false NotFound,
    54 LAKE_TABLE_ALREADY_EXIST false AlreadyExists,
    55 INELIGIBLE_REPLICA_EXCEPTION false Server,
    56 INVALID_ALTER_TABLE_EXCEPTION false InvalidArgument,
    57 DELETION_DISABLED_EXCEPTION false InvalidArgument,
    58 SERVER_NOT_EXIST_EXCEPTION false NotFound,
    59 SEVER_TAG_ALREADY_EXIST_EXCEPTION false AlreadyExists,
    60 SEVER_TAG_NOT_EXIST_EXCEPTION false NotFound,
    61 REBALANCE_FAILURE_EXCEPTION false Server,
    62 NO_REBALANCE_IN_PROGRESS_EXCEPTION false Server,
    63 INVALID_PRODUCER_ID_EXCEPTION false InvalidArgument,
    64 CONFIG_EXCEPTION false InvalidArgument,
    65 NOT_COORDINATOR_LEADER_EXCEPTION true Network,
    66 SCANNER_EXPIRED false Server,
    67 UNKNOWN_SCANNER_ID false NotFound,
    68 INVALID_SCAN_REQUEST false InvalidArgument,
    69 TOO_MANY_SCANNERS true Server,
    70 DISK_WRITE_LOCKED false Server,
    71 INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY false Server,
    72 STORAGE_BACKPRESSURE_EXCEPTION true Server,
    73 HISTORICAL_PARTITION_THROTTLED true Server,
}

/// The table row of `code`, if Fluss defines it.
pub fn lookup(code: i32) -> Option<&'static FlussErrorCode> {
    ALL.iter().find(|c| c.code == code)
}

/// Fluss's name for `code` (`UNKNOWN_CODE` for a code this table does not know).
pub fn name_of(code: i32) -> &'static str {
    lookup(code).map_or("UNKNOWN_CODE", |c| c.name)
}

/// The Riverlet kind for `code`.
pub fn kind_of(code: i32) -> ErrorKind {
    lookup(code).map_or(ErrorKind::Server, |c| c.kind)
}

/// Whether Fluss treats `code` as retriable.
pub fn is_retriable(code: i32) -> bool {
    lookup(code).is_some_and(|c| c.retriable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_dense_and_ordered() {
        for (i, c) in ALL.iter().enumerate() {
            assert_eq!(c.code, i as i32 - 1, "{} out of order", c.name);
        }
        assert_eq!(name_of(38), "INVALID_TIMESTAMP_EXCEPTION");
        assert_eq!(kind_of(7), ErrorKind::NotFound);
        assert!(is_retriable(12));
        assert!(!is_retriable(7));
        assert_eq!(name_of(999), "UNKNOWN_CODE");
    }

    #[test]
    fn schema_and_storage_errors_are_retriable_as_in_fluss() {
        // SchemaNotExistException and StorageException (with its Log/Kv subclasses) extend
        // Fluss's RetriableException: a tablet server learns of an added column a moment
        // after the coordinator, and rejects writes of the new schema id until then.
        for code in [
            SCHEMA_NOT_EXIST,
            LOG_STORAGE_EXCEPTION,
            KV_STORAGE_EXCEPTION,
            STORAGE_EXCEPTION,
        ] {
            assert!(is_retriable(code), "{}", name_of(code));
        }
    }
}
