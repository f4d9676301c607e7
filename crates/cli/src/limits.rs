//! Process-wide resource limits raised before any work: the soft limit on open files up to
//! the hard one, as many servers do. A suite holds each task's output files and folder lock
//! open from its start to the commit (about 7 descriptors a task), so the usual soft limit of
//! 1,024 would stop a suite of about 140 tasks that the hard limit allows.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (Unix). A failure (a platform that caps
/// it lower) leaves the limit as it was.
pub fn raise_open_files() {
    #[cfg(unix)]
    // SAFETY: `getrlimit` and `setrlimit` read and write the `rlimit` struct passed by
    // reference, which lives for the whole call; they touch nothing else of the process.
    #[allow(unsafe_code)]
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
