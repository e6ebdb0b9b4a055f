//! [`Connection`]: bootstrap, the cluster metadata cache, leader routing and server connections.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use super::compat;
use super::config::ClientConfig;
use super::retry::Backoff;
use super::{Admin, PartitionInfo, Table};
use crate::error::codes;
use crate::metadata::{TableInfo, TablePath};
use crate::proto::{
    GetTableInfoRequest, GetTableSchemaRequest, ListPartitionInfosRequest, MetadataRequest,
    MetadataResponse, PbBucketMetadata,
};
use crate::rpc::{ConnectionConfig, RpcRequest, ServerConnection};
use crate::{Error, ErrorKind, Result};

/// One server of the cluster as the metadata names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerNode {
    /// The node id (-1 for a bootstrap address whose id is not known yet).
    pub id: i32,
    /// `host:port` to connect to.
    pub address: String,
}

/// How long a read sent to one server may go unanswered before the next server is asked too
/// ([`Connection::request_any`]). Metadata answers take milliseconds; a second copy after a
/// second costs one small request.
const HEDGE_AFTER: Duration = Duration::from_secs(1);

/// [`Connection::leader_moved_from`] asks a table's leaders at most this often.
const LEADER_RECHECK: Duration = Duration::from_secs(1);

/// Where a bucket lives: `(table id, partition id, bucket id)`.
type BucketKey = (i64, Option<i64>, i32);

#[derive(Default)]
struct ClusterState {
    coordinator: Option<ServerNode>,
    tablet_servers: HashMap<i32, ServerNode>,
    connections: HashMap<String, Arc<ServerConnection>>,
    tables: HashMap<TablePath, Arc<TableInfo>>,
    table_paths: HashMap<i64, TablePath>,
    leaders: HashMap<BucketKey, i32>,
    /// table id -> partition name -> partition id
    partition_ids: HashMap<i64, HashMap<String, i64>>,
    /// partition id -> (table id, partition name)
    partition_names: HashMap<i64, (i64, String)>,
    /// When the leaders of a table (or of one partition) were last asked by
    /// [`Connection::leader_moved_from`].
    leader_checks: HashMap<(i64, Option<i64>), std::time::Instant>,
}

struct Inner {
    config: ClientConfig,
    rpc_config: ConnectionConfig,
    bootstrap: Vec<String>,
    backoff: Backoff,
    state: Mutex<ClusterState>,
    /// Serialises metadata refreshes so a burst of NOT_LEADER errors sends one request.
    refresh: tokio::sync::Mutex<()>,
    closed: AtomicBool,
    /// Remote log directories opened so far (by the directory FetchLog named).
    remote_dirs: tokio::sync::Mutex<std::collections::HashMap<String, crate::remote::RemoteDir>>,
}

/// A connection to a Fluss cluster: cheap to clone, shared by admins, tables, writers and
/// scanners. It keeps the cluster metadata (servers, tables, bucket leaders, partitions) and one
/// multiplexed TCP connection per server.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("bootstrap", &self.inner.bootstrap)
            .field("closed", &self.is_closed())
            .finish()
    }
}

fn lock(m: &Mutex<ClusterState>) -> std::sync::MutexGuard<'_, ClusterState> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn address_of(host: &str, port: i32) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Errors after which cached leadership can no longer be trusted.
pub(crate) fn is_stale_metadata(e: &Error) -> bool {
    matches!(
        e.fluss_code(),
        Some(codes::NOT_LEADER_OR_FOLLOWER)
            | Some(codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION)
            | Some(codes::LEADER_NOT_AVAILABLE_EXCEPTION)
            | Some(codes::FENCED_LEADER_EPOCH_EXCEPTION)
    ) || (e.fluss_code().is_none() && matches!(e.kind(), ErrorKind::Network))
}

/// Errors a reader recovers from by asking the cluster who leads the bucket now and trying
/// again: Fluss's InvalidMetadataException family (a leader change, a bucket or leader not
/// known yet, a broken connection), timeouts, and the storage errors a replica answers while it
/// goes offline. Fluss's log scanner and lookup sender retry these without telling the caller.
pub(crate) fn recoverable_by_refresh(e: &Error) -> bool {
    if is_stale_metadata(e) {
        return true;
    }
    match e.fluss_code() {
        Some(code) => matches!(
            code,
            codes::NETWORK_EXCEPTION
                | codes::LEADER_NOT_AVAILABLE_EXCEPTION
                | codes::REQUEST_TIME_OUT
                | codes::STORAGE_EXCEPTION
                | codes::LOG_STORAGE_EXCEPTION
                | codes::KV_STORAGE_EXCEPTION
        ),
        None => matches!(e.kind(), ErrorKind::Network | ErrorKind::Timeout),
    }
}

impl Connection {
    /// Connects to the cluster: tries each bootstrap server in turn (with retries and backoff)
    /// until one answers a metadata request, and learns the coordinator and tablet servers.
    pub async fn connect(config: ClientConfig) -> Result<Connection> {
        let bootstrap = config.bootstrap_list()?;
        config.writer.validate()?;
        let conn = Connection {
            inner: Arc::new(Inner {
                rpc_config: config.connection_config(),
                backoff: Backoff::new(config.retry_backoff, config.max_retry_backoff),
                config,
                bootstrap,
                state: Mutex::new(ClusterState::default()),
                refresh: tokio::sync::Mutex::new(()),
                closed: AtomicBool::new(false),
                remote_dirs: tokio::sync::Mutex::new(std::collections::HashMap::new()),
            }),
        };
        conn.refresh_cluster().await?;
        Ok(conn)
    }

    /// The settings this connection was made with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// An admin client over this connection.
    pub fn admin(&self) -> Admin {
        Admin::new(self.clone())
    }

    /// A handle on an existing table (its info is fetched, or taken from the cache).
    pub async fn table(&self, path: &TablePath) -> Result<Table> {
        // `db.t$lake` / `db.t$lake$snapshots`: table `db.t`, read through a lake view
        let (base, view) = super::TableView::split(path);
        let info = self.table_info(&base).await?;
        Ok(Table::new(self.clone(), info).with_view(view))
    }

    /// Closes every server connection; later calls fail with [`ErrorKind::Closed`].
    /// Writers should be flushed before.
    pub async fn close(&self) {
        if self.inner.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let conns: Vec<Arc<ServerConnection>> = {
            let mut st = lock(&self.inner.state);
            st.leaders.clear();
            st.connections.drain().map(|(_, c)| c).collect()
        };
        for c in conns {
            c.close();
        }
    }

    /// Whether [`Connection::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the connection is closed"));
        }
        Ok(())
    }

    pub(crate) fn backoff(&self) -> Backoff {
        self.inner.backoff
    }

    /// Runs `op` and retries it on retriable errors, `config.retries` times, with backoff.
    /// When the error says the metadata is stale, the cluster view is refreshed first.
    pub(crate) async fn with_retries<T, F, Fut>(&self, mut op: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut attempt = 0u32;
        loop {
            match op().await {
                Ok(v) => return Ok(v),
                // SCHEMA_NOT_EXIST is retriable for writes (a tablet server learns of a new
                // schema after the coordinator), but the coordinator's answer is final.
                Err(e)
                    if e.is_retriable()
                        && e.fluss_code() != Some(codes::SCHEMA_NOT_EXIST)
                        && attempt < self.inner.config.retries =>
                {
                    if self.is_closed() {
                        return Err(e);
                    }
                    tracing::debug!(attempt, error = %e, "retrying request");
                    tokio::time::sleep(self.inner.backoff.delay(attempt)).await;
                    if e.fluss_code().is_none() {
                        // The server may have gone: ask the cluster again who is where.
                        let _ = self.refresh_cluster().await;
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    // ---------------------------------------------------------------- server connections

    /// The connection to `address`, reusing a live one.
    pub(crate) async fn server(&self, address: &str) -> Result<Arc<ServerConnection>> {
        self.check_open()?;
        if let Some(c) = lock(&self.inner.state).connections.get(address) {
            if !c.is_closed() {
                return Ok(c.clone());
            }
        }
        let c = ServerConnection::connect(address, &self.inner.rpc_config)
            .await
            .map_err(|e| e.context(format!("connecting to {address}")))?;
        let mut st = lock(&self.inner.state);
        if self.is_closed() {
            drop(st);
            c.close();
            return Err(Error::new(ErrorKind::Closed, "the connection is closed"));
        }
        if let Some(existing) = st.connections.get(address) {
            if !existing.is_closed() {
                let existing = existing.clone();
                drop(st);
                c.close();
                return Ok(existing);
            }
        }
        st.connections.insert(address.to_string(), c.clone());
        Ok(c)
    }

    /// The coordinator's connection (admin writes go there).
    pub async fn coordinator(&self) -> Result<Arc<ServerConnection>> {
        let node = lock(&self.inner.state).coordinator.clone();
        let node = match node {
            Some(n) => n,
            None => {
                self.refresh_cluster().await?;
                lock(&self.inner.state).coordinator.clone().ok_or_else(|| {
                    Error::from_fluss(
                        codes::NETWORK_EXCEPTION,
                        "the cluster metadata names no coordinator server",
                    )
                })?
            }
        };
        match self.server(&node.address).await {
            Ok(c) => Ok(c),
            Err(e) => {
                // The coordinator may have moved; forget it so the next call asks again.
                let mut st = lock(&self.inner.state);
                if st.coordinator.as_ref() == Some(&node) {
                    st.coordinator = None;
                }
                Err(e)
            }
        }
    }

    /// Some tablet server (for requests any tablet server can answer, like InitWriter).
    pub async fn any_tablet_server(&self) -> Result<Arc<ServerConnection>> {
        let nodes = self.tablet_nodes();
        let nodes = if nodes.is_empty() {
            self.refresh_cluster().await?;
            self.tablet_nodes()
        } else {
            nodes
        };
        let mut last = None;
        for n in nodes {
            match self.server(&n.address).await {
                Ok(c) => return Ok(c),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            Error::from_fluss(
                codes::NETWORK_EXCEPTION,
                "the cluster metadata names no tablet server",
            )
        }))
    }

    fn tablet_nodes(&self) -> Vec<ServerNode> {
        let st = lock(&self.inner.state);
        let mut v: Vec<ServerNode> = st.tablet_servers.values().cloned().collect();
        v.sort_by_key(|n| n.id);
        v
    }

    /// Sends `req` to any server that answers: known servers first, then the bootstrap list.
    ///
    /// The request is hedged: when a server has not answered within [`HEDGE_AFTER`], the next
    /// candidate is asked too, and the first answer wins. A server that is alive but does not
    /// answer (frozen, swapping, partitioned after the handshake) keeps its TCP connection open,
    /// so without this every metadata refresh would wait the whole request timeout on it, and
    /// a client could not even learn that the server's buckets have new leaders. Only reads go
    /// through here (metadata, table info, partitions, tokens), so a second copy is harmless.
    async fn request_any<R: RpcRequest>(&self, req: &R) -> Result<R::Response> {
        let mut candidates: Vec<String> = Vec::new();
        {
            let st = lock(&self.inner.state);
            let mut live: Vec<&String> = st
                .connections
                .iter()
                .filter(|(_, c)| !c.is_closed())
                .map(|(a, _)| a)
                .collect();
            live.sort();
            candidates.extend(live.into_iter().cloned());
            if let Some(c) = &st.coordinator {
                candidates.push(c.address.clone());
            }
            let mut tablets: Vec<&ServerNode> = st.tablet_servers.values().collect();
            tablets.sort_by_key(|n| n.id);
            candidates.extend(tablets.into_iter().map(|n| n.address.clone()));
        }
        candidates.extend(self.inner.bootstrap.iter().cloned());
        let mut seen = HashSet::new();
        candidates.retain(|a| seen.insert(a.clone()));

        type Attempt<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;
        let ask = |address: String| -> Attempt<'_, R::Response> {
            Box::pin(async move {
                let c = self.server(&address).await?;
                c.request(req).await
            })
        };
        let mut candidates = candidates.into_iter();
        let mut running: Vec<Attempt<'_, R::Response>> = Vec::new();
        let hedge = tokio::time::sleep(HEDGE_AFTER);
        tokio::pin!(hedge);
        let mut last: Option<Error> = None;
        loop {
            if running.is_empty() {
                // Nothing in flight (the start, or every attempt failed): ask the next one now.
                match candidates.next() {
                    Some(address) => running.push(ask(address)),
                    None => break,
                }
                hedge
                    .as_mut()
                    .reset(tokio::time::Instant::now() + HEDGE_AFTER);
            }
            let can_hedge = candidates.len() > 0;
            let outcome = std::future::poll_fn(|cx| {
                for (i, attempt) in running.iter_mut().enumerate() {
                    if let Poll::Ready(r) = attempt.as_mut().poll(cx) {
                        return Poll::Ready(Some((i, r)));
                    }
                }
                if can_hedge && hedge.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                Poll::Pending
            })
            .await;
            match outcome {
                None => {
                    if let Some(address) = candidates.next() {
                        running.push(ask(address));
                    }
                    hedge
                        .as_mut()
                        .reset(tokio::time::Instant::now() + HEDGE_AFTER);
                }
                Some((i, r)) => {
                    drop(running.swap_remove(i));
                    match r {
                        Ok(resp) => return Ok(resp),
                        Err(e) if e.fluss_code().is_some() && !e.is_retriable() => return Err(e),
                        Err(e) if e.kind() == ErrorKind::Authentication => return Err(e),
                        Err(e) if e.kind() == ErrorKind::Closed => return Err(e),
                        Err(e) => last = Some(e),
                    }
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::network("no server to ask")))
    }

    // ---------------------------------------------------------------- metadata

    /// Asks the cluster who the coordinator and tablet servers are (the bootstrap step), with
    /// retries and backoff over the whole bootstrap list.
    pub(crate) async fn refresh_cluster(&self) -> Result<()> {
        self.check_open()?;
        let mut attempt = 0u32;
        loop {
            match self.request_any(&MetadataRequest::default()).await {
                Ok(resp) => {
                    self.apply_metadata(&resp, &HashSet::new());
                    return Ok(());
                }
                Err(e) => {
                    let retriable = e.is_retriable()
                        || matches!(e.kind(), ErrorKind::Network | ErrorKind::Timeout);
                    if !retriable || attempt >= self.inner.config.retries || self.is_closed() {
                        return Err(e.context(format!(
                            "cannot reach any of the bootstrap servers [{}]",
                            self.inner.bootstrap.join(",")
                        )));
                    }
                    tokio::time::sleep(self.inner.backoff.delay(attempt)).await;
                    attempt += 1;
                }
            }
        }
    }

    /// Stores servers, leaders and partitions from a metadata response. Buckets of the tables in
    /// `asked` that the response does not mention lose their cached leader.
    fn apply_metadata(&self, resp: &MetadataResponse, asked: &HashSet<i64>) {
        let mut st = lock(&self.inner.state);
        if let Some(c) = &resp.coordinator_server {
            st.coordinator = Some(ServerNode {
                id: c.node_id,
                address: address_of(&c.host, c.port),
            });
        }
        if !resp.tablet_servers.is_empty() {
            st.tablet_servers = resp
                .tablet_servers
                .iter()
                .map(|n| {
                    (
                        n.node_id,
                        ServerNode {
                            id: n.node_id,
                            address: address_of(&n.host, n.port),
                        },
                    )
                })
                .collect();
        }
        for id in asked {
            st.leaders.retain(|k, _| k.0 != *id);
        }
        fn put(st: &mut ClusterState, table: i64, part: Option<i64>, b: &[PbBucketMetadata]) {
            for bm in b {
                match bm.leader_id {
                    Some(l) if l >= 0 => {
                        st.leaders.insert((table, part, bm.bucket_id), l);
                    }
                    _ => {
                        st.leaders.remove(&(table, part, bm.bucket_id));
                    }
                }
            }
        }
        for tm in &resp.table_metadata {
            let path = TablePath {
                database: tm.table_path.database_name.clone(),
                table: tm.table_path.table_name.clone(),
            };
            st.table_paths.insert(tm.table_id, path);
            put(&mut st, tm.table_id, None, &tm.bucket_metadata);
        }
        for pm in &resp.partition_metadata {
            st.partition_ids
                .entry(pm.table_id)
                .or_default()
                .insert(pm.partition_name.clone(), pm.partition_id);
            st.partition_names
                .insert(pm.partition_id, (pm.table_id, pm.partition_name.clone()));
            put(
                &mut st,
                pm.table_id,
                Some(pm.partition_id),
                &pm.bucket_metadata,
            );
        }
    }

    /// The table's info: from the cache, or fetched with GetTableInfo.
    pub async fn table_info(&self, path: &TablePath) -> Result<Arc<TableInfo>> {
        if let Some(info) = lock(&self.inner.state).tables.get(path) {
            return Ok(info.clone());
        }
        self.fetch_table_info(path).await
    }

    /// The table's info; with `refresh` it is fetched again even when cached.
    pub async fn table_info_refresh(
        &self,
        path: &TablePath,
        refresh: bool,
    ) -> Result<Arc<TableInfo>> {
        if !refresh {
            return self.table_info(path).await;
        }
        self.fetch_table_info(path).await
    }

    async fn fetch_table_info(&self, path: &TablePath) -> Result<Arc<TableInfo>> {
        self.check_open()?;
        let req = GetTableInfoRequest {
            table_path: crate::proto::PbTablePath::from(path),
        };
        let resp = self
            .with_retries(|| self.request_any(&req))
            .await
            .map_err(|e| name_table(e, path))?;
        let mut info = compat::table_info(
            path,
            resp.table_id,
            resp.schema_id,
            &resp.table_json,
            resp.created_time,
            resp.modified_time,
        )?;
        // Data written before an ALTER TABLE carries an older schema id: keep those schemas.
        for id in 1..info.schema_id {
            let req = GetTableSchemaRequest {
                table_path: crate::proto::PbTablePath::from(path),
                schema_id: Some(id),
            };
            let resp = self
                .with_retries(|| self.request_any(&req))
                .await
                .map_err(|e| name_table(e, path))?;
            info.older_schemas
                .insert(id, crate::metadata::Schema::from_json(&resp.schema_json)?);
        }
        let info = Arc::new(info);
        let mut st = lock(&self.inner.state);
        if let Some(old) = st.tables.get(path) {
            if old.table_id != info.table_id {
                // The table was dropped and re-created: forget the old one's leaders.
                let old_id = old.table_id;
                st.leaders.retain(|k, _| k.0 != old_id);
                st.partition_ids.remove(&old_id);
            }
        }
        st.tables.insert(path.clone(), info.clone());
        st.table_paths.insert(info.table_id, path.clone());
        Ok(info)
    }

    /// Forgets a table's cached info (e.g. after it was dropped).
    pub(crate) fn forget_table(&self, path: &TablePath) {
        let mut st = lock(&self.inner.state);
        if let Some(info) = st.tables.remove(path) {
            let id = info.table_id;
            st.leaders.retain(|k, _| k.0 != id);
            st.partition_ids.remove(&id);
            st.partition_names.retain(|_, v| v.0 != id);
        }
    }

    /// The partitions of a partitioned table (always asked from the server; refreshes the cache).
    pub async fn partitions(&self, path: &TablePath) -> Result<Vec<PartitionInfo>> {
        let info = self.table_info(path).await?;
        let req = ListPartitionInfosRequest {
            table_path: crate::proto::PbTablePath::from(path),
            partial_partition_spec: None,
        };
        let resp = self
            .with_retries(|| self.request_any(&req))
            .await
            .map_err(|e| name_table(e, path))?;
        let parts: Vec<PartitionInfo> = resp
            .partitions_info
            .iter()
            .map(|p| {
                let spec = compat::spec_from_pb(&p.partition_spec);
                let name = compat::spec_name(&spec);
                PartitionInfo {
                    partition_id: p.partition_id,
                    spec,
                    name,
                }
            })
            .collect();
        let mut st = lock(&self.inner.state);
        let map = st.partition_ids.entry(info.table_id).or_default();
        map.clear();
        for p in &parts {
            map.insert(p.name.clone(), p.partition_id);
        }
        for p in &parts {
            st.partition_names
                .insert(p.partition_id, (info.table_id, p.name.clone()));
        }
        Ok(parts)
    }

    /// The id of partition `name` of the table, from the cache or the server; `None` when the
    /// partition does not exist.
    pub async fn partition_id(&self, path: &TablePath, name: &str) -> Result<Option<i64>> {
        let info = self.table_info(path).await?;
        if let Some(id) = lock(&self.inner.state)
            .partition_ids
            .get(&info.table_id)
            .and_then(|m| m.get(name))
        {
            return Ok(Some(*id));
        }
        let parts = self.partitions(path).await?;
        Ok(parts
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.partition_id))
    }

    /// Drops the cached bucket leaders of a table (and its partitions); the next
    /// [`Connection::leader`] call asks the cluster again.
    pub fn invalidate_table(&self, table_id: i64) {
        lock(&self.inner.state)
            .leaders
            .retain(|k, _| k.0 != table_id);
    }

    /// Asks the cluster for the bucket leaders of a table or of one of its partitions.
    async fn refresh_leaders(&self, table_id: i64, partition_id: Option<i64>) -> Result<()> {
        let _guard = self.inner.refresh.lock().await;
        let path = lock(&self.inner.state).table_paths.get(&table_id).cloned();
        let Some(path) = path else {
            return Err(Error::from_fluss(
                codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                format!(
                    "table id {table_id} is not known to this connection; open the table first"
                ),
            ));
        };
        let mut req = MetadataRequest {
            table_path: vec![crate::proto::PbTablePath::from(&path)],
            ..Default::default()
        };
        if let Some(pid) = partition_id {
            req.table_path.clear();
            req.partitions_id = vec![pid];
        }
        let resp = match self
            .with_retries(|| async { self.request_any(&req).await.map_err(compat::typed_cause) })
            .await
        {
            Ok(resp) => resp,
            Err(e) => {
                // A partition that is gone may be one of a table that was dropped and created
                // again: the path tells.
                if partition_id.is_some() && e.fluss_code() == Some(codes::PARTITION_NOT_EXISTS) {
                    let by_path = MetadataRequest {
                        table_path: vec![crate::proto::PbTablePath::from(&path)],
                        ..Default::default()
                    };
                    if let Ok(now) = self.request_any(&by_path).await {
                        if let Some(now) = other_table_id(&now, &path, table_id) {
                            return Err(recreated(&path, table_id, now));
                        }
                    }
                }
                return Err(name_table(e, &path));
            }
        };
        let asked = if partition_id.is_none() {
            HashSet::from([table_id])
        } else {
            HashSet::new()
        };
        self.apply_metadata(&resp, &asked);
        // The path (or the partition id) now names another table: the one of `table_id` was
        // dropped and the name created again. Its buckets have no leader any more, and asking
        // again will not give them one; writes and reads of the old table end here rather than
        // going on (or, as Fluss's Java client did before #2747, into the new table).
        let other_table = other_table_id(&resp, &path, table_id);
        let other_partition = resp.partition_metadata.iter().find_map(|pm| {
            (Some(pm.partition_id) == partition_id && pm.table_id > table_id).then_some(pm.table_id)
        });
        match (partition_id, other_table, other_partition) {
            (None, Some(now), _) | (Some(_), _, Some(now)) => Err(recreated(&path, table_id, now)),
            _ => Ok(()),
        }
    }

    /// Whether `address` no longer leads a bucket, where a request for it has waited unanswered
    /// for a while (a leader that is alive but does not answer keeps its connection open, so
    /// only the metadata can tell that it lost the bucket): the metadata names another leader,
    /// or `address` is no longer a live server of the cluster. The table's leaders are asked
    /// again, at most once per [`LEADER_RECHECK`] per table or partition. `false` when the
    /// metadata cannot be had: then the request keeps waiting for its own answer or timeout.
    pub(crate) async fn leader_moved_from(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
        address: &str,
    ) -> bool {
        if self.leader_check_due(table_id, partition_id) {
            self.refresh_leaders_for_check(table_id, partition_id).await;
        }
        self.cached_leader_moved_from(table_id, partition_id, bucket, address)
    }

    /// [`Connection::leader_moved_from`] without waiting: the table's leaders are asked again
    /// in a task of their own (when due), and the answer comes from what the metadata says
    /// now, so a caller with a deadline (a subscription's poll) is never held up by the
    /// refresh; a later call sees its result.
    pub(crate) fn leader_moved_from_now(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
        address: &str,
    ) -> bool {
        if self.leader_check_due(table_id, partition_id) {
            let conn = self.clone();
            tokio::spawn(
                async move { conn.refresh_leaders_for_check(table_id, partition_id).await },
            );
        }
        self.cached_leader_moved_from(table_id, partition_id, bucket, address)
    }

    /// A leader check's refresh: a failure only means the check answers from what is cached.
    async fn refresh_leaders_for_check(&self, table_id: i64, partition_id: Option<i64>) {
        if let Err(e) = self.refresh_leaders(table_id, partition_id).await {
            tracing::debug!(error = %e, table_id, "leader check could not refresh metadata");
        }
    }

    /// Whether the leaders of a table (or partition) may be asked again now, at most once per
    /// [`LEADER_RECHECK`]; marks them asked when so.
    fn leader_check_due(&self, table_id: i64, partition_id: Option<i64>) -> bool {
        let mut st = lock(&self.inner.state);
        let now = std::time::Instant::now();
        let last = st.leader_checks.get(&(table_id, partition_id)).copied();
        let due = last.is_none_or(|t| now.duration_since(t) >= LEADER_RECHECK);
        if due {
            st.leader_checks.insert((table_id, partition_id), now);
        }
        due
    }

    /// The comparison of [`Connection::leader_moved_from`] on the cached metadata.
    fn cached_leader_moved_from(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
        address: &str,
    ) -> bool {
        let st = lock(&self.inner.state);
        // `address` no longer leads the bucket when the metadata names another leader, and also
        // when it is no longer a live server of the cluster: Fluss drops a server whose
        // ZooKeeper session expired from the server list at once, while the bucket's new
        // leader can reach the metadata later (Fluss 0.9.1 published it only once the frozen
        // server answered again). A send to it cannot be answered either way.
        let still_live = st.tablet_servers.values().any(|n| n.address == address);
        let leader = st
            .leaders
            .get(&(table_id, partition_id, bucket))
            .and_then(|id| st.tablet_servers.get(id));
        !still_live || leader.is_some_and(|node| node.address != address)
    }

    /// The address of a bucket's leader as the cached metadata has it (no request is sent).
    pub(crate) fn cached_leader_address(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
    ) -> Option<String> {
        let st = lock(&self.inner.state);
        st.leaders
            .get(&(table_id, partition_id, bucket))
            .and_then(|id| st.tablet_servers.get(id))
            .map(|node| node.address.clone())
    }

    /// The node id leading a bucket, refreshing the metadata once when it is not cached.
    pub(crate) async fn leader_node(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
    ) -> Result<ServerNode> {
        let key = (table_id, partition_id, bucket);
        for round in 0..2 {
            {
                let st = lock(&self.inner.state);
                if let Some(node) = st
                    .leaders
                    .get(&key)
                    .and_then(|id| st.tablet_servers.get(id))
                {
                    return Ok(node.clone());
                }
            }
            if round == 0 {
                self.refresh_leaders(table_id, partition_id).await?;
            }
        }
        let what = match partition_id {
            Some(p) => format!("bucket {bucket} of partition {p} of table id {table_id}"),
            None => format!("bucket {bucket} of table id {table_id}"),
        };
        Err(Error::from_fluss(
            codes::LEADER_NOT_AVAILABLE_EXCEPTION,
            format!("no leader is known for {what}"),
        ))
    }

    /// The connection to the leader of a bucket (metadata cache; refreshed when missing and,
    /// through [`Connection::invalidate_table`], after NOT_LEADER_OR_FOLLOWER or
    /// UNKNOWN_TABLE_OR_BUCKET errors).
    pub async fn leader(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
    ) -> Result<Arc<ServerConnection>> {
        let node = self.leader_node(table_id, partition_id, bucket).await?;
        match self.server(&node.address).await {
            Ok(c) => Ok(c),
            Err(e) => {
                self.invalidate_table(table_id);
                Err(e)
            }
        }
    }

    /// Sends a request to a bucket's leader, retrying (with a metadata refresh) when the
    /// leader moved or the connection broke.
    pub async fn request_leader<R: RpcRequest>(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
        req: &R,
    ) -> Result<R::Response> {
        self.with_retries(|| async {
            let c = self.leader(table_id, partition_id, bucket).await?;
            c.request(req).await.inspect_err(|e| {
                if is_stale_metadata(e) {
                    self.invalidate_table(table_id);
                }
            })
        })
        .await
    }

    /// Sends a read to a bucket's leader and judges the answer with `check` (which turns a
    /// bucket-level error into an `Err`), trying again while the error is one a reader recovers
    /// from ([`recoverable_by_refresh`]): the table's leaders are forgotten, a backoff waited,
    /// and the bucket's leader asked again. Fluss's Java client retries lookups this way with
    /// no bound; here the bound is `limit` from the first attempt, after which the last error is
    /// returned.
    pub(crate) async fn read_from_leader<R: RpcRequest, T>(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        bucket: i32,
        req: &R,
        limit: Duration,
        check: impl Fn(R::Response) -> Result<T>,
    ) -> Result<T> {
        let started = std::time::Instant::now();
        let mut attempt = 0u32;
        loop {
            let result = async {
                let c = self.leader(table_id, partition_id, bucket).await?;
                check(c.request(req).await?)
            }
            .await;
            match result {
                Ok(v) => return Ok(v),
                Err(e)
                    if recoverable_by_refresh(&e)
                        && started.elapsed() < limit
                        && !self.is_closed() =>
                {
                    if attempt == 0 {
                        tracing::warn!(table_id, bucket, error = %e, "read failed; retrying after a metadata refresh");
                    }
                    self.invalidate_table(table_id);
                    tokio::time::sleep(self.inner.backoff.delay(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends a request to the coordinator, retrying on retriable errors when `idempotent`.
    pub(crate) async fn request_coordinator<R: RpcRequest>(
        &self,
        req: &R,
        idempotent: bool,
    ) -> Result<R::Response> {
        if idempotent {
            self.with_retries(|| async { self.coordinator().await?.request(req).await })
                .await
        } else {
            // Retry only when the request could not even be sent.
            let c = self.with_retries(|| self.coordinator()).await?;
            c.request(req).await
        }
    }

    /// The remote log directory `dir` named by a FetchLog answer, opened once per connection.
    /// S3 credentials, endpoint, region and path style come from the cluster's
    /// `GetFileSystemSecurityToken` answer, as Fluss's client takes them; a local directory
    /// needs none.
    pub(crate) async fn remote_dir(&self, dir: &str) -> Result<crate::remote::RemoteDir> {
        let mut dirs = self.inner.remote_dirs.lock().await;
        if let Some(d) = dirs.get(dir) {
            return Ok(d.clone());
        }
        let s3 = if crate::remote::is_s3(dir) {
            let t = self
                .request_any_retrying(&crate::proto::GetFileSystemSecurityTokenRequest {})
                .await
                .map_err(|e| e.context("GetFileSystemSecurityToken"))?;
            let infos: Vec<(String, String)> = t
                .addition_info
                .into_iter()
                .map(|kv| (kv.key, kv.value))
                .collect();
            crate::remote::s3_options_from_token(&t.token, &infos)?
        } else {
            crate::remote::S3Options::default()
        };
        let opened = crate::remote::RemoteDir::open(dir, &s3)?;
        dirs.insert(dir.to_string(), opened.clone());
        Ok(opened)
    }

    /// Sends a read-only request to any server, with retries.
    pub(crate) async fn request_any_retrying<R: RpcRequest>(&self, req: &R) -> Result<R::Response> {
        self.with_retries(|| self.request_any(req)).await
    }
}

/// The id of the table `path` names in `resp` when that is a table created after `table_id`.
/// Table ids only grow (a ZooKeeper sequence in Fluss, a counter in the embedded server): a
/// smaller id is the older table still in the metadata cache of a tablet server that has not
/// caught up, not a sign that `table_id` is gone.
fn other_table_id(resp: &MetadataResponse, path: &TablePath, table_id: i64) -> Option<i64> {
    resp.table_metadata.iter().find_map(|tm| {
        (tm.table_id > table_id
            && tm.table_path.database_name == path.database
            && tm.table_path.table_name == path.table)
            .then_some(tm.table_id)
    })
}

/// The error of a request for table `old_id` of `path` after the path was dropped and created
/// again as table `new_id`.
fn recreated(path: &TablePath, old_id: i64, new_id: i64) -> Error {
    Error::from_fluss(
        codes::TABLE_NOT_EXIST,
        format!(
            "table '{path}' (id {old_id}) no longer exists: it was dropped and created again \
             (now id {new_id}); open the table again to use the new one"
        ),
    )
}

/// Adds the table's name to an error that does not mention it yet.
pub(crate) fn name_table(e: Error, path: &TablePath) -> Error {
    let name = path.to_string();
    if e.message().contains(&name) {
        e
    } else {
        e.context(format!("table '{name}'"))
    }
}
