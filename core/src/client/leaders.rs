//! [`Table::bucket_leaders`]: which tablet server leads each bucket of a table, as the cluster
//! says now (for operators and failover tests: find the server that leads most buckets, see
//! leadership move after a server dies).

use super::{name_table, ServerNode, Table};
use crate::error::codes;
use crate::Result;

/// The leader of one bucket (of one partition, for a partitioned table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketLeader {
    /// The partition id (None for a table without partitions).
    pub partition_id: Option<i64>,
    /// The partition name, e.g. `2024-01-01` (None for a table without partitions).
    pub partition_name: Option<String>,
    /// The bucket id, `0..buckets`.
    pub bucket: i32,
    /// The tablet server leading the bucket (its id and `host:port`), or None when the cluster
    /// names no live leader for it right now (being elected, or its leader just died).
    pub leader: Option<ServerNode>,
}

impl Table {
    /// The leader of every bucket of the table (of every partition, for a partitioned table:
    /// partitions by name, then buckets in order). The table's cached leaders are dropped and
    /// asked from the cluster again first, so the answer is the cluster's current view, and the
    /// connection's writers and readers route by it from then on. A bucket without a leader is
    /// `leader: None`, not an error; errors are those of reaching the cluster, naming the table.
    pub async fn bucket_leaders(&self) -> Result<Vec<BucketLeader>> {
        let info = self.info.clone();
        let path = &info.table_path;
        let mut parts: Vec<(Option<i64>, Option<String>)> =
            if info.descriptor.partition_keys.is_empty() {
                vec![(None, None)]
            } else {
                let mut listed = self.conn.partitions(path).await?;
                listed.sort_by(|a, b| a.name.cmp(&b.name));
                listed
                    .into_iter()
                    .map(|p| (Some(p.partition_id), Some(p.name)))
                    .collect()
            };
        parts.dedup();
        self.conn.invalidate_table(info.table_id);
        let mut out = Vec::with_capacity(parts.len() * info.num_buckets().max(0) as usize);
        for (partition_id, partition_name) in parts {
            for bucket in 0..info.num_buckets() {
                // Refreshes the table's (or the partition's) leaders once when they are not
                // cached; a bucket the fresh answer gives no live leader is LEADER_NOT_AVAILABLE.
                let leader = match self
                    .conn
                    .leader_node(info.table_id, partition_id, bucket)
                    .await
                {
                    Ok(node) => Some(node),
                    Err(e) if e.fluss_code() == Some(codes::LEADER_NOT_AVAILABLE_EXCEPTION) => None,
                    Err(e) => return Err(name_table(e, path)),
                };
                out.push(BucketLeader {
                    partition_id,
                    partition_name: partition_name.clone(),
                    bucket,
                    leader,
                });
            }
        }
        Ok(out)
    }
}
