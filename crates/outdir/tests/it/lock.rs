//! The folder's lock file: taken for a command, and never left behind empty.

use evalscore_outdir::{OutDir, LOCK_FILE};

/// A full disk when the lock's PID is written: the command fails naming the lock file, and the
/// lock file it created is removed rather than left empty in `--out`. The disk is `/dev/full`
/// (every write fails with ENOSPC) behind a symlink at the lock's name.
#[cfg(target_os = "linux")]
#[test]
fn a_lock_whose_pid_cannot_be_written_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join(LOCK_FILE);
    std::os::unix::fs::symlink("/dev/full", &lock).unwrap();
    let e = OutDir::prepare(dir.path(), &["a.json", "run.json"], false).unwrap_err();
    assert_eq!(
        evalscore_error::render(&e),
        format!(
            "error: cannot write the lock file `{}`\n  Caused by: No space left on device (os error 28)\nhint: the disk is full (or a file size limit was reached); free space or choose another `--out` folder. No output was written\n",
            lock.display()
        )
    );
    assert!(lock.symlink_metadata().is_err(), "the lock file is left");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    // The next command takes the folder as usual, and its lock names its PID.
    let out = OutDir::prepare(dir.path(), &["a.json", "run.json"], false).unwrap();
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        std::process::id().to_string()
    );
    drop(out);
    assert!(!lock.exists());
}
