//! An Arrow Flight SQL service over [`crate::session`]: SQL statements (and prepared statements
//! without parameters) through DataFusion, catalog/schema/table metadata from the Fluss
//! catalog, and `DoPut` writes (Flight SQL bulk ingest, `INSERT` statements, or a plain Flight
//! `DoPut` on a `[database, table]` path) appended to log tables and upserted into
//! primary-key tables.
//!
//! Authentication: Flight basic auth (`Handshake` with `authorization: Basic ...`) is passed
//! through as SASL/PLAIN credentials of a Fluss connection of that client; the client then
//! sends the bearer token it got back. Calls without a token use the service's own connection
//! (the credentials it was started with, if any).
//!
//! Endpoints: a query whose physical plan keeps the per-bucket reads apart (no repartitioning
//! or merging) gets one endpoint per bucket, fetched independently; other plans get one. The
//! plan is made once, at `GetFlightInfo` (so a window ending "now" is the same for every
//! endpoint), and kept until each of its endpoints was fetched.
//!
//! A query that is only a read of one table (`SELECT <columns> FROM t`, a commit-time window;
//! no filter, limit or expression left for DataFusion: [`crate::provider::plain_read`]) is not
//! run through DataFusion: the core's Arrow IPC messages are sent as Flight data, and Fluss's
//! log batches, already Arrow IPC, go out as stored (`ScanBuilder::execute_ipc`).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use arrow_flight::decode::FlightRecordBatchStream;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightServiceServer;
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, Any, CommandGetCatalogs, CommandGetDbSchemas,
    CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables, CommandPreparedStatementQuery,
    CommandStatementIngest, CommandStatementQuery, CommandStatementUpdate, ProstMessageExt,
    SqlInfo, TicketStatementQuery,
};
use arrow_flight::{
    FlightData, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse,
    IpcMessage, PutResult, SchemaAsIpc, Ticket,
};
use base64::Engine;
use datafusion::error::DataFusionError;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::{execute_stream, ExecutionPlan, ExecutionPlanProperties};
use datafusion::prelude::SessionContext;
use futures::{Stream, StreamExt, TryStreamExt};
use prost::Message;
use riverlet::client::Connection;
use riverlet::metadata::TablePath;
use riverlet::scan::{IpcStream, ReadRequest, ReadSplit};
use riverlet::ErrorKind;
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status, Streaming};

use crate::{bridge, core_error, write, SqlOptions};

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

/// How the service reaches the Fluss cluster: connects with optional (user, password).
pub type Connector = Arc<
    dyn Fn(
            Option<(String, String)>,
        ) -> Pin<
            Box<dyn std::future::Future<Output = riverlet::Result<Connection>> + Send + 'static>,
        > + Send
        + Sync,
>;

/// One client's Fluss connection and SQL session.
#[derive(Clone)]
struct Session {
    conn: Connection,
    ctx: SessionContext,
}

/// A planned query kept between `GetFlightInfo` and the `DoGet`s of its endpoints.
struct Planned {
    plan: Arc<dyn ExecutionPlan>,
    task: Arc<TaskContext>,
    /// Endpoints not fetched yet.
    pending: usize,
    /// A random part of the ticket, so that tickets cannot be guessed.
    nonce: String,
    /// A query that is a plain read of one table: the core's read, streamed as Arrow IPC
    /// messages (see [`forward_response`]) instead of running `plan`.
    plain_read: Option<(riverlet::client::Table, ReadRequest)>,
    /// A plain read cut into more pieces than the plan has partitions: one endpoint each.
    splits: Option<Vec<ReadSplit>>,
}

/// A plan, its task context, and which of its endpoints (index, count) a ticket names.
struct Fetch {
    plan: Arc<dyn ExecutionPlan>,
    task: Arc<TaskContext>,
    /// This endpoint's partition, and how many endpoints the query has.
    part: usize,
    count: usize,
    plain_read: Option<(riverlet::client::Table, ReadRequest)>,
    /// The piece of the plain read this endpoint reads.
    split: Option<ReadSplit>,
}

/// Plans kept at most (the oldest are dropped first when clients never fetch theirs).
const MAX_PLANS: usize = 256;

/// A plain read of a log table gets one endpoint per piece of about `SqlOptions::split_records`
/// records of a bucket (at most this many per bucket) when that makes more endpoints than one
/// per bucket. Flight SQL clients that hand endpoints out in order read each only a few
/// batches ahead of the one being consumed (the ADBC driver: 5 record batches per endpoint,
/// `adbc.rpc.result_queue_size`), so with one endpoint per bucket they decode one bucket at a
/// time; pieces of a few Fluss batches (the writer's are ~2 MiB of Arrow, ~50k rows of the
/// bench's table) would let them decode all at once. Off by default: measured (dev builds,
/// benches/PROFILE.md) pyarrow.flight and ADBC were both slower with pieces and the server's
/// CPU per scan nearly doubled (likely: each piece's FetchLog answers carry batches past its
/// cut that only the next piece keeps; not measured apart). At most this many per bucket:
/// every endpoint a client opens at once is a read running here, holding its fetched bytes
/// ahead of the client.
const MAX_SPLITS_PER_BUCKET: usize = 16;

/// The Flight SQL service.
#[derive(Clone)]
pub struct FlussFlightSql {
    connector: Connector,
    options: SqlOptions,
    anonymous: Arc<tokio::sync::OnceCell<Connection>>,
    sessions: Arc<Mutex<HashMap<String, Session>>>,
    plans: Arc<Mutex<(u64, std::collections::BTreeMap<u64, Planned>)>>,
    sql_info: Arc<SqlInfoData>,
}

fn status(e: DataFusionError) -> Status {
    match core_error(&e) {
        Some(core) => core_status(core),
        None => Status::invalid_argument(e.to_string()),
    }
}

fn core_status(e: &riverlet::Error) -> Status {
    let m = e.to_string();
    match e.kind() {
        ErrorKind::NotFound => Status::not_found(m),
        ErrorKind::AlreadyExists => Status::already_exists(m),
        ErrorKind::InvalidArgument => Status::invalid_argument(m),
        ErrorKind::Unsupported => Status::unimplemented(m),
        ErrorKind::Authentication => Status::unauthenticated(m),
        ErrorKind::Network | ErrorKind::Timeout | ErrorKind::Closed => Status::unavailable(m),
        _ => Status::internal(m),
    }
}

fn flight_status(e: FlightError) -> Status {
    match e {
        FlightError::Tonic(s) => *s,
        FlightError::ExternalError(inner) => match inner.downcast::<DataFusionError>() {
            Ok(df) => status(*df),
            Err(other) => Status::internal(other.to_string()),
        },
        other => Status::internal(other.to_string()),
    }
}

fn random_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the OS's randomness for every new instance.
    let mut token = String::new();
    for _ in 0..2 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(std::process::id() as u64);
        token.push_str(&format!("{:016x}", h.finish()));
    }
    token
}

impl FlussFlightSql {
    /// A service connecting through `connector`, with sessions configured by `options`.
    pub fn new(connector: Connector, options: SqlOptions) -> Result<FlussFlightSql, Status> {
        let mut info = SqlInfoDataBuilder::new();
        info.append(SqlInfo::FlightSqlServerName, "Riverlet Flight SQL");
        info.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
        info.append(SqlInfo::FlightSqlServerArrowVersion, "59");
        info.append(SqlInfo::FlightSqlServerReadOnly, false);
        info.append(SqlInfo::FlightSqlServerSql, true);
        info.append(SqlInfo::FlightSqlServerSubstrait, false);
        info.append(SqlInfo::FlightSqlServerTransaction, 0i32);
        let sql_info = info.build().map_err(|e| Status::internal(e.to_string()))?;
        Ok(FlussFlightSql {
            connector,
            options,
            anonymous: Arc::new(tokio::sync::OnceCell::new()),
            sessions: Arc::new(Mutex::new(HashMap::new())),
            plans: Arc::new(Mutex::new((0, Default::default()))),
            sql_info: Arc::new(sql_info),
        })
    }

    /// The tonic service.
    pub fn into_server(self) -> FlightServiceServer<FlussFlightSql> {
        FlightServiceServer::new(self)
    }

    fn new_session(&self, conn: Connection) -> Session {
        let ctx = crate::session(conn.clone(), &self.options);
        Session { conn, ctx }
    }

    /// The session of a request: its bearer token's, else the service's own.
    async fn session<T>(&self, request: &Request<T>) -> Result<Session, Status> {
        let auth = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        if let Some(token) = auth.and_then(|a| a.strip_prefix("Bearer ")) {
            let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            return sessions
                .get(token.trim())
                .cloned()
                .ok_or_else(|| Status::unauthenticated("unknown or expired bearer token"));
        }
        if let Some(basic) = auth.and_then(|a| a.strip_prefix("Basic ")) {
            // Basic credentials on every call (no handshake): one login per credential pair.
            let key = format!("Basic {}", basic.trim());
            if let Some(s) = self
                .sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&key)
            {
                return Ok(s.clone());
            }
            let (user, password) = decode_basic(basic)?;
            let conn = (self.connector)(Some((user, password)))
                .await
                .map_err(|e| core_status(&e))?;
            let session = self.new_session(conn);
            self.sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, session.clone());
            return Ok(session);
        }
        let connector = self.connector.clone();
        let conn = self
            .anonymous
            .get_or_try_init(|| async move { connector(None).await })
            .await
            .map_err(|e| core_status(&e))?
            .clone();
        Ok(self.new_session(conn))
    }

    /// Plans `sql` and describes its endpoints.
    async fn plan_info(
        &self,
        session: &Session,
        sql: &str,
        descriptor: FlightDescriptor,
    ) -> Result<FlightInfo, Status> {
        let df = session.ctx.sql(sql).await.map_err(status)?;
        let plain_read = df
            .clone()
            .into_optimized_plan()
            .ok()
            .and_then(|p| crate::provider::plain_read(&p));
        let task = Arc::new(df.task_ctx());
        let plan = df.create_physical_plan().await.map_err(status)?;
        let schema = plan.schema();
        let mut endpoints = if splittable(&plan) {
            plan.output_partitioning().partition_count().max(1)
        } else {
            1
        };
        let mut splits = None;
        if let Some((table, request)) = plain_read
            .as_ref()
            .filter(|_| self.options.split_records > 0)
        {
            let cut = request
                .to_scan(table)
                .plan_splits(self.options.split_records, MAX_SPLITS_PER_BUCKET)
                .await
                .map_err(|e| core_status(&e))?;
            if let Some(cut) = cut.filter(|c| c.len() > endpoints) {
                endpoints = cut.len();
                splits = Some(cut);
            }
        }
        let nonce = random_token();
        let id = {
            let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
            plans.0 += 1;
            let id = plans.0;
            plans.1.insert(
                id,
                Planned {
                    plan,
                    task,
                    pending: endpoints,
                    nonce: nonce.clone(),
                    plain_read,
                    splits,
                },
            );
            while plans.1.len() > MAX_PLANS {
                plans.1.pop_first();
            }
            id
        };
        let mut info = FlightInfo::new()
            .try_with_schema(&schema)
            .map_err(|e| Status::internal(e.to_string()))?
            .with_descriptor(descriptor);
        for part in 0..endpoints {
            let handle = format!("{id}/{part}/{endpoints}/{nonce}");
            let ticket = TicketStatementQuery {
                statement_handle: handle.into_bytes().into(),
            };
            info = info.with_endpoint(
                FlightEndpoint::new().with_ticket(Ticket::new(ticket.as_any().encode_to_vec())),
            );
        }
        Ok(info)
    }

    fn take_plan(&self, handle: &[u8]) -> Result<Fetch, Status> {
        let text = std::str::from_utf8(handle)
            .map_err(|_| Status::invalid_argument("bad statement handle"))?;
        let bad = || Status::invalid_argument(format!("bad statement handle '{text}'"));
        let fields: Vec<&str> = text.split('/').collect();
        let [id, part, count, nonce] = fields[..] else {
            return Err(bad());
        };
        let number = |v: &str| v.parse::<u64>().map_err(|_| bad());
        let (id, part, count) = (number(id)?, number(part)?, number(count)?);
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        let planned = plans
            .1
            .get_mut(&id)
            .filter(|p| p.nonce == nonce)
            .ok_or_else(|| {
                Status::not_found(format!(
                    "statement '{text}' is unknown or was already fetched; call GetFlightInfo \
                     again"
                ))
            })?;
        let found = Fetch {
            plan: planned.plan.clone(),
            task: planned.task.clone(),
            part: part as usize,
            count: count as usize,
            plain_read: planned.plain_read.clone(),
            split: planned
                .splits
                .as_ref()
                .and_then(|s| s.get(part as usize))
                .cloned(),
        };
        planned.pending = planned.pending.saturating_sub(1);
        if planned.pending == 0 {
            plans.1.remove(&id);
        }
        Ok(found)
    }
}

/// Whether every output partition of `plan` is computed from one bucket read alone, so each
/// can be fetched on its own (no repartitioning, merging or joining above the reads).
fn splittable(plan: &Arc<dyn ExecutionPlan>) -> bool {
    let name = plan.name();
    if name == "RepartitionExec"
        || name == "CoalescePartitionsExec"
        || name == "SortPreservingMergeExec"
        || plan.children().len() > 1
    {
        return false;
    }
    plan.children().into_iter().all(splittable)
}

fn decode_basic(encoded: &str) -> Result<(String, String), Status> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| Status::invalid_argument("authorization: bad Basic credentials"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Status::invalid_argument("authorization: bad Basic credentials"))?;
    let (user, password) = text
        .split_once(':')
        .ok_or_else(|| Status::invalid_argument("authorization: Basic needs user:password"))?;
    Ok((user.to_string(), password.to_string()))
}

fn batches_response(
    schema: SchemaRef,
    batches: impl Stream<Item = Result<arrow::record_batch::RecordBatch, DataFusionError>>
        + Send
        + 'static,
) -> Response<BoxStream<FlightData>> {
    let stream = FlightDataEncoderBuilder::new()
        .with_schema(schema)
        .build(batches.map_err(|e| FlightError::ExternalError(Box::new(e))))
        .map_err(flight_status);
    Response::new(Box::pin(stream))
}

/// A read's Arrow IPC messages as Flight data: the schema message, then each record-batch
/// message as it came from the core (Fluss's stored Arrow when the core forwarded it). At the
/// end, how many went out as stored and how many were encoded here is logged (debug) under
/// `what`, the read's name.
fn forward_response(stream: IpcStream, what: String) -> Response<BoxStream<FlightData>> {
    let schema = FlightData {
        data_header: stream.schema_message().header,
        ..Default::default()
    };
    let messages = futures::stream::unfold((stream, what), |(mut s, what)| async move {
        match s.next().await {
            Some(m) => Some((m, (s, what))),
            None => {
                tracing::debug!(
                    "plain read of {what} sent: forwarded={} encoded={}",
                    s.forwarded(),
                    s.encoded()
                );
                None
            }
        }
    })
    .map(|m| {
        m.map(|m| FlightData {
            data_header: m.header,
            data_body: m.body,
            ..Default::default()
        })
        .map_err(|e| core_status(&e))
    });
    Response::new(Box::pin(
        futures::stream::once(async { Ok(schema) }).chain(messages),
    ))
}

fn one_batch<E: std::fmt::Display>(
    batch: Result<arrow::record_batch::RecordBatch, E>,
) -> Result<Response<BoxStream<FlightData>>, Status> {
    let batch = batch.map_err(|e| Status::internal(e.to_string()))?;
    let schema = batch.schema();
    Ok(batches_response(schema, futures::stream::iter([Ok(batch)])))
}

fn info_for(
    schema: &arrow::datatypes::Schema,
    descriptor: FlightDescriptor,
    command: impl ProstMessageExt,
) -> Result<Response<FlightInfo>, Status> {
    let info = FlightInfo::new()
        .try_with_schema(schema)
        .map_err(|e| Status::internal(e.to_string()))?
        .with_descriptor(descriptor)
        .with_endpoint(
            FlightEndpoint::new().with_ticket(Ticket::new(command.as_any().encode_to_vec())),
        );
    Ok(Response::new(info))
}

impl FlussFlightSql {
    /// Writes the Arrow stream of a `DoPut` into `database.table`; returns the row count.
    async fn put(
        &self,
        session: &Session,
        database: &str,
        table: &str,
        stream: PeekableFlightDataStream,
    ) -> Result<i64, Status> {
        let path = TablePath::new(database, table);
        let table = session
            .conn
            .table(&path)
            .await
            .map_err(|e| core_status(&e))?;
        let batches = FlightRecordBatchStream::new_from_flight_data(
            stream.map_err(|s| FlightError::Tonic(Box::new(s))),
        )
        .map(|b| {
            b.map_err(|e| DataFusionError::External(Box::new(e)))
                .and_then(bridge::batch_from_df)
        });
        let rows = write::write_stream(&table, batches).await.map_err(status)?;
        Ok(rows as i64)
    }
}

#[tonic::async_trait]
impl FlightSqlService for FlussFlightSql {
    type FlightService = FlussFlightSql;

    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<BoxStream<HandshakeResponse>>, Status> {
        let basic = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|a| a.strip_prefix("Basic "))
            .ok_or_else(|| {
                Status::unauthenticated("Handshake needs 'authorization: Basic <user:password>'")
            })?;
        let (user, password) = decode_basic(basic)?;
        // The Fluss login (SASL/PLAIN) is the check: a wrong password fails here.
        let conn = (self.connector)(Some((user, password)))
            .await
            .map_err(|e| core_status(&e))?;
        let token = random_token();
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), self.new_session(conn));
        let reply = HandshakeResponse {
            protocol_version: 0,
            payload: token.clone().into_bytes().into(),
        };
        let mut response: Response<BoxStream<HandshakeResponse>> =
            Response::new(Box::pin(futures::stream::iter([Ok(reply)])));
        let value = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|_| Status::internal("token"))?;
        response.metadata_mut().insert("authorization", value);
        Ok(response)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let session = self.session(&request).await?;
        let info = self
            .plan_info(&session, &query.query, request.into_inner())
            .await?;
        Ok(Response::new(info))
    }

    async fn get_flight_info_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let session = self.session(&request).await?;
        let sql = String::from_utf8(query.prepared_statement_handle.to_vec())
            .map_err(|_| Status::invalid_argument("bad prepared statement handle"))?;
        let info = self.plan_info(&session, &sql, request.into_inner()).await?;
        Ok(Response::new(info))
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<BoxStream<FlightData>>, Status> {
        let Fetch {
            plan,
            task,
            part,
            count,
            plain_read,
            split,
        } = self.take_plan(&ticket.statement_handle)?;
        if let Some((table, mut request)) = plain_read {
            let scan = match (count, &split) {
                (_, Some(s)) => {
                    // One piece of a bucket, with the bounds taken at GetFlightInfo.
                    request.buckets = Some(vec![s.bucket()]);
                    request.to_scan(&table).split(s.clone())
                }
                (1, None) => request.to_scan(&table),
                (_, None) => {
                    // One endpoint per bucket, as the plan's partitions are.
                    request.buckets = Some(vec![part as i32]);
                    request.to_scan(&table)
                }
            };
            let what = match &split {
                Some(s) => format!("{} bucket {} piece {part}", table.path(), s.bucket()),
                None if count == 1 => table.path().to_string(),
                None => format!("{} bucket {part}", table.path()),
            };
            let stream = scan
                .execute_ipc(self.options.ipc_bodies)
                .await
                .map_err(|e| core_status(&e))?;
            for w in stream.warnings() {
                tracing::warn!("{}: {w}", table.path());
            }
            return Ok(forward_response(stream, what));
        }
        let schema = plan.schema();
        let stream = if count == 1 {
            execute_stream(plan, task).map_err(status)?
        } else {
            plan.execute(part, task).map_err(status)?
        };
        Ok(batches_response(schema, stream))
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<arrow_flight::Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        let session = self.session(&request).await?;
        let df = session.ctx.sql(&query.query).await.map_err(status)?;
        let schema = df.schema().inner().clone();
        let IpcMessage(schema_bytes) =
            SchemaAsIpc::new(&schema, &arrow::ipc::writer::IpcWriteOptions::default())
                .try_into()
                .map_err(|e: arrow::error::ArrowError| Status::internal(e.to_string()))?;
        // The handle is the statement itself: it is planned again when executed.
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: query.query.into_bytes().into(),
            dataset_schema: schema_bytes,
            parameter_schema: Default::default(),
        })
    }

    async fn do_action_close_prepared_statement(
        &self,
        _query: ActionClosePreparedStatementRequest,
        _request: Request<arrow_flight::Action>,
    ) -> Result<(), Status> {
        Ok(())
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        info_for(&schema, request.into_inner(), query)
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        _request: Request<Ticket>,
    ) -> Result<Response<BoxStream<FlightData>>, Status> {
        let mut builder = query.into_builder();
        builder.append(&self.options.catalog);
        one_batch(builder.build())
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        info_for(&schema, request.into_inner(), query)
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> Result<Response<BoxStream<FlightData>>, Status> {
        let session = self.session(&request).await?;
        let databases = session
            .conn
            .admin()
            .list_databases()
            .await
            .map_err(|e| core_status(&e))?;
        let mut builder = query.into_builder();
        for db in databases {
            builder.append(&self.options.catalog, db);
        }
        one_batch(builder.build())
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        info_for(&schema, request.into_inner(), query)
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> Result<Response<BoxStream<FlightData>>, Status> {
        let session = self.session(&request).await?;
        let admin = session.conn.admin();
        let databases = admin.list_databases().await.map_err(|e| core_status(&e))?;
        let mut builder = query.into_builder();
        for db in databases {
            for t in admin.list_tables(&db).await.map_err(|e| core_status(&e))? {
                let schema = if builder.include_schema() {
                    let info = admin
                        .table_info(&TablePath::new(&db, &t))
                        .await
                        .map_err(|e| core_status(&e))?;
                    bridge::schema_to_df(&info.descriptor.schema.to_arrow()).map_err(status)?
                } else {
                    Arc::new(arrow::datatypes::Schema::empty())
                };
                builder
                    .append(&self.options.catalog, &db, &t, "TABLE", &schema)
                    .map_err(|e| Status::internal(e.to_string()))?;
            }
        }
        one_batch(builder.build())
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "table_type",
            arrow::datatypes::DataType::Utf8,
            false,
        )]);
        info_for(&schema, request.into_inner(), query)
    }

    async fn do_get_table_types(
        &self,
        _query: CommandGetTableTypes,
        _request: Request<Ticket>,
    ) -> Result<Response<BoxStream<FlightData>>, Status> {
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("table_type", arrow::datatypes::DataType::Utf8, false),
        ]));
        let array = Arc::new(arrow::array::StringArray::from(vec!["TABLE"]));
        one_batch(arrow::record_batch::RecordBatch::try_new(
            schema,
            vec![array],
        ))
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        info_for(&self.sql_info.schema(), request.into_inner(), query)
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        _request: Request<Ticket>,
    ) -> Result<Response<BoxStream<FlightData>>, Status> {
        one_batch(self.sql_info.record_batch(query.info))
    }

    async fn do_put_statement_update(
        &self,
        command: CommandStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let session = self.session(&request).await?;
        let df = session.ctx.sql(&command.query).await.map_err(status)?;
        let batches = df.collect().await.map_err(status)?;
        // DataFusion's INSERT answers with one `count` row.
        let count = batches
            .first()
            .filter(|b| b.num_columns() == 1 && b.num_rows() == 1)
            .and_then(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<arrow::array::UInt64Array>()
                    .map(|a| a.value(0) as i64)
            })
            .unwrap_or(-1);
        Ok(count)
    }

    async fn do_put_statement_ingest(
        &self,
        command: CommandStatementIngest,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        use arrow_flight::sql::{TableExistsOption, TableNotExistOption};
        let session = self.session(&request).await?;
        if let Some(o) = &command.table_definition_options {
            if o.if_exists != TableExistsOption::Append as i32
                && o.if_exists != TableExistsOption::Unspecified as i32
            {
                return Err(Status::unimplemented(
                    "bulk ingest appends to (log) or upserts into (primary key) an existing \
                     Fluss table; use mode 'append'",
                ));
            }
            if o.if_not_exist == TableNotExistOption::Create as i32 {
                return Err(Status::unimplemented(
                    "bulk ingest does not create Fluss tables; create the table first",
                ));
            }
        }
        if let Some(c) = command.catalog.as_deref() {
            if c != self.options.catalog {
                return Err(Status::not_found(format!("unknown catalog '{c}'")));
            }
        }
        let database = command
            .schema
            .clone()
            .unwrap_or_else(|| self.options.database.clone());
        let stream = request.into_inner();
        self.put(&session, &database, &command.table, stream).await
    }

    async fn do_put_fallback(
        &self,
        request: Request<PeekableFlightDataStream>,
        _message: Any,
    ) -> Result<Response<BoxStream<PutResult>>, Status> {
        let session = self.session(&request).await?;
        let mut stream = request.into_inner();
        let descriptor = stream
            .peek()
            .await
            .and_then(|d| d.as_ref().ok())
            .and_then(|d| d.flight_descriptor.clone())
            .ok_or_else(|| Status::invalid_argument("DoPut needs a flight descriptor"))?;
        let (database, table) = match descriptor.path.as_slice() {
            [t] => (self.options.database.clone(), t.clone()),
            [d, t] => (d.clone(), t.clone()),
            other => {
                return Err(Status::invalid_argument(format!(
                    "DoPut: the descriptor path must be [table] or [database, table], got {other:?}"
                )))
            }
        };
        let rows = self.put(&session, &database, &table, stream).await?;
        let result = PutResult {
            app_metadata: format!("{{\"rows\": {rows}}}").into_bytes().into(),
        };
        Ok(Response::new(Box::pin(futures::stream::iter([Ok(result)]))))
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}
