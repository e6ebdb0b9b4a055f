//! Which protobuf request goes with which API key and response message.

use super::ApiKey;
use crate::proto;

/// A request message of one Fluss API: its key and the response type it is answered with.
pub trait RpcRequest: prost::Message + Default + Send + 'static {
    /// The API key put in the request header.
    const API_KEY: ApiKey;
    /// The message a SUCCESS response carries.
    type Response: prost::Message + Default + Send + 'static;
}

macro_rules! rpc_requests {
    ($( $key:ident : $req:ident => $resp:ident ),* $(,)?) => {
        $(
            impl RpcRequest for proto::$req {
                const API_KEY: ApiKey = ApiKey::$key;
                type Response = proto::$resp;
            }
        )*

        /// Every API key that has an [`RpcRequest`] implementation, in declaration order.
        pub const IMPLEMENTED_APIS: &[ApiKey] = &[$( ApiKey::$key ),*];
    };
}

rpc_requests! {
    ApiVersions: ApiVersionsRequest => ApiVersionsResponse,
    Authenticate: AuthenticateRequest => AuthenticateResponse,
    CreateDatabase: CreateDatabaseRequest => CreateDatabaseResponse,
    DropDatabase: DropDatabaseRequest => DropDatabaseResponse,
    ListDatabases: ListDatabasesRequest => ListDatabasesResponse,
    DatabaseExists: DatabaseExistsRequest => DatabaseExistsResponse,
    GetDatabaseInfo: GetDatabaseInfoRequest => GetDatabaseInfoResponse,
    AlterDatabase: AlterDatabaseRequest => AlterDatabaseResponse,
    CreateTable: CreateTableRequest => CreateTableResponse,
    DropTable: DropTableRequest => DropTableResponse,
    GetTableInfo: GetTableInfoRequest => GetTableInfoResponse,
    ListTables: ListTablesRequest => ListTablesResponse,
    TableExists: TableExistsRequest => TableExistsResponse,
    GetTableSchema: GetTableSchemaRequest => GetTableSchemaResponse,
    AlterTable: AlterTableRequest => AlterTableResponse,
    GetMetadata: MetadataRequest => MetadataResponse,
    ListPartitionInfos: ListPartitionInfosRequest => ListPartitionInfosResponse,
    CreatePartition: CreatePartitionRequest => CreatePartitionResponse,
    DropPartition: DropPartitionRequest => DropPartitionResponse,
    ProduceLog: ProduceLogRequest => ProduceLogResponse,
    FetchLog: FetchLogRequest => FetchLogResponse,
    ListOffsets: ListOffsetsRequest => ListOffsetsResponse,
    PutKv: PutKvRequest => PutKvResponse,
    Lookup: LookupRequest => LookupResponse,
    PrefixLookup: PrefixLookupRequest => PrefixLookupResponse,
    LimitScan: LimitScanRequest => LimitScanResponse,
    ScanKv: ScanKvRequest => ScanKvResponse,
    GetTableStats: GetTableStatsRequest => GetTableStatsResponse,
    GetLatestKvSnapshots: GetLatestKvSnapshotsRequest => GetLatestKvSnapshotsResponse,
    GetKvSnapshotMetadata: GetKvSnapshotMetadataRequest => GetKvSnapshotMetadataResponse,
    ListKvSnapshots: ListKvSnapshotsRequest => ListKvSnapshotsResponse,
    ListRemoteLogManifests: ListRemoteLogManifestsRequest => ListRemoteLogManifestsResponse,
    GetLakeSnapshot: GetLakeSnapshotRequest => GetLakeSnapshotResponse,
    GetFileSystemSecurityToken: GetFileSystemSecurityTokenRequest => GetFileSystemSecurityTokenResponse,
    InitWriter: InitWriterRequest => InitWriterResponse,
    GetClusterHealth: GetClusterHealthRequest => GetClusterHealthResponse,
    CreateAcls: CreateAclsRequest => CreateAclsResponse,
    ListAcls: ListAclsRequest => ListAclsResponse,
    DropAcls: DropAclsRequest => DropAclsResponse,
    RegisterProducerOffsets: RegisterProducerOffsetsRequest => RegisterProducerOffsetsResponse,
    GetProducerOffsets: GetProducerOffsetsRequest => GetProducerOffsetsResponse,
    DeleteProducerOffsets: DeleteProducerOffsetsRequest => DeleteProducerOffsetsResponse,
    DescribeClusterConfigs: DescribeClusterConfigsRequest => DescribeClusterConfigsResponse,
    AlterClusterConfigs: AlterClusterConfigsRequest => AlterClusterConfigsResponse,
    AcquireKvSnapshotLease: AcquireKvSnapshotLeaseRequest => AcquireKvSnapshotLeaseResponse,
    ReleaseKvSnapshotLease: ReleaseKvSnapshotLeaseRequest => ReleaseKvSnapshotLeaseResponse,
    DropKvSnapshotLease: DropKvSnapshotLeaseRequest => DropKvSnapshotLeaseResponse,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implemented_apis_have_version_ranges_and_vice_versa() {
        for key in IMPLEMENTED_APIS {
            assert!(key.supported_versions().is_some(), "{key}");
        }
        for key in ApiKey::ALL {
            if key.supported_versions().is_some() {
                assert!(
                    IMPLEMENTED_APIS.contains(key),
                    "{key} has a range but no RpcRequest"
                );
            }
        }
        assert_eq!(<proto::PutKvRequest as RpcRequest>::API_KEY, ApiKey::PutKv);
        assert_eq!(
            <proto::MetadataRequest as RpcRequest>::API_KEY,
            ApiKey::GetMetadata
        );
    }
}
