//! Files that are not regular files, which inputs must refuse.

use std::path::Path;

/// Makes a FIFO (named pipe) at `path` with `mkfifo`.
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}
