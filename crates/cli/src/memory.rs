//! Process-wide memory settings made before any work: huge pages off on Linux, and with the
//! `mimalloc` feature, freed memory kept until the process ends.

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v2 and v3 alike).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// With mimalloc: keep freed memory instead of returning it to the OS 10 ms later. Each
/// unit's buffers are freed and the next unit's are allocated moments after; returned pages
/// come back as fresh (zeroed) pages. Memory stays bounded: the peak is what it was, it is
/// only not given back before the process ends.
pub fn keep_freed_memory() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: `mi_option_set` takes an option number and a value, is safe to call at any
    // time from any thread, and ignores options it does not know.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

/// Turns transparent huge pages off for this process (Linux). Where the kernel has no huge
/// page free it compacts memory on the faulting thread: in the benchmark's alternating runs
/// (after DuckDB and Polars) that added system time to some runs of the job under mimalloc,
/// whose peak RSS also halved with 4 KiB pages (BENCHMARKS.md).
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` only sets a flag of this process; it
    // takes no pointers. A kernel without it returns an error, which changes nothing.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
