//! Filter pushdown on batch statistics (Fluss 1.0): the statistics block log batches carry for
//! the columns of `table.statistics.columns` ([`batch`]), and the batch filters a FetchLog
//! sends so the server can skip batches that cannot match ([`predicate`]). The writer, the
//! embedded server and the scan all use these, so the rules live here once.

pub mod batch;
pub mod predicate;

pub use batch::{
    is_supported_statistics_type, statistics_columns, BatchStatistics, StatValue,
    STATISTICS_COLUMNS_OPTION, STATISTICS_VERSION,
};
pub use predicate::{LeafFn, StatsFilter};

#[cfg(test)]
mod tests;
