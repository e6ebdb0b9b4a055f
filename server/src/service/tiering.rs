//! Log tiering: copies rolled log segments of every table (a primary-key table's changelog too,
//! as Fluss does; its state stays in the KV tablet) to `remote.data.dir` in Fluss's layout
//! (segment files under `{segment uuid}/`, a JSON manifest per bucket under `metadata/`), then
//! deletes the local copies beyond `table.log.tiered.local-segments`, and expires remote
//! segments older than `table.log.ttl`.
//!
//! One round runs every `remote.log.task-interval-duration`. A segment is recorded as remote
//! only after its files and the new manifest are written, so a crash mid-round leaves at most
//! unreferenced remote files, never a local gap.
//!
//! The steps of a bucket's round, each named as the test-only fault knob [`TIERING_FAULT`] names
//! it (the process aborts when a round reaches the step, before what follows it): each rolled
//! segment's `.log`, `.index`, `.timeindex` are copied under a new segment id (`segment-file`:
//! the first segment's `.log` is copied, its other files are not); `segments-copied`: every
//! file is copied, no new manifest; the new manifest is written under `metadata/`
//! (`manifest`: written, the bucket's `remote-log.json` still names the previous one); the
//! bucket records the segments as remote in `remote-log.json` (`recorded`: recorded, no local
//! copy deleted yet), then deletes the local copies beyond `table.log.tiered.local-segments`
//! (`local-removed`: deleted, the previous manifest and expired segments' files not yet); last
//! the previous manifest and expired segments' files are deleted.

use std::sync::Arc;

use bytes::Bytes;
use riverlet::remote::{log_tablet_rel_dir, RemoteDir};
use riverlet::Result;

use super::Server;
use crate::catalog::TableMeta;
use crate::fault::FaultKnob;
use crate::log::{RemoteSegment, RemoteState};
use crate::tablets::TableBucket;

/// The test-only fault knob of the remote log tiering ([`crate::fault::FaultKnob`]):
/// `RIVERLET_FAULT_REMOTE_TIERING=<step>` aborts the server process the first time a bucket's
/// tiering round reaches that step (module doc); another value is refused at start-up.
pub static TIERING_FAULT: FaultKnob = FaultKnob::new(
    "RIVERLET_FAULT_REMOTE_TIERING",
    "remote log tiering",
    &[
        "segment-file",
        "segments-copied",
        "manifest",
        "recorded",
        "local-removed",
    ],
);

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

    /// One tiering round over every bucket of every table (errors are logged; the next
    /// round retries).
    pub async fn tier_once(self: &Arc<Self>) {
        if self.remote.is_none() {
            return;
        }
        for (tb, bucket) in self.tablets.all() {
            let Ok(meta) = self.table(tb.table_id) else {
                continue;
            };
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
                let name = format!("{}/{:020}.{ext}", seg.id, seg.start);
                match dir.put_file(&name, path).await {
                    Ok(_) => {}
                    // the index files of an empty index may be absent; the log file may not
                    Err(_) if *ext != "log" && !path.exists() => {
                        dir.put(&name, Bytes::new()).await?;
                    }
                    Err(e) => return Err(e.context("tiering")),
                }
                TIERING_FAULT.point("segment-file");
            }
            copied.push(seg);
        }
        TIERING_FAULT.point("segments-copied");
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
        TIERING_FAULT.point("manifest");
        let keep_from = self.lake_pending_from(meta, tb);
        let removed_local = {
            let mut g = super::write_bucket(bucket);
            g.log.commit_remote(copied, expired, Some(manifest))?;
            TIERING_FAULT.point("recorded");
            g.log
                .cleanup_tiered(self.config.tiered_local_segments, keep_from)?
        };
        TIERING_FAULT.point("local-removed");
        if removed_local > 0 {
            tracing::info!("{tb}: {removed_local} local log segment(s) now only in remote storage");
        }
        self.remove_remote_leftovers(&dir, &state, expired).await;
        Ok(())
    }

    /// Deletes a dropped table's or partition's remote log directory in the background, as
    /// Fluss's coordinator does; a failure is logged and leaves unreferenced files behind.
    pub(super) fn remove_remote_log(&self, rel: String) {
        let Some(root) = self.remote.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("remote log {rel} of a dropped table left behind: no runtime");
            return;
        };
        runtime.spawn(async move {
            match root.delete_all(&rel).await {
                Ok(n) => tracing::debug!("removed {n} remote file(s) under {rel}"),
                Err(e) => tracing::warn!("removing the remote log {rel} failed: {e}"),
            }
        });
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
