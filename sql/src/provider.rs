//! [`FlussTable`]: one Fluss table (its latest view, its `$changelog`, or a commit-time window)
//! as a DataFusion table. Every read is one core [`ReadRequest`] per bucket (a lake view's, one
//! for the whole view); what the request means (projection, filter, partition pruning, limit,
//! PK merge, window, union with the lake) is the core's.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef as DfSchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::datasource::source_as_provider;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, LogicalPlan, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::LexOrdering;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use futures::{StreamExt, TryStreamExt};
use riverlet::client::Table;
use riverlet::scan::{Expr as CoreExpr, ReadRequest, TimePoint};

use crate::{bridge, core_err, filter};

/// Which rows of the table a [`FlussTable`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Log tables: every retained record; primary-key tables: the latest view.
    Latest,
    /// The changelog: `_change_type`, `_log_offset`, `_commit_timestamp` before the columns.
    Changelog,
    /// The commit-time window `[start_ms, end_ms)` (both already pinned and validated).
    Window {
        /// Included start, epoch milliseconds.
        start_ms: i64,
        /// Excluded end, epoch milliseconds.
        end_ms: i64,
    },
}

/// A Fluss table as a DataFusion [`TableProvider`].
#[derive(Debug)]
pub struct FlussTable {
    table: Table,
    view: View,
    /// The full output schema (DataFusion's arrow).
    schema: DfSchemaRef,
}

impl FlussTable {
    /// The `view` of `table`; its schema is the one the core returns for that read.
    pub fn new(table: Table, view: View) -> DfResult<FlussTable> {
        let request = Self::base_request(view);
        let schema = request.to_scan(&table).output_schema().map_err(core_err)?;
        let schema = bridge::schema_to_df(&schema)?;
        Ok(FlussTable {
            table,
            view,
            schema,
        })
    }

    /// The core table inside.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Which rows this provider shows.
    pub fn view(&self) -> View {
        self.view
    }

    fn base_request(view: View) -> ReadRequest {
        let mut r = ReadRequest::default();
        match view {
            View::Latest => {}
            View::Changelog => r.changelog = true,
            View::Window { start_ms, end_ms } => {
                r.start = Some(TimePoint::EpochMillis(start_ms));
                r.end = Some(TimePoint::EpochMillis(end_ms));
            }
        }
        r
    }

    /// Whether the core can evaluate `e` on this view (the changelog's metadata columns are
    /// not table columns, so filters on them stay with DataFusion).
    fn core_filter(&self, e: &Expr) -> Option<CoreExpr> {
        let core = filter::to_core(e)?;
        let columns = self.table.info().schema().column_names();
        core.columns()
            .iter()
            .all(|c| columns.contains(&c.as_str()))
            .then_some(core)
    }

    /// Whether a read is split by bucket: the table itself is; a lake view (`t$lake`,
    /// `t$lake$snapshots`) is read whole (core's [`riverlet::client::TableView::reads_by_bucket`]).
    fn per_bucket(&self) -> bool {
        self.table.view.reads_by_bucket()
    }

    /// The number of DataFusion partitions of a read: one per bucket of every partition (one
    /// for a lake view, read whole).
    pub fn num_buckets(&self) -> usize {
        if !self.per_bucket() {
            return 1;
        }
        self.table.info().num_buckets().max(1) as usize
    }

    /// The read of bucket `bucket` (None: all) with the pushed-down parts of a query, plus
    /// the projection DataFusion still applies on top (the changelog and count-only reads).
    pub fn request(
        &self,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<(ReadRequest, Option<Vec<usize>>)> {
        let mut r = Self::base_request(self.view);
        let pushed: Vec<CoreExpr> = filters.iter().filter_map(|f| self.core_filter(f)).collect();
        r.filter = match pushed.len() {
            0 => None,
            1 => pushed.into_iter().next().map(Into::into),
            _ => Some(CoreExpr::And(pushed).into()),
        };
        r.limit = limit;
        let mut post = None;
        if let Some(p) = projection {
            if self.view == View::Changelog {
                // The metadata columns come with every changelog read: project afterwards.
                post = Some(p.clone());
            } else if p.is_empty() {
                // Only a row count is wanted; read the narrowest thing the core can (one column).
                let first = self.schema.fields().first().map(|f| f.name().clone());
                r.columns = Some(first.into_iter().collect());
                post = Some(vec![]);
            } else {
                r.columns = Some(
                    p.iter()
                        .map(|i| self.schema.field(*i).name().clone())
                        .collect(),
                );
            }
        }
        Ok((r, post))
    }
}

#[async_trait]
impl TableProvider for FlussTable {
    fn schema(&self) -> DfSchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match self.core_filter(f) {
                // The core evaluates its expressions exactly (SQL three-valued logic), so
                // DataFusion need not check those rows again.
                Some(_) => TableProviderFilterPushDown::Exact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let (request, post) = self.request(projection, filters, limit)?;
        let read_schema = request
            .to_scan(&self.table)
            .output_schema()
            .map_err(core_err)?;
        let schema = bridge::schema_to_df(&read_schema)?;
        let partitions = (0..self.num_buckets())
            .map(|b| {
                let mut r = request.clone();
                if self.per_bucket() {
                    r.buckets = Some(vec![b as i32]);
                }
                Arc::new(BucketRead {
                    table: self.table.clone(),
                    request: r,
                    schema: schema.clone(),
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        let exec = StreamingTableExec::try_new(
            schema,
            partitions,
            post.as_ref(),
            Vec::<LexOrdering>::new(),
            false,
            limit,
        )?;
        Ok(Arc::new(exec))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if insert_op != InsertOp::Append || self.view != View::Latest {
            return Err(DataFusionError::Plan(format!(
                "{}: only INSERT INTO the table itself is supported (appends to a log table, \
                 upserts into a primary-key table)",
                self.table.path()
            )));
        }
        let sink = FlussSink {
            table: self.table.clone(),
            schema: self.schema.clone(),
        };
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}

/// A query that is only a read of one Fluss table: the table and the core read answering it,
/// when nothing is left for DataFusion to do above the scan (no filter the core does not take,
/// no limit, no projection after the read). The Flight SQL service then streams the core's
/// Arrow IPC messages (`ScanBuilder::execute_ipc`) instead of running the plan.
pub fn plain_read(plan: &LogicalPlan) -> Option<(Table, ReadRequest)> {
    let scan = match plan {
        LogicalPlan::TableScan(scan) => scan,
        // A projection that only names the scan's columns, in the scan's order.
        LogicalPlan::Projection(p) => match p.input.as_ref() {
            LogicalPlan::TableScan(scan)
                if p.expr.len() == scan.projected_schema.fields().len()
                    && p.expr
                        .iter()
                        .zip(scan.projected_schema.columns())
                        .all(|(e, c)| matches!(e, Expr::Column(col) if col.name == c.name)) =>
            {
                scan
            }
            _ => return None,
        },
        _ => return None,
    };
    if !scan.filters.is_empty() || scan.fetch.is_some() {
        return None;
    }
    let provider = source_as_provider(&scan.source).ok()?;
    let table = (provider.as_ref() as &dyn std::any::Any).downcast_ref::<FlussTable>()?;
    if table.view == View::Changelog {
        return None;
    }
    let (request, post) = table.request(scan.projection.as_ref(), &[], None).ok()?;
    post.is_none().then(|| (table.table.clone(), request))
}

/// One bucket's read (one DataFusion partition).
#[derive(Debug)]
struct BucketRead {
    table: Table,
    request: ReadRequest,
    schema: DfSchemaRef,
}

impl PartitionStream for BucketRead {
    fn schema(&self) -> &DfSchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let scan = self.request.to_scan(&self.table);
        let schema = self.schema.clone();
        let path = self.table.path().clone();
        let opened =
            async move {
                let stream = scan.execute().await.map_err(core_err)?;
                for w in stream.warnings() {
                    tracing::warn!("{path}: {w}");
                }
                let batches = futures::stream::unfold(stream, |mut s| async move {
                    s.next().await.map(|b| (b, s))
                });
                Ok::<_, DataFusionError>(batches.map(move |b| {
                    b.map_err(core_err)
                        .and_then(|b| bridge::batch_to_df(b, &schema))
                }))
            };
        let stream = futures::stream::once(opened).try_flatten();
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

/// `INSERT INTO`: appends to a log table, upserts into a primary-key table.
#[derive(Debug)]
pub struct FlussSink {
    table: Table,
    schema: DfSchemaRef,
}

impl FlussSink {
    /// A sink writing into `table`.
    pub fn new(table: Table, schema: DfSchemaRef) -> FlussSink {
        FlussSink { table, schema }
    }
}

impl DisplayAs for FlussSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "FlussSink: {}", self.table.path())
    }
}

#[async_trait]
impl DataSink for FlussSink {
    fn schema(&self) -> &DfSchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> DfResult<u64> {
        crate::write::write_stream(&self.table, data.map(|b| b.and_then(bridge::batch_from_df)))
            .await
    }
}
