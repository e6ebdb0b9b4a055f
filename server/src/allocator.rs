//! The allocator of the server's processes (`riverlet serve` and `riverlet-server`, feature
//! `mimalloc`): mimalloc built without transparent huge pages (`no_thp`) and purging freed pages
//! after 10 ms, so the server's RSS follows what it holds instead of one glibc arena per thread
//! (RELIABILITY.md, "Allocator" and "Soak").
//!
//! A module of the two binaries only (`server/src/main.rs`, and `cli/src/main.rs` through
//! `#[path]`), never of the library: a library that refers to mimalloc links it into every
//! binding's shared library, whose initial-exec TLS then fails a second `dlopen` in one process
//! ("cannot allocate memory in static TLS block", seen with the JVM's isolated class loaders).

/// The process's global allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: 15 in the enum `mi_option_e` of `mimalloc.h` (2 and 3),
/// which libmimalloc-sys does not name.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed pages go back to the OS after 10 ms (mimalloc 2's default) instead of mimalloc 3's
/// 1000 ms, which kept ~50 MiB more under the soak's load; `MIMALLOC_PURGE_DELAY` still wins.
/// Called first thing in `main`.
pub fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mi_option_set only stores the value of an option that exists in mimalloc 3.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10) }
    }
}
