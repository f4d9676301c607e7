//! Naming the kind of a file that is not a regular file, for messages: the reader and the
//! judge's batch files refuse such inputs in the same words.

/// What kind of special file `meta` describes, for messages.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_char_device() {
            return "character device";
        }
        if t.is_block_device() {
            return "block device";
        }
    }
    if meta.is_dir() {
        "directory"
    } else {
        "special file"
    }
}
