//! Decompressing the ZSTD-compressed body of an Arrow IPC RecordBatch message into one region
//! of memory, with a ZSTD context kept per thread, before arrow-ipc decodes the arrays.
//!
//! arrow-ipc decompresses each buffer of a message into a `Vec` of its own (a dozen or more
//! allocations per log batch) with a ZSTD context created per message. Fluss's log batches are
//! small (a few hundred KB decoded), so those costs add up over a scan; and a read that keeps
//! every batch wants them in memory it chose ([`super::batch_memory`]). Here every buffer is
//! decompressed into its aligned slot of one region, and arrow-ipc is handed the same
//! message rewritten as uncompressed, so it slices the region without copying.
//! The checks are arrow-ipc's: each buffer must decompress to exactly its declared length.

use std::cell::RefCell;

use arrow_buffer::Buffer;
use zstd::zstd_safe::WriteBuf;

use super::batch_memory::{BatchMemory, Region, RANGE_ALIGN};
use super::le;
use crate::{Error, Result};

/// Per-buffer prefix of a compressed body: the uncompressed length, -1 when stored raw.
const LENGTH_PREFIX: usize = 8;
const STORED_RAW: i64 = -1;

thread_local! {
    /// Contexts are ~100 KB of tables; creating one per batch showed up in profiles.
    static ZSTD_CONTEXT: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// One buffer of the body: where its bytes are, how they are stored, where they go.
struct Slot<'a> {
    source: &'a [u8],
    kind: SlotKind,
    offset: usize,
    len: usize,
}

enum SlotKind {
    Empty,
    Raw,
    Zstd,
}

/// The body's buffers decompressed into one region, and the message's RecordBatch rewritten
/// to describe that region (no compression, each buffer at its slot).
pub(crate) struct Decompressed {
    pub(crate) body: Buffer,
    pub(crate) header: flatbuffers::FlatBufferBuilder<'static>,
}

impl Decompressed {
    /// The rewritten RecordBatch header.
    pub(crate) fn batch(&self) -> Result<arrow_ipc::RecordBatch<'_>> {
        flatbuffers::root::<arrow_ipc::RecordBatch>(self.header.finished_data())
            .map_err(|e| Error::internal(format!("rewritten arrow ipc header: {e}")))
    }
}

/// Decompresses every buffer of a ZSTD-compressed message body. The caller has checked that
/// every buffer range lies within `body` and that the declared lengths are within limits.
pub(crate) fn decompress_zstd_body(
    batch: &arrow_ipc::RecordBatch<'_>,
    body: &[u8],
    memory: BatchMemory<'_>,
) -> Result<Decompressed> {
    let mut slots = Vec::new();
    let mut end = 0usize;
    for b in batch.buffers().iter().flat_map(|v| v.iter()) {
        let source = usize::try_from(b.offset())
            .ok()
            .zip(usize::try_from(b.length()).ok())
            .and_then(|(o, l)| body.get(o..o.checked_add(l)?))
            .ok_or_else(|| Error::corrupt("arrow ipc: buffer outside the body"))?;
        let (kind, len) = if source.is_empty() {
            (SlotKind::Empty, 0)
        } else {
            let declared = le::i64_at(source, 0).ok_or_else(|| {
                Error::corrupt("arrow ipc: compressed buffer shorter than its length prefix")
            })?;
            match declared {
                0 => (SlotKind::Empty, 0),
                STORED_RAW => (SlotKind::Raw, source.len() - LENGTH_PREFIX),
                d => (
                    SlotKind::Zstd,
                    usize::try_from(d).map_err(|_| {
                        Error::corrupt(format!("arrow ipc: bad uncompressed buffer length {d}"))
                    })?,
                ),
            }
        };
        let offset = end.next_multiple_of(RANGE_ALIGN);
        end = offset
            .checked_add(len)
            .ok_or_else(|| Error::corrupt("arrow ipc: declared uncompressed size too large"))?;
        slots.push(Slot {
            source,
            kind,
            offset,
            len,
        });
    }

    let mut region = Region::allocate(end, memory);
    let base = region.as_mut_ptr();
    ZSTD_CONTEXT.with(|cell| -> Result<()> {
        let mut context = cell.borrow_mut();
        for (i, s) in slots.iter().enumerate() {
            // SAFETY: offset + len <= end, the region's length; slots do not overlap.
            let dest = unsafe { base.add(s.offset) };
            let data = &s.source[LENGTH_PREFIX.min(s.source.len())..];
            match s.kind {
                SlotKind::Empty => {}
                // SAFETY: `data` has exactly `len` bytes here and the slot has room for them.
                SlotKind::Raw => unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), dest, s.len)
                },
                SlotKind::Zstd => {
                    let dctx = match &mut *context {
                        Some(d) => d,
                        none => none.insert(zstd::bulk::Decompressor::new().map_err(|e| {
                            Error::internal(format!("cannot create a zstd context: {e}"))
                        })?),
                    };
                    let mut out = SlotWriter {
                        ptr: dest,
                        capacity: s.len,
                        filled: 0,
                    };
                    let n = dctx.decompress_to_buffer(data, &mut out).map_err(|e| {
                        Error::corrupt(format!(
                            "arrow ipc: buffer {i} does not decompress (zstd): {e}"
                        ))
                    })?;
                    if n != s.len {
                        return Err(Error::corrupt(format!(
                            "arrow ipc: buffer {i} decompresses to {n} bytes, its prefix says {}",
                            s.len
                        )));
                    }
                }
            }
        }
        Ok(())
    })?;
    // Alignment gaps between slots are never read by Arrow but must be initialised memory.
    let mut at = 0usize;
    for s in &slots {
        // SAFETY: [at, s.offset) lies within the region, between two slots.
        unsafe { std::ptr::write_bytes(base.add(at), 0, s.offset - at) };
        at = s.offset + s.len;
    }
    // SAFETY: every slot was written in full above, and every gap just now.
    let body = unsafe { region.into_buffer() };

    let mut fbb = flatbuffers::FlatBufferBuilder::with_capacity(128 + 24 * slots.len());
    let nodes: Vec<arrow_ipc::FieldNode> = batch
        .nodes()
        .map(|v| v.iter().copied().collect())
        .unwrap_or_default();
    let buffers: Vec<arrow_ipc::Buffer> = slots
        .iter()
        .map(|s| arrow_ipc::Buffer::new(s.offset as i64, s.len as i64))
        .collect();
    let variadic: Option<Vec<i64>> = batch.variadicBufferCounts().map(|v| v.iter().collect());
    let nodes = fbb.create_vector(&nodes);
    let buffers = fbb.create_vector(&buffers);
    let variadic = variadic.map(|v| fbb.create_vector(&v));
    let root = arrow_ipc::RecordBatch::create(
        &mut fbb,
        &arrow_ipc::RecordBatchArgs {
            length: batch.length(),
            nodes: Some(nodes),
            buffers: Some(buffers),
            compression: None,
            variadicBufferCounts: variadic,
        },
    );
    fbb.finish(root, None);
    Ok(Decompressed { body, header: fbb })
}

/// A slot of the region as zstd's output: uninitialised memory of `capacity` bytes.
struct SlotWriter {
    ptr: *mut u8,
    capacity: usize,
    filled: usize,
}

// SAFETY: `ptr` points to `capacity` writable bytes (a slot of the region) for the writer's
// life, and `as_slice` exposes only the `filled` bytes zstd reported as written.
unsafe impl WriteBuf for SlotWriter {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: the first `filled` bytes were written by zstd; ptr is non-null.
        unsafe { std::slice::from_raw_parts(self.ptr, self.filled) }
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    unsafe fn filled_until(&mut self, n: usize) {
        self.filled = n;
    }
}
