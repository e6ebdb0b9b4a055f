//! SQL over Fluss tables with DataFusion, and an Arrow Flight SQL service on top of it.
//!
//! - [`provider::FlussTable`]: a Fluss table as a DataFusion table (projection, exact filters,
//!   partition pruning and limit pushed into the core's read; primary-key tables as their latest
//!   view; `<table>$changelog`; `INSERT INTO` appends or upserts).
//! - [`catalog::FlussCatalog`]: databases as schemas.
//! - [`function::IncrementalBetween`]: `fluss_incremental_between_timestamp(table, start[, end])`.
//! - [`session`]: a DataFusion `SessionContext` with all of the above registered.
//! - [`bridge`]: the core's arrow 60 batches as DataFusion's arrow 59 batches (zero-copy).
//!
//! Every read rule lives in the core (`riverlet::scan`): this crate translates DataFusion's
//! plans into core [`riverlet::scan::ReadRequest`]s and core errors into DataFusion errors
//! (kept as `DataFusionError::External`, see [`core_error`]).
//!
//! The crate is separate from `riverlet-cli` because DataFusion takes minutes to compile: the
//! `riverlet` binary runs `riverlet sql` / `riverlet flight` by finding the `riverlet-sql` /
//! `riverlet-flight` binaries of this crate (git-style), so `make demo` never builds it.

pub mod bridge;
pub mod catalog;
pub mod cli;
pub mod filter;
pub mod flight;
pub mod function;
pub mod provider;
pub mod write;

use std::sync::Arc;

use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use riverlet::client::Connection;
use riverlet::scan::IpcBodies;

/// A core error as a DataFusion error (the typed error stays inside, see [`core_error`]).
pub fn core_err(e: riverlet::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// The core error inside a DataFusion error, when it came from the core.
pub fn core_error(e: &DataFusionError) -> Option<&riverlet::Error> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(core) = err.downcast_ref::<riverlet::Error>() {
            return Some(core);
        }
        cur = err.source();
    }
    None
}

/// How a [`session`] names and reads things.
#[derive(Debug, Clone)]
pub struct SqlOptions {
    /// The catalog name of the Fluss cluster (and the default catalog).
    pub catalog: String,
    /// The default database (unqualified table names).
    pub database: String,
    /// The session time zone (`datafusion.execution.time_zone`): the zone of datetime texts,
    /// dates and wall clocks given to the time-range function. None: the process's zone.
    pub time_zone: Option<String>,
    /// The Flight SQL service only: which stored log-batch bodies a plain read sends as they
    /// are (see `riverlet::scan::IpcBodies`; `riverlet flight --ipc-bodies`).
    pub ipc_bodies: IpcBodies,
    /// The Flight SQL service only: a plain read of a log table gets one endpoint per piece
    /// of about this many records of a bucket when that makes more endpoints than one per
    /// bucket (0, the default: one per bucket; `riverlet flight --split-records`).
    pub split_records: u64,
}

impl Default for SqlOptions {
    fn default() -> Self {
        SqlOptions {
            catalog: "fluss".to_string(),
            database: "fluss".to_string(),
            time_zone: None,
            ipc_bodies: IpcBodies::AsStored,
            split_records: 0,
        }
    }
}

/// A DataFusion session whose default catalog is the Fluss cluster behind `conn`, with
/// `fluss_incremental_between_timestamp` registered.
pub fn session(conn: Connection, options: &SqlOptions) -> SessionContext {
    let mut config = SessionConfig::new()
        .with_default_catalog_and_schema(&options.catalog, &options.database)
        .with_create_default_catalog_and_schema(false)
        .with_information_schema(true);
    config.options_mut().execution.time_zone = options.time_zone.clone();
    let ctx = SessionContext::new_with_config(config);
    ctx.register_catalog(
        &options.catalog,
        Arc::new(catalog::FlussCatalog::new(conn.clone())),
    );
    ctx.register_udtf(
        function::NAME,
        Arc::new(function::IncrementalBetween::new(
            conn,
            &options.catalog,
            &options.database,
            options.time_zone.clone(),
        )),
    );
    ctx
}
