//! Log tiering: copies rolled log segments of log tables to `remote.data.dir` in Fluss's layout
//! (segment files under `{segment uuid}/`, a JSON manifest per bucket under `metadata/`), then
//! deletes the local copies beyond `table.log.tiered.local-segments`, and expires remote
//! segments older than `table.log.ttl`.
//!
//! One round runs every `remote.log.task-interval-duration`. A segment is recorded as remote
//! only after its files and the new manifest are written, so a crash mid-round leaves at most
//! unreferenced remote files, never a local gap.

use std::sync::Arc;

use bytes::Bytes;
use riverlet::remote::{log_tablet_rel_dir, RemoteDir};
use riverlet::Result;

use super::Server;
use crate::catalog::TableMeta;
use crate::log::{RemoteSegment, RemoteState};
use crate::tablets::TableBucket;

/// Fluss's manifest JSON (`RemoteLogManifestJsonSerde`, version 1) of one bucket.
fn manifest_json(
    meta: &TableMeta,
    partition: Option<(&str, i64)>,
    tb: &TableBucket,
    segments: &[RemoteSegment],
) -> Vec<u8> {
    let mut m = serde_json::Map::new();
    m.insert("version".into(), 1.into());
    m.insert("database".into(), meta.entry.database.clone().into());
    m.insert("table".into(), meta.entry.name.clone().into());
    if let Some((name, _)) = partition {
        m.insert("partition_name".into(), name.into());
    }
    m.insert("table_id".into(), tb.table_id.into());
    if let Some(p) = tb.partition_id {
        m.insert("partition_id".into(), p.into());
    }
    m.insert("bucket_id".into(), tb.bucket.into());
    let segs: Vec<serde_json::Value> = segments
        .iter()
        .map(|s| {
            serde_json::json!({
                "segment_id": s.id,
                "start_offset": s.start,
                "end_offset": s.end,
                "max_timestamp": s.max_timestamp,
                "size_in_bytes": s.size,
            })
        })
        .collect();
    m.insert("remote_log_segments".into(), segs.into());
    serde_json::to_vec(&serde_json::Value::Object(m)).unwrap_or_default()
}

impl Server {
    /// The remote directory of one bucket's log, when `remote.data.dir` is set.
    pub fn remote_log_tablet_dir(
        &self,
        meta: &TableMeta,
        partition_id: Option<i64>,
        bucket: i32,
    ) -> Option<RemoteDir> {
        let root = self.remote.as_ref()?;
        let partition = partition_id.and_then(|p| {
            super::lock(&self.catalog)
                .partition_by_id(p)
                .map(|(_, e)| (e.name, p))
        });
        let rel = log_tablet_rel_dir(
            &meta.entry.database,
            &meta.entry.name,
            meta.entry.id,
            partition.as_ref().map(|(n, p)| (n.as_str(), *p)),
            bucket,
        );
        Some(root.child(&rel))
    }

    /// One tiering round over every bucket of every log table (errors are logged; the next
    /// round retries).
    pub async fn tier_once(self: &Arc<Self>) {
        if self.remote.is_none() {
            return;
        }
        for (tb, bucket) in self.tablets.all() {
            let Ok(meta) = self.table(tb.table_id) else {
                continue;
            };
            if meta.is_pk() {
                continue;
            }
            if let Err(e) = self.tier_bucket(&meta, &tb, &bucket).await {
                tracing::warn!("{tb}: copying log segments to remote storage failed: {e}");
            }
        }
    }

    async fn tier_bucket(
        self: &Arc<Self>,
        meta: &Arc<TableMeta>,
        tb: &TableBucket,
        bucket: &Arc<std::sync::RwLock<crate::tablets::Bucket>>,
    ) -> Result<()> {
        let Some(dir) = self.remote_log_tablet_dir(meta, tb.partition_id, tb.bucket) else {
            return Ok(());
        };
        let (to_copy, state, expired) = {
            let g = super::read_bucket(bucket);
            (
                g.log.segments_to_copy(),
                g.log.remote_state().clone(),
                g.log.expired_remote(meta.ttl_ms),
            )
        };
        if to_copy.is_empty() && expired == 0 {
            return Ok(());
        }
        // Rolled segments never change and only this task deletes tiered ones, so their files
        // are read without holding the bucket lock.
        let mut copied = Vec::new();
        for c in to_copy {
            let mut seg = c.remote;
            seg.id = uuid::Uuid::new_v4().to_string();
            for (path, ext) in &c.files {
                let data = match tokio::fs::read(path).await {
                    Ok(d) => d,
                    // the index files of an empty index may be absent; the log file may not
                    Err(e) if *ext != "log" && e.kind() == std::io::ErrorKind::NotFound => {
                        Vec::new()
                    }
                    Err(e) => {
                        return Err(riverlet::Error::from(e)
                            .context(format!("read {} for tiering", path.display())))
                    }
                };
                let name = format!("{}/{:020}.{ext}", seg.id, seg.start);
                dir.put(&name, Bytes::from(data)).await?;
            }
            copied.push(seg);
        }
        let mut listed: Vec<RemoteSegment> = state.segments[expired..].to_vec();
        listed.extend(copied.iter().cloned());
        let partition = tb.partition_id.and_then(|p| {
            super::lock(&self.catalog)
                .partition_by_id(p)
                .map(|(_, e)| (e.name, p))
        });
        let manifest = format!("{}.manifest", uuid::Uuid::new_v4());
        let json = manifest_json(
            meta,
            partition.as_ref().map(|(n, p)| (n.as_str(), *p)),
            tb,
            &listed,
        );
        dir.put(&format!("metadata/{manifest}"), Bytes::from(json))
            .await?;
        let removed_local = {
            let mut g = super::write_bucket(bucket);
            g.log.commit_remote(copied, expired, Some(manifest))?;
            g.log.cleanup_tiered(self.config.tiered_local_segments)?
        };
        if removed_local > 0 {
            tracing::info!("{tb}: {removed_local} local log segment(s) now only in remote storage");
        }
        self.remove_remote_leftovers(&dir, &state, expired).await;
        Ok(())
    }

    /// Deletes the previous manifest and the files of expired segments (best effort: a failure
    /// leaves unreferenced files behind, never a reference to a missing file).
    async fn remove_remote_leftovers(&self, dir: &RemoteDir, old: &RemoteState, expired: usize) {
        if let Some(m) = &old.manifest {
            let _ = dir.delete(&format!("metadata/{m}")).await;
        }
        for s in &old.segments[..expired] {
            for ext in ["log", "index", "timeindex"] {
                let _ = dir.delete(&format!("{}/{:020}.{ext}", s.id, s.start)).await;
            }
        }
    }
}
