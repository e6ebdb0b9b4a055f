//! Where the decoded buffers of one log batch live: one allocation per batch, or a range
//! carved from large blocks shared by the batches of a read that keeps all of them.
//!
//! A read into a table (Python's `read()`, a collect) keeps every decoded batch until the end,
//! so its memory is hundreds of MB of fresh pages. Such a read carves its batches from blocks
//! that grow from 256 KiB to 8 MiB (growing, so that a small read kept around holds little
//! unused memory): one mapping per few batches instead of one allocation per buffer.
//! The blocks are not advised for transparent huge pages: that saved page faults on one host
//! but took 2-4x the kernel time of a full scan on another, a VM that reports its free memory
//! to its host (benches/PROFILE.md, 2026-12-07). A system whose THP policy is `always` still
//! gets huge pages for them.
//! A streaming read frees each batch soon after it is decoded, so it needs few pages at
//! a time: each batch gets a mapping of its own, which returns to the read's small pool when
//! the batch is dropped and is reused for a later batch, so the stream faults in its pages
//! once and holds no more than the batches alive plus the pool. (Left to `malloc`, batches
//! decoded on the runtime's blocking threads spread over per-thread arenas that keep freed
//! memory: a streaming read's peak RSS was ~15 MiB higher that way, benches/PROFILE.md.)

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_buffer::{Buffer, MutableBuffer};

/// Size of a shared block once a read has grown to it: a handful of decoded batches (Fluss
/// batches decode to 0.1-2 MB).
const BLOCK_BYTES: usize = 8 << 20;
/// Size of a read's first shared block; each next one is twice the last, up to [`BLOCK_BYTES`].
const FIRST_BLOCK_BYTES: usize = 256 << 10;
/// The size a block is rounded up to, and its alignment where it is not mapped (a page).
const PAGE: usize = 4096;
/// Free mappings a streaming read's pool keeps for reuse.
const POOL_BLOCKS: usize = 8;
/// Pooled mappings are sized in steps of this many bytes, so that batches of similar size
/// reuse one another's.
const POOL_GRANULE: usize = 64 << 10;
/// Ranges carved from a block start at this alignment: Arrow's own buffer alignment, enough
/// for every Arrow type (arrow-ipc copies a buffer it finds misaligned for its type).
pub(crate) const RANGE_ALIGN: usize = 64;

/// The bytes of `batch`'s rows. Not `get_array_memory_size`: that counts whole underlying
/// allocations, so a batch sliced from a larger one, or decoded here (its columns share one
/// region), would count that region once per buffer.
pub fn row_bytes(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap_or(0))
        .sum()
}

/// How the decoder allocates the memory of a batch.
#[derive(Clone, Copy, Default)]
pub enum BatchMemory<'a> {
    /// One allocation per batch, freed with the batch (streaming reads, the server).
    #[default]
    PerBatch,
    /// Ranges of the read's shared blocks (reads that keep every batch).
    Blocks(&'a BlockCarver),
    /// A mapping per batch, recycled through the read's pool (streaming reads).
    Pooled(&'a BlockPool),
}

/// The blocks of one read: carves ranges from the current block, mapping a new one when it is
/// full. A block is unmapped when the carver and every buffer carved from it are dropped.
#[derive(Default)]
pub struct BlockCarver {
    state: Mutex<Carving>,
}

#[derive(Default)]
struct Carving {
    /// The block being carved and the bytes of it used.
    current: Option<(Arc<Block>, usize)>,
    /// The size of the next block (0: the first).
    next_size: usize,
}

impl std::fmt::Debug for BlockCarver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCarver").finish_non_exhaustive()
    }
}

/// The free mappings of one streaming read. Every batch's mapping holds the pool, so a batch
/// dropped after its read still returns (or, the pool being full, unmaps) its mapping.
#[derive(Default)]
pub struct BlockPool {
    free: Arc<Mutex<Vec<Block>>>,
}

impl std::fmt::Debug for BlockPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockPool").finish_non_exhaustive()
    }
}

impl BlockPool {
    fn take(&self, len: usize) -> Option<Region> {
        let size = len.max(1).checked_next_multiple_of(POOL_GRANULE)?;
        let reused = {
            let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
            // Not a mapping much larger than needed: it would hold that memory for a small batch.
            // `remove`, not `swap_remove`: the pool is kept oldest first (see `PooledBlock`'s drop).
            free.iter()
                .position(|b| b.len >= len && b.len <= 2 * size)
                .map(|i| free.remove(i))
        };
        let block = match reused {
            Some(b) => b,
            None => Block::map(size)?,
        };
        Some(Region {
            ptr: block.ptr,
            len,
            owner: RegionOwner::Pooled(Arc::new(PooledBlock {
                block: Some(block),
                pool: self.free.clone(),
            })),
        })
    }
}

/// A mapping lent to one batch; back to its pool when the batch is dropped.
struct PooledBlock {
    block: Option<Block>,
    pool: Arc<Mutex<Vec<Block>>>,
}

impl Drop for PooledBlock {
    fn drop(&mut self) {
        let Some(block) = self.block.take() else {
            return;
        };
        // The pool keeps the mappings returned last: they fit the batches being read now. It
        // used to refuse a block once full, so mappings that fitted no later batch (a
        // bucket's smaller batches) stayed in it for good while every batch of the next size
        // up mapped and unmapped its own: 275 of the 1,320 batches of the bench table
        // (benches/PROFILE.md, 2026-12-07).
        let oldest = {
            let mut free = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            free.push(block);
            (free.len() > POOL_BLOCKS).then(|| free.remove(0))
        };
        drop(oldest);
    }
}

/// Writable, uninitialised memory for one batch; [`Region::into_buffer`] once it is filled.
pub(crate) struct Region {
    ptr: NonNull<u8>,
    len: usize,
    owner: RegionOwner,
}

enum RegionOwner {
    Own(MutableBuffer),
    Block(Arc<Block>),
    Pooled(Arc<PooledBlock>),
}

impl Region {
    /// `len` bytes of memory (contents undefined), aligned to [`RANGE_ALIGN`].
    pub(crate) fn allocate(len: usize, memory: BatchMemory<'_>) -> Region {
        let region = match memory {
            BatchMemory::PerBatch => None,
            BatchMemory::Blocks(carver) => carver.carve(len),
            BatchMemory::Pooled(pool) => pool.take(len),
        };
        if let Some(r) = region {
            return r;
        }
        let mut own = MutableBuffer::with_capacity(len);
        let ptr = NonNull::new(own.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Region {
            ptr,
            len,
            owner: RegionOwner::Own(own),
        }
    }

    /// The start of the region: `len` writable bytes.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The region as an Arrow buffer.
    ///
    /// # Safety
    /// Every byte of the region must have been written.
    pub(crate) unsafe fn into_buffer(self) -> Buffer {
        match self.owner {
            RegionOwner::Own(mut own) => {
                // SAFETY: the caller wrote all `len` bytes of the capacity reserved above.
                unsafe { own.set_len(self.len) };
                own.into()
            }
            // SAFETY: the range lies within the block, which the buffer keeps alive.
            RegionOwner::Block(block) => unsafe {
                Buffer::from_custom_allocation(self.ptr, self.len, block)
            },
            // SAFETY: the region is the start of the pooled mapping, which the buffer keeps
            // lent to it until dropped.
            RegionOwner::Pooled(pooled) => unsafe {
                Buffer::from_custom_allocation(self.ptr, self.len, pooled)
            },
        }
    }
}

impl BlockCarver {
    fn carve(&self, len: usize) -> Option<Region> {
        if len > BLOCK_BYTES / 4 {
            // A large batch gets a block of its own, so blocks do not end in large unused tails.
            let block = Arc::new(Block::map(len)?);
            return Some(Region {
                ptr: block.ptr,
                len,
                owner: RegionOwner::Block(block),
            });
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let fits = |(block, used): &(Arc<Block>, usize)| {
            used.checked_add(len).is_some_and(|end| end <= block.len)
        };
        if !state.current.as_ref().is_some_and(fits) {
            let size = state.next_size.max(FIRST_BLOCK_BYTES).max(len);
            state.current = Some((Arc::new(Block::map(size)?), 0));
            state.next_size = size.saturating_mul(2).min(BLOCK_BYTES);
        }
        let (block, used) = state.current.as_mut()?;
        let start = *used;
        *used = (start + len).next_multiple_of(RANGE_ALIGN).min(block.len);
        // SAFETY: start + len <= block.len, checked above.
        let ptr = unsafe { NonNull::new_unchecked(block.ptr.as_ptr().add(start)) };
        Some(Region {
            ptr,
            len,
            owner: RegionOwner::Block(block.clone()),
        })
    }
}

/// An anonymous mapping, unmapped on drop.
struct Block {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a block is plain memory; writers own disjoint ranges of it (handed out once under
// the carver's lock) and readers only read ranges that were filled before being shared.
unsafe impl Send for Block {}
unsafe impl Sync for Block {}
impl std::panic::RefUnwindSafe for Block {}

impl Block {
    /// Maps `len` bytes (rounded up to whole pages); `None` if the system refuses the mapping
    /// (the caller then allocates the usual way).
    #[cfg(target_os = "linux")]
    fn map(len: usize) -> Option<Block> {
        let len = len.checked_next_multiple_of(PAGE)?.max(PAGE);
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        Some(Block {
            ptr: NonNull::new(raw.cast::<u8>())?,
            len,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn map(len: usize) -> Option<Block> {
        let layout = std::alloc::Layout::from_size_align(len.max(1), PAGE).ok()?;
        // SAFETY: a non-zero size; the result is checked.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) })?;
        Some(Block {
            ptr,
            len: len.max(1),
        })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: the mapping (allocation) made in `map`, released once.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
        #[cfg(not(target_os = "linux"))]
        unsafe {
            let layout = std::alloc::Layout::from_size_align_unchecked(self.len, PAGE);
            std::alloc::dealloc(self.ptr.as_ptr(), layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(mut r: Region, byte: u8) -> Buffer {
        // SAFETY: writing the region's own `len` bytes, then sharing it.
        unsafe {
            std::ptr::write_bytes(r.as_mut_ptr(), byte, r.len());
            r.into_buffer()
        }
    }

    #[test]
    fn carved_ranges_are_aligned_disjoint_and_outlive_the_carver() {
        let carver = BlockCarver::default();
        let bufs: Vec<Buffer> = (0..40u8)
            .map(|i| {
                fill(
                    Region::allocate(300_000 + i as usize, BatchMemory::Blocks(&carver)),
                    i,
                )
            })
            .collect();
        drop(carver);
        for (i, b) in bufs.iter().enumerate() {
            assert_eq!(b.as_ptr() as usize % RANGE_ALIGN, 0);
            assert_eq!(b.len(), 300_000 + i);
            assert!(
                b.as_slice().iter().all(|&x| x == i as u8),
                "batch {i} was overwritten"
            );
        }
    }

    #[test]
    fn a_read_s_blocks_start_small_and_grow_to_the_block_size() {
        let carver = BlockCarver::default();
        let block_len = |c: &BlockCarver| {
            let state = c.state.lock().unwrap();
            state.current.as_ref().map(|(b, _)| b.len)
        };
        // A small read kept around holds a small block.
        let _tiny = fill(Region::allocate(1000, BatchMemory::Blocks(&carver)), 1);
        assert_eq!(block_len(&carver), Some(FIRST_BLOCK_BYTES));
        let mut sizes = Vec::new();
        let _kept: Vec<Buffer> = (0..200)
            .map(|_| {
                let b = fill(Region::allocate(200_000, BatchMemory::Blocks(&carver)), 2);
                let len = block_len(&carver).unwrap();
                if sizes.last() != Some(&len) {
                    sizes.push(len);
                }
                b
            })
            .collect();
        assert_eq!(sizes.first(), Some(&FIRST_BLOCK_BYTES));
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]), "{sizes:?}");
        assert_eq!(sizes.last(), Some(&BLOCK_BYTES));
    }

    #[test]
    fn large_and_per_batch_regions_hold_their_bytes() {
        let carver = BlockCarver::default();
        let big = fill(Region::allocate(5 << 20, BatchMemory::Blocks(&carver)), 7);
        let own = fill(Region::allocate(1000, BatchMemory::PerBatch), 9);
        let empty = fill(Region::allocate(0, BatchMemory::PerBatch), 1);
        assert!(big.as_slice().iter().all(|&x| x == 7) && big.len() == 5 << 20);
        assert!(own.as_slice().iter().all(|&x| x == 9) && own.len() == 1000);
        assert!(empty.is_empty());
    }

    #[test]
    fn a_pool_reuses_the_mappings_of_dropped_batches_and_outlives_its_read() {
        let pool = BlockPool::default();
        let first = fill(Region::allocate(300_000, BatchMemory::Pooled(&pool)), 1);
        let first_ptr = first.as_ptr();
        drop(first);
        // A batch of similar size gets the freed mapping back, filled anew.
        let second = fill(Region::allocate(290_000, BatchMemory::Pooled(&pool)), 2);
        assert_eq!(second.as_ptr(), first_ptr);
        // A much smaller one does not hold that mapping.
        let small = fill(Region::allocate(1000, BatchMemory::Pooled(&pool)), 3);
        let many: Vec<Buffer> = (0..20u8)
            .map(|i| fill(Region::allocate(100_000, BatchMemory::Pooled(&pool)), i))
            .collect();
        drop(pool);
        assert!(second.as_slice().iter().all(|&x| x == 2) && second.len() == 290_000);
        assert!(small.as_slice().iter().all(|&x| x == 3) && small.len() == 1000);
        for (i, b) in many.iter().enumerate() {
            assert!(b.as_slice().iter().all(|&x| x == i as u8));
            assert_eq!(b.as_ptr() as usize % RANGE_ALIGN, 0);
        }
        // Dropping more batches than the pool keeps unmaps the rest.
        drop(many);
    }

    #[test]
    fn a_pool_full_of_mappings_too_small_for_the_batches_gives_them_up() {
        let pool = BlockPool::default();
        let pool_len = |pool: &BlockPool| pool.free.lock().unwrap().len();
        // The pool fills with small mappings no later batch fits.
        let small: Vec<Buffer> = (0..POOL_BLOCKS)
            .map(|_| fill(Region::allocate(60_000, BatchMemory::Pooled(&pool)), 1))
            .collect();
        drop(small);
        assert_eq!(pool_len(&pool), POOL_BLOCKS);
        // Larger batches, one after the other, each dropped before the next: the first maps
        // its own, which the pool keeps (giving up its oldest small one), and every next one
        // takes it from the pool instead of mapping more.
        let fits = |pool: &BlockPool| {
            let free = pool.free.lock().unwrap();
            free.iter().filter(|b| b.len >= 300_000).count()
        };
        drop(fill(
            Region::allocate(300_000, BatchMemory::Pooled(&pool)),
            2,
        ));
        assert_eq!((pool_len(&pool), fits(&pool)), (POOL_BLOCKS, 1));
        for i in 0..20u8 {
            let b = fill(Region::allocate(290_000, BatchMemory::Pooled(&pool)), i);
            assert_eq!(fits(&pool), 0, "batch {i} did not take the pooled mapping");
            assert!(b.as_slice().iter().all(|&x| x == i));
            drop(b);
            assert_eq!((pool_len(&pool), fits(&pool)), (POOL_BLOCKS, 1));
        }
    }
}
