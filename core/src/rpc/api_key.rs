//! Fluss API keys (fluss-rpc `ApiKeys.java`) and the version range Riverlet speaks for each.
//!
//! Keys 0..=999 are reserved by Fluss for Kafka compatibility; Fluss's own APIs start at 1000.
//! Every key Fluss defines is listed so that [`ApiKey::from_i16`] recognises all of them, but only
//! the APIs Riverlet implements have a [`ApiKey::supported_versions`] range; server-to-server
//! ("private") APIs and the admin APIs Riverlet does not implement return `None`.

use std::fmt;

/// An inclusive range of API versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionRange {
    /// Lowest version, inclusive.
    pub min: i16,
    /// Highest version, inclusive.
    pub max: i16,
}

impl VersionRange {
    /// The range `min..=max`.
    pub const fn new(min: i16, max: i16) -> Self {
        VersionRange { min, max }
    }

    /// Whether `version` lies in the range.
    pub fn contains(&self, version: i16) -> bool {
        self.min <= version && version <= self.max
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{},{}]", self.min, self.max)
    }
}

/// A Fluss RPC API key, the first `int16` of every request header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i16)]
pub enum ApiKey {
    /// `API_VERSIONS` (1000).
    ApiVersions = 1000,
    /// `CREATE_DATABASE` (1001).
    CreateDatabase = 1001,
    /// `DROP_DATABASE` (1002).
    DropDatabase = 1002,
    /// `LIST_DATABASES` (1003).
    ListDatabases = 1003,
    /// `DATABASE_EXISTS` (1004).
    DatabaseExists = 1004,
    /// `CREATE_TABLE` (1005).
    CreateTable = 1005,
    /// `DROP_TABLE` (1006).
    DropTable = 1006,
    /// `GET_TABLE_INFO` (1007).
    GetTableInfo = 1007,
    /// `LIST_TABLES` (1008).
    ListTables = 1008,
    /// `LIST_PARTITION_INFOS` (1009).
    ListPartitionInfos = 1009,
    /// `TABLE_EXISTS` (1010).
    TableExists = 1010,
    /// `GET_TABLE_SCHEMA` (1011).
    GetTableSchema = 1011,
    /// `GET_METADATA` (1012).
    GetMetadata = 1012,
    /// `UPDATE_METADATA` (1013).
    UpdateMetadata = 1013,
    /// `PRODUCE_LOG` (1014).
    ProduceLog = 1014,
    /// `FETCH_LOG` (1015).
    FetchLog = 1015,
    /// `PUT_KV` (1016).
    PutKv = 1016,
    /// `LOOKUP` (1017).
    Lookup = 1017,
    /// `NOTIFY_LEADER_AND_ISR` (1018).
    NotifyLeaderAndIsr = 1018,
    /// `STOP_REPLICA` (1019).
    StopReplica = 1019,
    /// `ADJUST_ISR` (1020).
    AdjustIsr = 1020,
    /// `LIST_OFFSETS` (1021).
    ListOffsets = 1021,
    /// `COMMIT_KV_SNAPSHOT` (1022).
    CommitKvSnapshot = 1022,
    /// `GET_LATEST_KV_SNAPSHOTS` (1023).
    GetLatestKvSnapshots = 1023,
    /// `GET_KV_SNAPSHOT_METADATA` (1024).
    GetKvSnapshotMetadata = 1024,
    /// `GET_FILESYSTEM_SECURITY_TOKEN` (1025).
    GetFileSystemSecurityToken = 1025,
    /// `INIT_WRITER` (1026).
    InitWriter = 1026,
    /// `COMMIT_REMOTE_LOG_MANIFEST` (1027).
    CommitRemoteLogManifest = 1027,
    /// `NOTIFY_REMOTE_LOG_OFFSETS` (1028).
    NotifyRemoteLogOffsets = 1028,
    /// `NOTIFY_KV_SNAPSHOT_OFFSET` (1029).
    NotifyKvSnapshotOffset = 1029,
    /// `COMMIT_LAKE_TABLE_SNAPSHOT` (1030).
    CommitLakeTableSnapshot = 1030,
    /// `NOTIFY_LAKE_TABLE_OFFSET` (1031).
    NotifyLakeTableOffset = 1031,
    /// `GET_LAKE_SNAPSHOT` (1032).
    GetLakeSnapshot = 1032,
    /// `LIMIT_SCAN` (1033).
    LimitScan = 1033,
    /// `PREFIX_LOOKUP` (1034).
    PrefixLookup = 1034,
    /// `GET_DATABASE_INFO` (1035).
    GetDatabaseInfo = 1035,
    /// `CREATE_PARTITION` (1036).
    CreatePartition = 1036,
    /// `DROP_PARTITION` (1037).
    DropPartition = 1037,
    /// `AUTHENTICATE` (1038).
    Authenticate = 1038,
    /// `CREATE_ACLS` (1039).
    CreateAcls = 1039,
    /// `LIST_ACLS` (1040).
    ListAcls = 1040,
    /// `DROP_ACLS` (1041).
    DropAcls = 1041,
    /// `LAKE_TIERING_HEARTBEAT` (1042).
    LakeTieringHeartbeat = 1042,
    /// `CONTROLLED_SHUTDOWN` (1043).
    ControlledShutdown = 1043,
    /// `ALTER_TABLE` (1044).
    AlterTable = 1044,
    /// `DESCRIBE_CLUSTER_CONFIGS` (1045).
    DescribeClusterConfigs = 1045,
    /// `ALTER_CLUSTER_CONFIGS` (1046).
    AlterClusterConfigs = 1046,
    /// `ADD_SERVER_TAG` (1047).
    AddServerTag = 1047,
    /// `REMOVE_SERVER_TAG` (1048).
    RemoveServerTag = 1048,
    /// `REBALANCE` (1049).
    Rebalance = 1049,
    /// `LIST_REBALANCE_PROGRESS` (1050).
    ListRebalanceProgress = 1050,
    /// `CANCEL_REBALANCE` (1051).
    CancelRebalance = 1051,
    /// `PREPARE_LAKE_TABLE_SNAPSHOT` (1052).
    PrepareLakeTableSnapshot = 1052,
    /// `REGISTER_PRODUCER_OFFSETS` (1053).
    RegisterProducerOffsets = 1053,
    /// `GET_PRODUCER_OFFSETS` (1054).
    GetProducerOffsets = 1054,
    /// `DELETE_PRODUCER_OFFSETS` (1055).
    DeleteProducerOffsets = 1055,
    /// `ACQUIRE_KV_SNAPSHOT_LEASE` (1056).
    AcquireKvSnapshotLease = 1056,
    /// `RELEASE_KV_SNAPSHOT_LEASE` (1057).
    ReleaseKvSnapshotLease = 1057,
    /// `DROP_KV_SNAPSHOT_LEASE` (1058).
    DropKvSnapshotLease = 1058,
    /// `GET_TABLE_STATS` (1059).
    GetTableStats = 1059,
    /// `ALTER_DATABASE` (1060).
    AlterDatabase = 1060,
    /// `SCAN_KV` (1061).
    ScanKv = 1061,
    /// `GET_CLUSTER_HEALTH` (1062).
    GetClusterHealth = 1062,
    /// `LIST_REMOTE_LOG_MANIFESTS` (1063).
    ListRemoteLogManifests = 1063,
    /// `LIST_KV_SNAPSHOTS` (1064).
    ListKvSnapshots = 1064,
}

impl ApiKey {
    /// Every key, in numeric order.
    pub const ALL: &'static [ApiKey] = &[
        ApiKey::ApiVersions,
        ApiKey::CreateDatabase,
        ApiKey::DropDatabase,
        ApiKey::ListDatabases,
        ApiKey::DatabaseExists,
        ApiKey::CreateTable,
        ApiKey::DropTable,
        ApiKey::GetTableInfo,
        ApiKey::ListTables,
        ApiKey::ListPartitionInfos,
        ApiKey::TableExists,
        ApiKey::GetTableSchema,
        ApiKey::GetMetadata,
        ApiKey::UpdateMetadata,
        ApiKey::ProduceLog,
        ApiKey::FetchLog,
        ApiKey::PutKv,
        ApiKey::Lookup,
        ApiKey::NotifyLeaderAndIsr,
        ApiKey::StopReplica,
        ApiKey::AdjustIsr,
        ApiKey::ListOffsets,
        ApiKey::CommitKvSnapshot,
        ApiKey::GetLatestKvSnapshots,
        ApiKey::GetKvSnapshotMetadata,
        ApiKey::GetFileSystemSecurityToken,
        ApiKey::InitWriter,
        ApiKey::CommitRemoteLogManifest,
        ApiKey::NotifyRemoteLogOffsets,
        ApiKey::NotifyKvSnapshotOffset,
        ApiKey::CommitLakeTableSnapshot,
        ApiKey::NotifyLakeTableOffset,
        ApiKey::GetLakeSnapshot,
        ApiKey::LimitScan,
        ApiKey::PrefixLookup,
        ApiKey::GetDatabaseInfo,
        ApiKey::CreatePartition,
        ApiKey::DropPartition,
        ApiKey::Authenticate,
        ApiKey::CreateAcls,
        ApiKey::ListAcls,
        ApiKey::DropAcls,
        ApiKey::LakeTieringHeartbeat,
        ApiKey::ControlledShutdown,
        ApiKey::AlterTable,
        ApiKey::DescribeClusterConfigs,
        ApiKey::AlterClusterConfigs,
        ApiKey::AddServerTag,
        ApiKey::RemoveServerTag,
        ApiKey::Rebalance,
        ApiKey::ListRebalanceProgress,
        ApiKey::CancelRebalance,
        ApiKey::PrepareLakeTableSnapshot,
        ApiKey::RegisterProducerOffsets,
        ApiKey::GetProducerOffsets,
        ApiKey::DeleteProducerOffsets,
        ApiKey::AcquireKvSnapshotLease,
        ApiKey::ReleaseKvSnapshotLease,
        ApiKey::DropKvSnapshotLease,
        ApiKey::GetTableStats,
        ApiKey::AlterDatabase,
        ApiKey::ScanKv,
        ApiKey::GetClusterHealth,
        ApiKey::ListRemoteLogManifests,
        ApiKey::ListKvSnapshots,
    ];

    /// The key with numeric id `id`, or `None` when Fluss defines no such key.
    pub fn from_i16(id: i16) -> Option<ApiKey> {
        Some(match id {
            1000 => ApiKey::ApiVersions,
            1001 => ApiKey::CreateDatabase,
            1002 => ApiKey::DropDatabase,
            1003 => ApiKey::ListDatabases,
            1004 => ApiKey::DatabaseExists,
            1005 => ApiKey::CreateTable,
            1006 => ApiKey::DropTable,
            1007 => ApiKey::GetTableInfo,
            1008 => ApiKey::ListTables,
            1009 => ApiKey::ListPartitionInfos,
            1010 => ApiKey::TableExists,
            1011 => ApiKey::GetTableSchema,
            1012 => ApiKey::GetMetadata,
            1013 => ApiKey::UpdateMetadata,
            1014 => ApiKey::ProduceLog,
            1015 => ApiKey::FetchLog,
            1016 => ApiKey::PutKv,
            1017 => ApiKey::Lookup,
            1018 => ApiKey::NotifyLeaderAndIsr,
            1019 => ApiKey::StopReplica,
            1020 => ApiKey::AdjustIsr,
            1021 => ApiKey::ListOffsets,
            1022 => ApiKey::CommitKvSnapshot,
            1023 => ApiKey::GetLatestKvSnapshots,
            1024 => ApiKey::GetKvSnapshotMetadata,
            1025 => ApiKey::GetFileSystemSecurityToken,
            1026 => ApiKey::InitWriter,
            1027 => ApiKey::CommitRemoteLogManifest,
            1028 => ApiKey::NotifyRemoteLogOffsets,
            1029 => ApiKey::NotifyKvSnapshotOffset,
            1030 => ApiKey::CommitLakeTableSnapshot,
            1031 => ApiKey::NotifyLakeTableOffset,
            1032 => ApiKey::GetLakeSnapshot,
            1033 => ApiKey::LimitScan,
            1034 => ApiKey::PrefixLookup,
            1035 => ApiKey::GetDatabaseInfo,
            1036 => ApiKey::CreatePartition,
            1037 => ApiKey::DropPartition,
            1038 => ApiKey::Authenticate,
            1039 => ApiKey::CreateAcls,
            1040 => ApiKey::ListAcls,
            1041 => ApiKey::DropAcls,
            1042 => ApiKey::LakeTieringHeartbeat,
            1043 => ApiKey::ControlledShutdown,
            1044 => ApiKey::AlterTable,
            1045 => ApiKey::DescribeClusterConfigs,
            1046 => ApiKey::AlterClusterConfigs,
            1047 => ApiKey::AddServerTag,
            1048 => ApiKey::RemoveServerTag,
            1049 => ApiKey::Rebalance,
            1050 => ApiKey::ListRebalanceProgress,
            1051 => ApiKey::CancelRebalance,
            1052 => ApiKey::PrepareLakeTableSnapshot,
            1053 => ApiKey::RegisterProducerOffsets,
            1054 => ApiKey::GetProducerOffsets,
            1055 => ApiKey::DeleteProducerOffsets,
            1056 => ApiKey::AcquireKvSnapshotLease,
            1057 => ApiKey::ReleaseKvSnapshotLease,
            1058 => ApiKey::DropKvSnapshotLease,
            1059 => ApiKey::GetTableStats,
            1060 => ApiKey::AlterDatabase,
            1061 => ApiKey::ScanKv,
            1062 => ApiKey::GetClusterHealth,
            1063 => ApiKey::ListRemoteLogManifests,
            1064 => ApiKey::ListKvSnapshots,
            _ => return None,
        })
    }

    /// The numeric id sent on the wire.
    pub const fn id(self) -> i16 {
        self as i16
    }

    /// Fluss's name for the key, e.g. `"PUT_KV"`.
    pub fn name(self) -> &'static str {
        match self {
            ApiKey::ApiVersions => "API_VERSIONS",
            ApiKey::CreateDatabase => "CREATE_DATABASE",
            ApiKey::DropDatabase => "DROP_DATABASE",
            ApiKey::ListDatabases => "LIST_DATABASES",
            ApiKey::DatabaseExists => "DATABASE_EXISTS",
            ApiKey::CreateTable => "CREATE_TABLE",
            ApiKey::DropTable => "DROP_TABLE",
            ApiKey::GetTableInfo => "GET_TABLE_INFO",
            ApiKey::ListTables => "LIST_TABLES",
            ApiKey::ListPartitionInfos => "LIST_PARTITION_INFOS",
            ApiKey::TableExists => "TABLE_EXISTS",
            ApiKey::GetTableSchema => "GET_TABLE_SCHEMA",
            ApiKey::GetMetadata => "GET_METADATA",
            ApiKey::UpdateMetadata => "UPDATE_METADATA",
            ApiKey::ProduceLog => "PRODUCE_LOG",
            ApiKey::FetchLog => "FETCH_LOG",
            ApiKey::PutKv => "PUT_KV",
            ApiKey::Lookup => "LOOKUP",
            ApiKey::NotifyLeaderAndIsr => "NOTIFY_LEADER_AND_ISR",
            ApiKey::StopReplica => "STOP_REPLICA",
            ApiKey::AdjustIsr => "ADJUST_ISR",
            ApiKey::ListOffsets => "LIST_OFFSETS",
            ApiKey::CommitKvSnapshot => "COMMIT_KV_SNAPSHOT",
            ApiKey::GetLatestKvSnapshots => "GET_LATEST_KV_SNAPSHOTS",
            ApiKey::GetKvSnapshotMetadata => "GET_KV_SNAPSHOT_METADATA",
            ApiKey::GetFileSystemSecurityToken => "GET_FILESYSTEM_SECURITY_TOKEN",
            ApiKey::InitWriter => "INIT_WRITER",
            ApiKey::CommitRemoteLogManifest => "COMMIT_REMOTE_LOG_MANIFEST",
            ApiKey::NotifyRemoteLogOffsets => "NOTIFY_REMOTE_LOG_OFFSETS",
            ApiKey::NotifyKvSnapshotOffset => "NOTIFY_KV_SNAPSHOT_OFFSET",
            ApiKey::CommitLakeTableSnapshot => "COMMIT_LAKE_TABLE_SNAPSHOT",
            ApiKey::NotifyLakeTableOffset => "NOTIFY_LAKE_TABLE_OFFSET",
            ApiKey::GetLakeSnapshot => "GET_LAKE_SNAPSHOT",
            ApiKey::LimitScan => "LIMIT_SCAN",
            ApiKey::PrefixLookup => "PREFIX_LOOKUP",
            ApiKey::GetDatabaseInfo => "GET_DATABASE_INFO",
            ApiKey::CreatePartition => "CREATE_PARTITION",
            ApiKey::DropPartition => "DROP_PARTITION",
            ApiKey::Authenticate => "AUTHENTICATE",
            ApiKey::CreateAcls => "CREATE_ACLS",
            ApiKey::ListAcls => "LIST_ACLS",
            ApiKey::DropAcls => "DROP_ACLS",
            ApiKey::LakeTieringHeartbeat => "LAKE_TIERING_HEARTBEAT",
            ApiKey::ControlledShutdown => "CONTROLLED_SHUTDOWN",
            ApiKey::AlterTable => "ALTER_TABLE",
            ApiKey::DescribeClusterConfigs => "DESCRIBE_CLUSTER_CONFIGS",
            ApiKey::AlterClusterConfigs => "ALTER_CLUSTER_CONFIGS",
            ApiKey::AddServerTag => "ADD_SERVER_TAG",
            ApiKey::RemoveServerTag => "REMOVE_SERVER_TAG",
            ApiKey::Rebalance => "REBALANCE",
            ApiKey::ListRebalanceProgress => "LIST_REBALANCE_PROGRESS",
            ApiKey::CancelRebalance => "CANCEL_REBALANCE",
            ApiKey::PrepareLakeTableSnapshot => "PREPARE_LAKE_TABLE_SNAPSHOT",
            ApiKey::RegisterProducerOffsets => "REGISTER_PRODUCER_OFFSETS",
            ApiKey::GetProducerOffsets => "GET_PRODUCER_OFFSETS",
            ApiKey::DeleteProducerOffsets => "DELETE_PRODUCER_OFFSETS",
            ApiKey::AcquireKvSnapshotLease => "ACQUIRE_KV_SNAPSHOT_LEASE",
            ApiKey::ReleaseKvSnapshotLease => "RELEASE_KV_SNAPSHOT_LEASE",
            ApiKey::DropKvSnapshotLease => "DROP_KV_SNAPSHOT_LEASE",
            ApiKey::GetTableStats => "GET_TABLE_STATS",
            ApiKey::AlterDatabase => "ALTER_DATABASE",
            ApiKey::ScanKv => "SCAN_KV",
            ApiKey::GetClusterHealth => "GET_CLUSTER_HEALTH",
            ApiKey::ListRemoteLogManifests => "LIST_REMOTE_LOG_MANIFESTS",
            ApiKey::ListKvSnapshots => "LIST_KV_SNAPSHOTS",
        }
    }

    /// The versions Riverlet speaks for this API (as a client, and as the embedded server), or
    /// `None` when Riverlet does not implement it. The ranges follow Fluss 1.0: PUT_KV 0..=2,
    /// LOOKUP and PREFIX_LOOKUP 0..=1, everything else 0..=0.
    pub fn supported_versions(self) -> Option<VersionRange> {
        match self {
            ApiKey::ApiVersions
            | ApiKey::CreateDatabase
            | ApiKey::DropDatabase
            | ApiKey::ListDatabases
            | ApiKey::DatabaseExists
            | ApiKey::CreateTable
            | ApiKey::DropTable
            | ApiKey::GetTableInfo
            | ApiKey::ListTables
            | ApiKey::ListPartitionInfos
            | ApiKey::TableExists
            | ApiKey::GetTableSchema
            | ApiKey::GetMetadata
            | ApiKey::ProduceLog
            | ApiKey::FetchLog
            | ApiKey::ListOffsets
            | ApiKey::GetLatestKvSnapshots
            | ApiKey::GetKvSnapshotMetadata
            | ApiKey::GetFileSystemSecurityToken
            | ApiKey::InitWriter
            | ApiKey::GetLakeSnapshot
            | ApiKey::LimitScan
            | ApiKey::GetDatabaseInfo
            | ApiKey::CreatePartition
            | ApiKey::DropPartition
            | ApiKey::Authenticate
            | ApiKey::AlterTable
            | ApiKey::GetTableStats
            | ApiKey::AlterDatabase
            | ApiKey::ScanKv
            | ApiKey::GetClusterHealth
            | ApiKey::ListRemoteLogManifests
            | ApiKey::ListKvSnapshots
            | ApiKey::CreateAcls
            | ApiKey::ListAcls
            | ApiKey::DropAcls
            | ApiKey::RegisterProducerOffsets
            | ApiKey::GetProducerOffsets
            | ApiKey::DeleteProducerOffsets
            | ApiKey::DescribeClusterConfigs
            | ApiKey::AlterClusterConfigs
            | ApiKey::AcquireKvSnapshotLease
            | ApiKey::ReleaseKvSnapshotLease
            | ApiKey::DropKvSnapshotLease => Some(VersionRange::new(0, 0)),
            ApiKey::UpdateMetadata
            | ApiKey::NotifyLeaderAndIsr
            | ApiKey::StopReplica
            | ApiKey::AdjustIsr
            | ApiKey::CommitKvSnapshot
            | ApiKey::CommitRemoteLogManifest
            | ApiKey::NotifyRemoteLogOffsets
            | ApiKey::NotifyKvSnapshotOffset
            | ApiKey::CommitLakeTableSnapshot
            | ApiKey::NotifyLakeTableOffset
            | ApiKey::LakeTieringHeartbeat
            | ApiKey::ControlledShutdown
            | ApiKey::AddServerTag
            | ApiKey::RemoveServerTag
            | ApiKey::Rebalance
            | ApiKey::ListRebalanceProgress
            | ApiKey::CancelRebalance
            | ApiKey::PrepareLakeTableSnapshot => None,
            ApiKey::PutKv => Some(VersionRange::new(0, 2)),
            ApiKey::Lookup | ApiKey::PrefixLookup => Some(VersionRange::new(0, 1)),
        }
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name(), self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_sorted() {
        for (i, key) in ApiKey::ALL.iter().enumerate() {
            assert_eq!(ApiKey::from_i16(key.id()), Some(*key));
            assert_eq!(key.id(), 1000 + i as i16, "{key}");
        }
        assert_eq!(ApiKey::from_i16(999), None);
        assert_eq!(ApiKey::from_i16(1065), None);
        assert_eq!(ApiKey::from_i16(-1), None);
    }

    #[test]
    fn known_ids_and_ranges() {
        assert_eq!(ApiKey::ApiVersions as i16, 1000);
        assert_eq!(ApiKey::PutKv as i16, 1016);
        assert_eq!(ApiKey::Authenticate as i16, 1038);
        assert_eq!(ApiKey::GetTableStats as i16, 1059);
        assert_eq!(ApiKey::ScanKv as i16, 1061);
        assert_eq!(
            ApiKey::PutKv.supported_versions(),
            Some(VersionRange::new(0, 2))
        );
        assert_eq!(
            ApiKey::Lookup.supported_versions(),
            Some(VersionRange::new(0, 1))
        );
        assert_eq!(
            ApiKey::PrefixLookup.supported_versions(),
            Some(VersionRange::new(0, 1))
        );
        assert_eq!(
            ApiKey::FetchLog.supported_versions(),
            Some(VersionRange::new(0, 0))
        );
        assert_eq!(ApiKey::UpdateMetadata.supported_versions(), None);
        assert_eq!(ApiKey::PutKv.to_string(), "PUT_KV(1016)");
    }
}
