//! Log tablet: the append-only log of one bucket, stored as segment files
//! `{20-digit base offset}.log` (concatenated Fluss record batches, byte for byte what clients
//! sent, with base offset and commit timestamp filled in), each with a sparse offset index
//! (`.index`, 8-byte entries: i32 relative offset, i32 file position, big-endian) and a time index
//! (`.timeindex`, 12-byte entries: i64 commit timestamp, i32 relative offset, big-endian).
//!
//! Recovery: the active (last) segment is re-read and CRC-checked on open; the first torn or
//! corrupt batch and everything after it is truncated away. Indexes are rebuilt from the data.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use riverlet::error::codes as error_codes;
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};

use crate::batch::{self, BatchInfo};
use crate::config::FsyncPolicy;
use crate::writers::{BatchMeta, SequenceCheck, WriterStates};

/// Tunables of a log tablet.
#[derive(Debug, Clone)]
pub struct LogConfig {
    /// Roll size.
    pub segment_bytes: u64,
    /// Roll age.
    pub segment_ms: i64,
    /// Index spacing.
    pub index_interval_bytes: u32,
    /// Fsync policy.
    pub fsync: FsyncPolicy,
}

/// The result of an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendResult {
    /// Base offset of the first appended batch.
    pub base_offset: i64,
    /// Last offset appended.
    pub last_offset: i64,
    /// The batch was a retried duplicate; nothing was written.
    pub duplicate: bool,
}

struct Segment {
    base_offset: i64,
    log: File,
    index_file: File,
    time_file: File,
    size: u64,
    next_offset: i64,
    max_timestamp: i64,
    created_ms: i64,
    /// (absolute offset, position)
    offset_index: Vec<(i64, u64)>,
    /// (timestamp, absolute offset)
    time_index: Vec<(i64, i64)>,
    bytes_since_index: u64,
}

fn seg_name(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

/// A log always keeps one (active) segment; this is the error if that ever breaks.
fn no_active_segment() -> Error {
    Error::internal("the log has no active segment")
}

fn storage_err(context: &str, e: impl std::fmt::Display) -> Error {
    Error::from_fluss(
        error_codes::LOG_STORAGE_EXCEPTION,
        format!("{context}: {e}"),
    )
}

fn open_rw(path: &Path, append: bool) -> Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).create(true);
    if append {
        o.append(true);
    } else {
        o.write(true);
    }
    o.open(path)
        .map_err(|e| storage_err(&format!("open {}", path.display()), e))
}

/// `len` bytes of `file` from `pos`, read into a new buffer that is not zeroed first: fetches
/// read every byte they send this way, and zeroing the buffer before the read showed as ~6% of
/// the server's CPU in a profile of a full scan (benches/PROFILE.md).
fn read_exact_at_uninit(file: &File, pos: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut buf = Vec::<u8>::with_capacity(len);
    while buf.len() < len {
        let done = buf.len();
        let at = libc::off_t::try_from(pos + done as u64)
            .map_err(|_| std::io::Error::other("segment position over off_t"))?;
        let spare = buf.spare_capacity_mut();
        // SAFETY: `spare` is writable memory of at least `len - done` bytes owned by `buf`, and
        // pread writes at most that many bytes into it.
        let n = unsafe { libc::pread(file.as_raw_fd(), spare.as_mut_ptr().cast(), len - done, at) };
        match n {
            n if n > 0 => {
                // SAFETY: pread initialised the first `n` bytes of the spare capacity, and
                // `done + n <= len <= capacity`.
                unsafe { buf.set_len(done + n as usize) }
            }
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(buf)
}

impl Segment {
    fn create(dir: &Path, base: i64) -> Result<Segment> {
        let log = open_rw(&dir.join(seg_name(base, "log")), true)?;
        let index_file = open_rw(&dir.join(seg_name(base, "index")), true)?;
        let time_file = open_rw(&dir.join(seg_name(base, "timeindex")), true)?;
        Ok(Segment {
            base_offset: base,
            log,
            index_file,
            time_file,
            size: 0,
            next_offset: base,
            max_timestamp: -1,
            created_ms: now_ms(),
            offset_index: Vec::new(),
            time_index: Vec::new(),
            bytes_since_index: 0,
        })
    }

    fn read_at(&self, pos: u64, len: usize) -> Result<Vec<u8>> {
        let len = len.min(self.size.saturating_sub(pos) as usize);
        read_exact_at_uninit(&self.log, pos, len).map_err(|e| storage_err("read segment", e))
    }

    /// Reads all batch headers from `pos` to the end in chunks, calling `f(info, position)`
    /// until it returns false. With `verify`, stops at the first CRC failure.
    /// Returns the position after the last good batch seen.
    fn walk(
        &self,
        mut pos: u64,
        verify: bool,
        mut f: impl FnMut(&BatchInfo, u64) -> bool,
    ) -> Result<u64> {
        const CHUNK: usize = 1 << 20;
        while pos < self.size {
            let buf = self.read_at(pos, CHUNK)?;
            let (infos, used) = batch::scan(&buf, verify);
            if infos.is_empty() {
                // a batch larger than the chunk, or a torn / corrupt one
                let Some(size) = batch::batch_size(&buf) else {
                    return Ok(pos);
                };
                if size <= buf.len() || pos + size as u64 > self.size {
                    return Ok(pos); // corrupt (would have been scanned) or torn
                }
                let whole = self.read_at(pos, size)?;
                let (infos, used) = batch::scan(&whole, verify);
                if infos.len() != 1 || used != size {
                    return Ok(pos);
                }
                if !f(&infos[0], pos) {
                    return Ok(pos + size as u64);
                }
                pos += size as u64;
                continue;
            }
            let mut p = pos;
            for i in &infos {
                if !f(i, p) {
                    return Ok(p + i.size as u64);
                }
                p += i.size as u64;
            }
            pos += used as u64;
            if used < buf.len() && buf.len() < CHUNK {
                // tail of the file could not be parsed
                return Ok(pos);
            }
        }
        Ok(pos)
    }

    fn index_batch(&mut self, info: &BatchInfo, position: u64, interval: u64) -> Result<()> {
        if self.bytes_since_index >= interval {
            let rel = self.relative(info.base_offset)?;
            let pos = u32::try_from(position).map_err(|_| {
                Error::from_fluss(
                    error_codes::LOG_STORAGE_EXCEPTION,
                    format!("segment position {position} does not fit the offset index"),
                )
            })?;
            let mut e = [0u8; 8];
            e[..4].copy_from_slice(&rel.to_be_bytes());
            e[4..].copy_from_slice(&pos.to_be_bytes());
            self.index_file
                .write_all(&e)
                .map_err(|e| storage_err("write offset index", e))?;
            self.offset_index.push((info.base_offset, position));
            if self
                .time_index
                .last()
                .is_none_or(|l| info.commit_timestamp > l.0)
            {
                self.append_time_entry(info.commit_timestamp, info.base_offset)?;
            }
            self.bytes_since_index = 0;
        }
        self.bytes_since_index += info.size as u64;
        self.next_offset = info.next_offset;
        self.max_timestamp = self.max_timestamp.max(info.commit_timestamp);
        Ok(())
    }

    /// `offset` relative to the segment's base, as the indexes store it; an error rather than a
    /// silently truncated entry when it does not fit an i32 (appends roll before that happens).
    fn relative(&self, offset: i64) -> Result<i32> {
        offset
            .checked_sub(self.base_offset)
            .and_then(|r| i32::try_from(r).ok())
            .ok_or_else(|| {
                Error::from_fluss(
                    error_codes::LOG_STORAGE_EXCEPTION,
                    format!(
                        "offset {offset} is out of the index range of the segment at {}",
                        self.base_offset
                    ),
                )
            })
    }

    fn append_time_entry(&mut self, ts: i64, offset: i64) -> Result<()> {
        let rel = self.relative(offset)?;
        let mut e = [0u8; 12];
        e[..8].copy_from_slice(&ts.to_be_bytes());
        e[8..].copy_from_slice(&rel.to_be_bytes());
        self.time_file
            .write_all(&e)
            .map_err(|e| storage_err("write time index", e))?;
        self.time_index.push((ts, offset));
        Ok(())
    }

    /// Position to start scanning from for `offset` (floor entry of the offset index).
    fn position_for(&self, offset: i64) -> u64 {
        match self.offset_index.partition_point(|e| e.0 <= offset) {
            0 => 0,
            n => self.offset_index[n - 1].1,
        }
    }

    fn sync(&self) -> Result<()> {
        self.log.sync_data().map_err(|e| storage_err("fsync", e))?;
        self.index_file
            .sync_data()
            .map_err(|e| storage_err("fsync", e))?;
        self.time_file
            .sync_data()
            .map_err(|e| storage_err("fsync", e))
    }

    /// Rebuilds size, offsets, max timestamp and both indexes from the data file, truncating a
    /// torn or corrupt tail.
    fn recover(&mut self, dir: &Path, interval: u64) -> Result<()> {
        let len = self
            .log
            .metadata()
            .map_err(|e| storage_err("stat segment", e))?
            .len();
        self.size = len;
        let mut infos = Vec::new();
        let good = self.walk(0, true, |i, p| {
            infos.push((*i, p));
            true
        })?;
        if good < len {
            tracing::warn!(
                "truncating torn tail of {}: {} bytes after position {good}",
                dir.join(seg_name(self.base_offset, "log")).display(),
                len - good
            );
            self.log
                .set_len(good)
                .map_err(|e| storage_err("truncate segment", e))?;
            self.log.sync_data().map_err(|e| storage_err("fsync", e))?;
        }
        self.size = good;
        // rewrite indexes
        self.index_file = File::create(dir.join(seg_name(self.base_offset, "index")))
            .map_err(|e| storage_err("create index", e))?;
        self.time_file = File::create(dir.join(seg_name(self.base_offset, "timeindex")))
            .map_err(|e| storage_err("create time index", e))?;
        self.index_file = open_rw(&dir.join(seg_name(self.base_offset, "index")), true)?;
        self.time_file = open_rw(&dir.join(seg_name(self.base_offset, "timeindex")), true)?;
        self.offset_index.clear();
        self.time_index.clear();
        self.bytes_since_index = 0;
        self.next_offset = self.base_offset;
        self.max_timestamp = -1;
        for (i, p) in &infos {
            self.index_batch(i, *p, interval)?;
        }
        Ok(())
    }
}

/// The log of one bucket.
pub struct LogTablet {
    dir: PathBuf,
    name: String,
    cfg: LogConfig,
    segments: Vec<Segment>,
    log_start_offset: i64,
    log_end_offset: i64,
    high_watermark: i64,
    max_timestamp: i64,
    writers: WriterStates,
    /// Segments copied to remote storage, oldest first (persisted in [`REMOTE_STATE_FILE`]).
    remote: RemoteState,
}

/// The file in a log directory listing the bucket's remote segments.
pub const REMOTE_STATE_FILE: &str = "remote-log.json";

/// One log segment copied to remote storage (Fluss's `RemoteLogSegment`), with the sparse
/// indexes it had locally so fetch positions and time lookups need no download.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RemoteSegment {
    /// Its UUID, the name of its remote directory.
    pub id: String,
    /// Base offset.
    pub start: i64,
    /// Offset after its last record (exclusive), Fluss's `remoteLogEndOffset`.
    pub end: i64,
    /// Size of the `.log` file.
    pub size: u64,
    /// Largest commit timestamp in it.
    pub max_timestamp: i64,
    /// Sparse offset index: (absolute offset, byte position).
    pub offset_index: Vec<(i64, u64)>,
    /// Sparse time index: (commit timestamp, absolute offset).
    pub time_index: Vec<(i64, i64)>,
}

impl RemoteSegment {
    /// Byte position to read from for `offset` (floor entry of the offset index: the batch
    /// there may start before `offset`, as in Fluss; readers skip what lies before it).
    pub fn position_for(&self, offset: i64) -> u64 {
        match self.offset_index.partition_point(|e| e.0 <= offset) {
            0 => 0,
            n => self.offset_index[n - 1].1,
        }
    }
}

/// The remote segments of a bucket and the manifest that lists them remotely.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RemoteState {
    /// Oldest first, contiguous.
    pub segments: Vec<RemoteSegment>,
    /// The manifest file name under `metadata/` written last.
    pub manifest: Option<String>,
}

/// A rolled segment ready to be copied to remote storage.
#[derive(Debug, Clone)]
pub struct SegmentToCopy {
    /// What it becomes remotely (a fresh id).
    pub remote: RemoteSegment,
    /// Its `.log`, `.index` and `.timeindex` files.
    pub files: [(PathBuf, &'static str); 3],
}

impl LogTablet {
    /// Opens (or creates) the log in `dir`, recovering the active segment. `name` is used in
    /// error messages (e.g. "TableBucket{tableId=1, bucket=0}").
    pub fn open(dir: &Path, name: String, cfg: LogConfig) -> Result<LogTablet> {
        fs::create_dir_all(dir).map_err(|e| storage_err("create log dir", e))?;
        let mut bases = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| storage_err("list log dir", e))? {
            let entry = entry.map_err(|e| storage_err("list log dir", e))?;
            let fname = entry.file_name().to_string_lossy().to_string();
            if let Some(stem) = fname.strip_suffix(".log") {
                if let Ok(b) = stem.parse::<i64>() {
                    bases.push(b);
                }
            }
        }
        bases.sort_unstable();
        if bases.is_empty() {
            bases.push(0);
        }
        let interval = cfg.index_interval_bytes as u64;
        let mut segments = Vec::new();
        for b in &bases {
            let mut s = Segment::create(dir, *b)?;
            s.recover(dir, interval)?;
            segments.push(s);
        }
        let mut t = LogTablet {
            dir: dir.to_path_buf(),
            name,
            cfg,
            log_start_offset: 0,
            log_end_offset: 0,
            high_watermark: 0,
            max_timestamp: -1,
            writers: WriterStates::default(),
            segments,
            remote: RemoteState::default(),
        };
        let state = dir.join(REMOTE_STATE_FILE);
        if state.exists() {
            let bytes = fs::read(&state).map_err(|e| storage_err("read remote log state", e))?;
            t.remote = serde_json::from_slice(&bytes)
                .map_err(|e| storage_err(&format!("parse {}", state.display()), e))?;
        }
        t.refresh_bounds();
        t.rebuild_writers()?;
        Ok(t)
    }

    fn refresh_bounds(&mut self) {
        self.log_start_offset = self.segments.first().map_or(0, |s| s.base_offset);
        self.log_end_offset = self
            .segments
            .last()
            .map_or(0, |s| s.next_offset.max(s.base_offset));
        self.high_watermark = self.log_end_offset;
        self.max_timestamp = self
            .segments
            .iter()
            .map(|s| s.max_timestamp)
            .max()
            .unwrap_or(-1);
    }

    fn rebuild_writers(&mut self) -> Result<()> {
        self.writers.clear();
        let mut metas = Vec::new();
        for s in &self.segments {
            s.walk(0, false, |i, _| {
                if i.writer_id != crate::writers::NO_WRITER_ID {
                    metas.push((i.writer_id, meta_of(i)));
                }
                true
            })?;
        }
        for (w, m) in metas {
            self.writers.record(w, m);
        }
        Ok(())
    }

    /// First offset still stored, locally or in remote storage.
    pub fn log_start_offset(&self) -> i64 {
        self.remote
            .segments
            .first()
            .map_or(self.log_start_offset, |r| {
                r.start.min(self.log_start_offset)
            })
    }

    /// First offset stored locally (below it, only remote segments hold the log).
    pub fn local_log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    /// The remote segments and the manifest that lists them.
    pub fn remote_state(&self) -> &RemoteState {
        &self.remote
    }

    /// The remote segments holding `offset` and after, with the byte position in the first
    /// to read from; `None` when `offset` is not in remote storage.
    pub fn remote_fetch(&self, offset: i64) -> Option<(Vec<RemoteSegment>, u64)> {
        let i = self
            .remote
            .segments
            .iter()
            .position(|r| r.start <= offset && offset < r.end)?;
        let segs = self.remote.segments[i..].to_vec();
        let pos = segs[0].position_for(offset);
        Some((segs, pos))
    }

    /// Rolled segments not yet in remote storage, oldest first.
    pub fn segments_to_copy(&self) -> Vec<SegmentToCopy> {
        let copied_end = self.remote.segments.last().map_or(i64::MIN, |r| r.end);
        let n = self.segments.len();
        self.segments[..n.saturating_sub(1)]
            .iter()
            .filter(|s| s.base_offset >= copied_end && s.size > 0)
            .map(|s| SegmentToCopy {
                remote: RemoteSegment {
                    id: String::new(),
                    start: s.base_offset,
                    end: s.next_offset,
                    size: s.size,
                    max_timestamp: s.max_timestamp,
                    offset_index: s.offset_index.clone(),
                    time_index: s.time_index.clone(),
                },
                files: [
                    (self.dir.join(seg_name(s.base_offset, "log")), "log"),
                    (self.dir.join(seg_name(s.base_offset, "index")), "index"),
                    (
                        self.dir.join(seg_name(s.base_offset, "timeindex")),
                        "timeindex",
                    ),
                ],
            })
            .collect()
    }

    /// Records segments copied to remote storage and the manifest now listing them.
    pub fn commit_remote(
        &mut self,
        copied: Vec<RemoteSegment>,
        removed: usize,
        manifest: Option<String>,
    ) -> Result<()> {
        let removed = removed.min(self.remote.segments.len());
        self.remote.segments.drain(..removed);
        self.remote.segments.extend(copied);
        self.remote.manifest = manifest;
        let bytes = serde_json::to_vec(&self.remote)
            .map_err(|e| storage_err("encode remote log state", e))?;
        let tmp = self.dir.join(format!("{REMOTE_STATE_FILE}.tmp"));
        let mut f = File::create(&tmp).map_err(|e| storage_err("write remote log state", e))?;
        f.write_all(&bytes)
            .and_then(|_| f.sync_data())
            .map_err(|e| storage_err("write remote log state", e))?;
        fs::rename(&tmp, self.dir.join(REMOTE_STATE_FILE))
            .map_err(|e| storage_err("write remote log state", e))?;
        sync_dir(&self.dir);
        Ok(())
    }

    /// The oldest remote segments whose newest batch is older than `ttl_ms` (not removed yet).
    pub fn expired_remote(&self, ttl_ms: i64) -> usize {
        if ttl_ms <= 0 {
            return 0;
        }
        let now = now_ms();
        self.remote
            .segments
            .iter()
            .take_while(|r| now - r.max_timestamp > ttl_ms)
            .count()
    }

    /// Deletes the first `n` segments' files (retention or tiering made them unneeded here) and
    /// moves the log start to the first remaining segment.
    fn remove_first_segments(&mut self, n: usize) {
        for seg in self.segments.drain(..n) {
            for ext in ["log", "index", "timeindex"] {
                let _ = fs::remove_file(self.dir.join(seg_name(seg.base_offset, ext)));
            }
        }
        sync_dir(&self.dir);
        self.log_start_offset = self
            .segments
            .first()
            .map_or(self.log_end_offset, |s| s.base_offset);
    }

    /// Deletes local segments already copied to remote storage, keeping the newest `keep`
    /// rolled ones (and the active one) and every one holding offsets at or after `keep_from`
    /// (records the lake tiering has not read yet). Returns how many were deleted.
    pub fn cleanup_tiered(&mut self, keep: usize, keep_from: i64) -> Result<usize> {
        let copied_end = self
            .remote
            .segments
            .last()
            .map_or(i64::MIN, |r| r.end)
            .min(keep_from);
        let rolled = self.segments.len().saturating_sub(1);
        let mut n = 0;
        while n < rolled.saturating_sub(keep) && self.segments[n].next_offset <= copied_end {
            n += 1;
        }
        if n == 0 {
            return Ok(0);
        }
        self.remove_first_segments(n);
        Ok(n)
    }

    /// Offset the next record will get.
    pub fn log_end_offset(&self) -> i64 {
        self.log_end_offset
    }

    /// Offset up to which (exclusive) clients may read; equals the end offset on one node.
    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// Largest commit timestamp stored (-1 when empty).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }

    /// Number of segment files (for tests and stats).
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Checks idempotence for a batch about to be produced.
    pub fn check_sequence(&self, writer_id: i64, sequence: i32) -> Result<SequenceCheck> {
        self.writers.check(writer_id, sequence, &self.name)
    }

    /// Appends the concatenated batches of a produce request (offsets and commit timestamp
    /// assigned in place), then syncs per policy. `infos` are the batches' header facts from
    /// the check that owns their structure (`validate::log_records`, or `batch::info` of a
    /// batch the server built); they cover `records` exactly.
    pub fn append(&mut self, mut records: Vec<u8>, infos: &[BatchInfo]) -> Result<AppendResult> {
        if infos.iter().map(|i| i.size).sum::<usize>() != records.len() {
            return Err(Error::internal(format!(
                "append of {} bytes given batches covering a different size",
                records.len()
            )));
        }
        if infos.is_empty() {
            return Ok(AppendResult {
                base_offset: self.log_end_offset,
                last_offset: self.log_end_offset - 1,
                duplicate: false,
            });
        }
        // idempotence: any duplicate batch answers with the original offsets
        let mut check = WriterStates::default();
        for i in infos {
            if i.writer_id == crate::writers::NO_WRITER_ID {
                continue;
            }
            // batches of the same writer inside one request must continue each other
            match self
                .writers
                .check(i.writer_id, i.batch_sequence, &self.name)?
            {
                SequenceCheck::Duplicate(m) => {
                    return Ok(AppendResult {
                        base_offset: m.first_offset,
                        last_offset: m.last_offset,
                        duplicate: true,
                    })
                }
                SequenceCheck::Append => {}
            }
            check.record(i.writer_id, meta_of(i));
        }
        let commit_ts = self.max_timestamp.max(now_ms());
        let mut offset = self.log_end_offset;
        let base = offset;
        let mut pos = 0usize;
        let mut assigned = Vec::with_capacity(infos.len());
        for i in infos {
            let span = i.next_offset - i.base_offset;
            batch::assign(&mut records[pos..pos + i.size], offset, commit_ts)?;
            let mut a = *i;
            a.base_offset = offset;
            a.next_offset = offset + span;
            a.commit_timestamp = commit_ts;
            assigned.push(a);
            offset += span;
            pos += i.size;
        }
        self.maybe_roll(records.len() as u64, offset - base)?;
        let interval = self.cfg.index_interval_bytes as u64;
        let fsync = self.cfg.fsync == FsyncPolicy::Always;
        let seg = self.segments.last_mut().ok_or_else(no_active_segment)?;
        let start = seg.size;
        seg.log
            .write_all(&records)
            .map_err(|e| storage_err("append to segment", e))?;
        let mut p = start;
        for a in &assigned {
            seg.index_batch(a, p, interval)?;
            p += a.size as u64;
        }
        seg.size = p;
        if fsync {
            seg.log.sync_data().map_err(|e| storage_err("fsync", e))?;
        }
        for a in &assigned {
            self.writers.record(a.writer_id, meta_of(a));
        }
        self.log_end_offset = offset;
        self.high_watermark = offset;
        self.max_timestamp = commit_ts;
        Ok(AppendResult {
            base_offset: base,
            last_offset: offset - 1,
            duplicate: false,
        })
    }

    fn maybe_roll(&mut self, incoming: u64, incoming_offsets: i64) -> Result<()> {
        let seg = self.segments.last().ok_or_else(no_active_segment)?;
        let too_big = seg.size > 0 && seg.size + incoming > self.cfg.segment_bytes;
        // index entries hold offsets relative to the segment base as i32
        let too_many = seg.size > 0
            && (self.log_end_offset - seg.base_offset).saturating_add(incoming_offsets)
                > i64::from(i32::MAX);
        let too_old = seg.size > 0 && now_ms() - seg.created_ms >= self.cfg.segment_ms;
        if too_big || too_old || too_many {
            self.roll()?;
        }
        Ok(())
    }

    /// Closes the active segment and starts a new one at the end offset.
    pub fn roll(&mut self) -> Result<()> {
        let leo = self.log_end_offset;
        if let Some(seg) = self.segments.last_mut() {
            if seg.size == 0 {
                return Ok(());
            }
            if seg
                .time_index
                .last()
                .is_none_or(|l| seg.max_timestamp > l.0)
                && seg.max_timestamp >= 0
            {
                let off = seg.next_offset - 1;
                seg.append_time_entry(seg.max_timestamp, off)?;
            }
            seg.sync()?;
        }
        let s = Segment::create(&self.dir, leo)?;
        self.segments.push(s);
        sync_dir(&self.dir);
        Ok(())
    }

    /// Reads whole batches starting with the one holding `offset`, at most `max_bytes` (but at
    /// least one batch when `min_one`), from one segment.
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<Vec<u8>> {
        if offset < self.log_start_offset || offset > self.log_end_offset {
            return Err(Error::from_fluss(
                error_codes::LOG_OFFSET_OUT_OF_RANGE_EXCEPTION,
                format!(
                    "Received request for offset {offset} for table bucket {}, but we only have \
                     log segments from offset {} up to {}.",
                    self.name, self.log_start_offset, self.log_end_offset
                ),
            ));
        }
        if offset == self.log_end_offset {
            return Ok(Vec::new());
        }
        let idx = self
            .segments
            .partition_point(|s| s.base_offset <= offset)
            .saturating_sub(1);
        for seg in &self.segments[idx..] {
            if seg.next_offset <= offset {
                continue;
            }
            let from = seg.position_for(offset);
            let mut start = None;
            seg.walk(from, false, |i, p| {
                if i.next_offset > offset {
                    start = Some((p, i.size));
                    false
                } else {
                    true
                }
            })?;
            let Some((pos, first_size)) = start else {
                continue;
            };
            let want = if first_size > max_bytes {
                if min_one {
                    first_size
                } else {
                    return Ok(Vec::new());
                }
            } else {
                max_bytes
            };
            let buf = seg.read_at(pos, want)?;
            let (_, used) = batch::scan(&buf, false);
            let mut buf = buf;
            buf.truncate(used);
            return Ok(buf);
        }
        Ok(Vec::new())
    }

    /// Offset of the first batch whose commit timestamp is >= `ts`, or None when there is none.
    /// In remote segments the answer comes from their sparse time index and may lie before
    /// that batch, as Fluss's `RemoteLogManager.lookupOffsetForTimestamp` does (readers of a
    /// time range skip what was committed before its start).
    pub fn offset_for_timestamp(&self, ts: i64) -> Result<Option<i64>> {
        let local_start = self.log_start_offset;
        for r in &self.remote.segments {
            if r.max_timestamp < ts || r.start >= local_start {
                continue;
            }
            let off = match r.time_index.partition_point(|e| e.0 < ts) {
                0 => r.start,
                n => r.time_index[n - 1].1,
            };
            return Ok(Some(off.clamp(r.start, r.end - 1)));
        }
        for seg in &self.segments {
            if seg.max_timestamp < ts || seg.size == 0 {
                continue;
            }
            let from_offset = match seg.time_index.partition_point(|e| e.0 < ts) {
                0 => seg.base_offset,
                n => seg.time_index[n - 1].1,
            };
            let pos = seg.position_for(from_offset);
            let mut found = None;
            seg.walk(pos, false, |i, _| {
                if i.commit_timestamp >= ts && i.base_offset >= from_offset.min(i.base_offset) {
                    found = Some(i.base_offset);
                    false
                } else {
                    true
                }
            })?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// Deletes the oldest segments whose newest batch is older than `ttl_ms` (never the active
    /// one, which is rolled first when everything has expired). Returns how many were deleted.
    pub fn delete_expired(&mut self, ttl_ms: i64) -> Result<usize> {
        if ttl_ms <= 0 {
            return Ok(0);
        }
        let now = now_ms();
        let expired = |s: &Segment| s.max_timestamp >= 0 && now - s.max_timestamp > ttl_ms;
        let n = self.segments.len();
        let mut deletable = 0;
        while deletable + 1 < n && expired(&self.segments[deletable]) {
            deletable += 1;
        }
        if deletable == n - 1 && expired(&self.segments[n - 1]) {
            self.roll()?;
            deletable = n;
        }
        if deletable == 0 {
            return Ok(0);
        }
        self.remove_first_segments(deletable);
        Ok(deletable)
    }

    /// Drops every batch at or after `offset` (used to undo a changelog whose KV state was not
    /// persisted before a crash).
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        if offset >= self.log_end_offset {
            return Ok(());
        }
        while self.segments.len() > 1
            && self
                .segments
                .last()
                .is_some_and(|s| s.base_offset >= offset)
        {
            let Some(seg) = self.segments.pop() else {
                break;
            };
            for ext in ["log", "index", "timeindex"] {
                let _ = fs::remove_file(self.dir.join(seg_name(seg.base_offset, ext)));
            }
        }
        let interval = self.cfg.index_interval_bytes as u64;
        let seg = self.segments.last_mut().ok_or_else(no_active_segment)?;
        let mut cut = None;
        seg.walk(0, false, |i, p| {
            if i.base_offset >= offset {
                cut = Some(p);
                false
            } else {
                true
            }
        })?;
        if let Some(p) = cut {
            seg.log.set_len(p).map_err(|e| storage_err("truncate", e))?;
            seg.recover(&self.dir, interval)?;
        }
        self.refresh_bounds();
        self.rebuild_writers()?;
        Ok(())
    }

    /// Forces everything to disk (clean shutdown).
    pub fn flush(&self) -> Result<()> {
        for s in &self.segments {
            s.sync()?;
        }
        Ok(())
    }
}

fn meta_of(i: &BatchInfo) -> BatchMeta {
    BatchMeta {
        batch_sequence: i.batch_sequence,
        first_offset: i.base_offset,
        last_offset: i.last_offset(),
        timestamp: i.commit_timestamp,
    }
}

/// Best-effort fsync of a directory (makes created / renamed / deleted names durable).
pub fn sync_dir(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uninit_reads_return_exactly_the_file_range_and_refuse_to_read_past_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        fs::write(&path, &data).unwrap();
        let f = File::open(&path).unwrap();
        assert_eq!(read_exact_at_uninit(&f, 0, data.len()).unwrap(), data);
        assert_eq!(
            read_exact_at_uninit(&f, 12_345, 100_000).unwrap(),
            data[12_345..112_345]
        );
        assert!(read_exact_at_uninit(&f, 7, 0).unwrap().is_empty());
        let past = read_exact_at_uninit(&f, 299_990, 11).unwrap_err();
        assert_eq!(past.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
