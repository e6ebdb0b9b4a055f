//! How each request is authorized before its handler runs: the [`Rule`] a row of the
//! served-API table (`apis.rs`) names, and, per request type, where the rule finds its
//! resource ([`Guarded`]). The checks are Fluss's (`RpcServiceBase`, `CoordinatorService`,
//! `TabletService`): a refused request fails with AUTHORIZATION_EXCEPTION before anything
//! is done, except the lists and metadata, which leave out what the caller may not DESCRIBE,
//! and the per-bucket reads (FetchLog, Lookup, PrefixLookup), whose refused buckets answer
//! the error while the others are served.

use riverlet::acl::{OperationType, Resource};
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::Result;

use super::{lock, Server};
use crate::authz::Session;

/// Which operation on which resource an API needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Not authorized; the reason.
    Open(&'static str),
    /// The operation on the cluster.
    Cluster(OperationType),
    /// The operation on the database the request names (a table path's database for
    /// CreateTable).
    Database(OperationType),
    /// The operation on the table the request names by path.
    Table(OperationType),
    /// The operation on the table the request names by id (unknown id:
    /// UNKNOWN_TABLE_OR_BUCKET_EXCEPTION).
    TableId(OperationType),
    /// The operation on at least one of the tables the request names (InitWriter).
    AnyTable(OperationType),
    /// The operation on each table the request names by id (producer offsets; unknown id:
    /// UNKNOWN_TABLE_OR_BUCKET_EXCEPTION).
    EachTableId(OperationType),
    /// The operation on each table the request reads; refused buckets answer the error.
    Buckets(OperationType),
    /// Lookup: READ per bucket as [`Rule::Buckets`]; WRITE on the table when it inserts
    /// missing keys (`insert_if_not_exists`).
    LookupOrInsert,
    /// Lists and metadata: what the caller may not do the operation on is left out.
    Filter(OperationType),
    /// The ACL APIs: ALTER on each changed resource (a table's: its database), and listing
    /// leaves out the resources the caller may not DESCRIBE; SECURITY_DISABLED_EXCEPTION
    /// without `authorizer.enabled`.
    Acls,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rule::Open(why) => write!(f, "none ({why})"),
            Rule::Cluster(op) => write!(f, "{op} on the cluster"),
            Rule::Database(op) => write!(f, "{op} on the database"),
            Rule::Table(op) | Rule::TableId(op) => write!(f, "{op} on the table"),
            Rule::AnyTable(op) => write!(f, "{op} on one of the tables"),
            Rule::EachTableId(op) => write!(f, "{op} on each table"),
            Rule::Buckets(op) => write!(f, "{op} on the table (per bucket)"),
            Rule::LookupOrInsert => {
                write!(f, "READ on the table (per bucket); WRITE when inserting")
            }
            Rule::Filter(op) => write!(f, "{op} on each listed item (others left out)"),
            Rule::Acls => write!(
                f,
                "ALTER (changes) / DESCRIBE (list) on each ACL's resource"
            ),
        }
    }
}

/// Buckets refused, by table: (table id, (partition, bucket) of each, error message).
type Refused = Vec<(i64, Vec<(Option<i64>, i32)>, String)>;

/// What to do to the handler's response once it ran.
pub(super) enum Post {
    /// Nothing.
    Keep,
    /// Add the refused buckets' errors.
    Refused(Refused),
    /// Leave out what the session may not do `op` on (the request's database, if it named
    /// one).
    Filter(OperationType, Option<String>),
}

/// A request as the authorization rules see it. Every method has a default (the rule that
/// needs it is not used with that request).
pub(super) trait Guarded: Sized {
    /// The response message.
    type Response;
    /// The database named (Database rule).
    fn database(&self) -> Option<&str> {
        None
    }
    /// The table named by path (Table rule; CreateTable's database).
    fn table_path(&self) -> Option<&PbTablePath> {
        None
    }
    /// The table named by id (TableId rule).
    fn table_id(&self, _s: &Server) -> Option<i64> {
        None
    }
    /// The tables named by id (EachTableId rule).
    fn table_ids(&self, _s: &Server) -> Vec<i64> {
        Vec::new()
    }
    /// The tables named (AnyTable rule).
    fn table_paths(&self) -> &[PbTablePath] {
        &[]
    }
    /// Whether a lookup inserts missing keys.
    fn inserts(&self) -> bool {
        false
    }
    /// Buckets rule: removes the parts on tables `allowed` refuses and returns them.
    fn take_refused(&mut self, _allowed: &mut dyn FnMut(i64) -> Option<String>) -> Refused {
        Vec::new()
    }
    /// Buckets rule: answers the refused buckets with AUTHORIZATION_EXCEPTION.
    fn add_refused(_resp: &mut Self::Response, _refused: Refused) {}
    /// Filter rule: leaves out of the request what `keep` refuses.
    fn filter_request(&mut self, _keep: &dyn Fn(&Resource) -> bool) {}
    /// Filter rule: leaves out of the response what `keep` refuses (`database`: the one the
    /// request named).
    fn filter_response(
        _resp: &mut Self::Response,
        _s: &Server,
        _database: Option<&str>,
        _keep: &dyn Fn(&Resource) -> bool,
    ) {
    }
}

impl Server {
    /// Checks `req` of `session` against `rule` before its handler runs: an error refuses
    /// the whole request; otherwise the request (without what was refused) and what to do to
    /// the response.
    pub(super) fn guard<R: Guarded>(
        &self,
        session: &Session,
        rule: Rule,
        mut req: R,
    ) -> Result<(R, Post)> {
        let a = &self.authz;
        if !a.enabled() || session.internal {
            return Ok((req, Post::Keep));
        }
        let table_of = |id: i64| -> Result<Resource> {
            let t = lock(&self.catalog).table_by_id(id)?;
            Ok(Resource::table(&t.entry.database, &t.entry.name))
        };
        let path_resource = |p: &PbTablePath| Resource::table(&p.database_name, &p.table_name);
        match rule {
            Rule::Open(_) | Rule::Acls => {}
            Rule::Cluster(op) => a.authorize(session, op, &Resource::cluster())?,
            Rule::Database(op) => {
                let db = match (req.database(), req.table_path()) {
                    (Some(d), _) => d.to_string(),
                    (None, Some(p)) => p.database_name.clone(),
                    (None, None) => String::new(),
                };
                a.authorize(session, op, &Resource::database(db))?
            }
            Rule::Table(op) => {
                let r = req
                    .table_path()
                    .map(path_resource)
                    .unwrap_or_else(|| Resource::table("", ""));
                a.authorize(session, op, &r)?
            }
            Rule::TableId(op) => {
                if let Some(id) = req.table_id(self) {
                    a.authorize(session, op, &table_of(id)?)?
                }
            }
            Rule::EachTableId(op) => {
                for id in req.table_ids(self) {
                    a.authorize(session, op, &table_of(id)?)?
                }
            }
            Rule::AnyTable(op) => {
                let paths = req.table_paths();
                if paths.is_empty() {
                    return Err(super::fluss(
                        error_codes::AUTHORIZATION_EXCEPTION,
                        "The request of InitWriter requires non empty table paths for authorization.",
                    ));
                }
                if !paths
                    .iter()
                    .any(|p| a.is_authorized(session, op, &path_resource(p)))
                {
                    // Fluss names the tables only; the first one's denial names all three.
                    let first = path_resource(&paths[0]);
                    let names: Vec<String> = paths
                        .iter()
                        .map(|p| format!("{}.{}", p.database_name, p.table_name))
                        .collect();
                    return Err(
                        riverlet::acl::denied(&session.principal, op, &first).context(format!(
                            "No {op} permission among all the tables: [{}]",
                            names.join(", ")
                        )),
                    );
                }
            }
            Rule::LookupOrInsert if req.inserts() => {
                if let Some(id) = req.table_id(self) {
                    a.authorize(session, OperationType::Write, &table_of(id)?)?
                }
            }
            Rule::Buckets(_) | Rule::LookupOrInsert => {
                let op = match rule {
                    Rule::Buckets(op) => op,
                    _ => OperationType::Read,
                };
                let refused = req.take_refused(&mut |id| {
                    // An unknown table is left to the handler (it answers it per bucket).
                    let r = table_of(id).ok()?;
                    (!a.is_authorized(session, op, &r))
                        .then(|| riverlet::acl::denial_message(&session.principal, op, &r))
                });
                if !refused.is_empty() {
                    return Ok((req, Post::Refused(refused)));
                }
            }
            Rule::Filter(op) => {
                req.filter_request(&|r| a.is_authorized(session, op, r));
                let db = req.database().map(str::to_string);
                return Ok((req, Post::Filter(op, db)));
            }
        }
        Ok((req, Post::Keep))
    }

    /// Applies `post` to the handler's response.
    pub(super) fn after_guard<R: Guarded>(
        &self,
        session: &Session,
        post: Post,
        mut resp: R::Response,
    ) -> R::Response {
        match post {
            Post::Keep => {}
            Post::Refused(refused) => R::add_refused(&mut resp, refused),
            Post::Filter(op, db) => R::filter_response(&mut resp, self, db.as_deref(), &|r| {
                self.authz.is_authorized(session, op, r)
            }),
        }
        resp
    }
}

macro_rules! guarded {
    ($($req:ty => $resp:ty $({ $($body:tt)* })?;)*) => {$(
        impl Guarded for $req {
            type Response = $resp;
            $($($body)*)?
        }
    )*};
}

fn refused_buckets<T>(
    table_id: i64,
    buckets: &mut Vec<T>,
    allowed: &mut dyn FnMut(i64) -> Option<String>,
    key: impl Fn(&T) -> (Option<i64>, i32),
) -> Refused {
    match allowed(table_id) {
        Some(msg) if !buckets.is_empty() => {
            let keys = buckets.iter().map(key).collect();
            buckets.clear();
            vec![(table_id, keys, msg)]
        }
        _ => Vec::new(),
    }
}

guarded! {
    ApiVersionsRequest => ApiVersionsResponse;
    GetFileSystemSecurityTokenRequest => GetFileSystemSecurityTokenResponse;
    DatabaseExistsRequest => DatabaseExistsResponse;
    TableExistsRequest => TableExistsResponse;
    CreateAclsRequest => CreateAclsResponse;
    ListAclsRequest => ListAclsResponse;
    DropAclsRequest => DropAclsResponse;
    CreateDatabaseRequest => CreateDatabaseResponse;
    DropDatabaseRequest => DropDatabaseResponse {
        fn database(&self) -> Option<&str> { Some(&self.database_name) }
    };
    GetDatabaseInfoRequest => GetDatabaseInfoResponse {
        fn database(&self) -> Option<&str> { Some(&self.database_name) }
    };
    CreateTableRequest => CreateTableResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    DropTableRequest => DropTableResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    GetTableInfoRequest => GetTableInfoResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    GetTableSchemaRequest => GetTableSchemaResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    AlterTableRequest => AlterTableResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    ListPartitionInfosRequest => ListPartitionInfosResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    CreatePartitionRequest => CreatePartitionResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    DropPartitionRequest => DropPartitionResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    GetLatestKvSnapshotsRequest => GetLatestKvSnapshotsResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    GetLakeSnapshotRequest => GetLakeSnapshotResponse {
        fn table_path(&self) -> Option<&PbTablePath> { Some(&self.table_path) }
    };
    ProduceLogRequest => ProduceLogResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
    };
    PutKvRequest => PutKvResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
    };
    ListOffsetsRequest => ListOffsetsResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
    };
    GetTableStatsRequest => GetTableStatsResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
    };
    LimitScanRequest => LimitScanResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
    };
    GetKvSnapshotMetadataRequest => GetKvSnapshotMetadataResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
    };
    ScanKvRequest => ScanKvResponse {
        // A new scan names its bucket; a continuation, its scanner (whose table is checked
        // again, so a scanner id is no way around a revoked ACL).
        fn table_id(&self, s: &Server) -> Option<i64> {
            if let Some(b) = &self.bucket_scan_req {
                return Some(b.table_id);
            }
            let id = self.scanner_id.as_ref()?;
            lock(&s.scanners).get(id).map(|sc| sc.table_id())
        }
    };
    InitWriterRequest => InitWriterResponse {
        fn table_paths(&self) -> &[PbTablePath] { &self.table_path }
    };
    FetchLogRequest => FetchLogResponse {
        fn take_refused(&mut self, allowed: &mut dyn FnMut(i64) -> Option<String>) -> Refused {
            let mut out = Vec::new();
            for t in &mut self.tables_req {
                out.extend(refused_buckets(t.table_id, &mut t.buckets_req, allowed, |b| {
                    (b.partition_id, b.bucket_id)
                }));
            }
            self.tables_req.retain(|t| !t.buckets_req.is_empty());
            out
        }
        fn add_refused(resp: &mut FetchLogResponse, refused: Refused) {
            for (table_id, buckets, msg) in refused {
                resp.tables_resp.push(PbFetchLogRespForTable {
                    table_id,
                    buckets_resp: buckets
                        .into_iter()
                        .map(|(partition_id, bucket_id)| PbFetchLogRespForBucket {
                            partition_id,
                            bucket_id,
                            error_code: Some(error_codes::AUTHORIZATION_EXCEPTION),
                            error_message: Some(msg.clone()),
                            ..Default::default()
                        })
                        .collect(),
                });
            }
        }
    };
    LookupRequest => LookupResponse {
        fn table_id(&self, _s: &Server) -> Option<i64> { Some(self.table_id) }
        fn inserts(&self) -> bool { self.insert_if_not_exists == Some(true) }
        fn take_refused(&mut self, allowed: &mut dyn FnMut(i64) -> Option<String>) -> Refused {
            refused_buckets(self.table_id, &mut self.buckets_req, allowed, |b| {
                (b.partition_id, b.bucket_id)
            })
        }
        fn add_refused(resp: &mut LookupResponse, refused: Refused) {
            for (_, buckets, msg) in refused {
                for (partition_id, bucket_id) in buckets {
                    resp.buckets_resp.push(PbLookupRespForBucket {
                        partition_id,
                        bucket_id,
                        error_code: Some(error_codes::AUTHORIZATION_EXCEPTION),
                        error_message: Some(msg.clone()),
                        ..Default::default()
                    });
                }
            }
        }
    };
    PrefixLookupRequest => PrefixLookupResponse {
        fn take_refused(&mut self, allowed: &mut dyn FnMut(i64) -> Option<String>) -> Refused {
            refused_buckets(self.table_id, &mut self.buckets_req, allowed, |b| {
                (b.partition_id, b.bucket_id)
            })
        }
        fn add_refused(resp: &mut PrefixLookupResponse, refused: Refused) {
            for (_, buckets, msg) in refused {
                for (partition_id, bucket_id) in buckets {
                    resp.buckets_resp.push(PbPrefixLookupRespForBucket {
                        partition_id,
                        bucket_id,
                        error_code: Some(error_codes::AUTHORIZATION_EXCEPTION),
                        error_message: Some(msg.clone()),
                        ..Default::default()
                    });
                }
            }
        }
    };
    ListDatabasesRequest => ListDatabasesResponse {
        fn filter_response(
            resp: &mut ListDatabasesResponse,
            _s: &Server,
            _db: Option<&str>,
            keep: &dyn Fn(&Resource) -> bool,
        ) {
            resp.database_name.retain(|d| keep(&Resource::database(d.as_str())));
            resp.database_summary.retain(|d| keep(&Resource::database(d.database_name.as_str())));
        }
    };
    ListTablesRequest => ListTablesResponse {
        // The response holds bare table names; the database is the request's.
        fn database(&self) -> Option<&str> { Some(&self.database_name) }
        fn filter_response(
            resp: &mut ListTablesResponse,
            _s: &Server,
            db: Option<&str>,
            keep: &dyn Fn(&Resource) -> bool,
        ) {
            let db = db.unwrap_or("");
            resp.table_name.retain(|t| keep(&Resource::table(db, t)));
        }
    };
    MetadataRequest => MetadataResponse {
        fn filter_request(&mut self, keep: &dyn Fn(&Resource) -> bool) {
            self.table_path.retain(|p| keep(&Resource::table(&p.database_name, &p.table_name)));
            self.partitions_path
                .retain(|p| keep(&Resource::table(&p.database_name, &p.table_name)));
        }
        fn filter_response(
            resp: &mut MetadataResponse,
            s: &Server,
            _db: Option<&str>,
            keep: &dyn Fn(&Resource) -> bool,
        ) {
            let c = lock(&s.catalog);
            resp.partition_metadata.retain(|p| {
                c.table_by_id(p.table_id)
                    .map(|t| keep(&Resource::table(&t.entry.database, &t.entry.name)))
                    .unwrap_or(false)
            });
        }
    };
}
