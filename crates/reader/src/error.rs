use std::fmt;
use std::path::{Path, PathBuf};

/// An input could not be read: which file, where in it, what is wrong, what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    pub path: Option<PathBuf>,
    /// 1-based line of a JSONL file.
    pub line: Option<u64>,
    pub message: String,
    pub hint: Option<String>,
}

impl ReadError {
    pub fn new(message: impl Into<String>) -> Self {
        ReadError {
            path: None,
            line: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn at(path: &Path, message: impl Into<String>) -> Self {
        ReadError {
            path: Some(path.to_path_buf()),
            ..ReadError::new(message)
        }
    }

    pub fn with_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(p), Some(l)) => write!(f, "{}, line {l}: {}", p.display(), self.message),
            (Some(p), None) => write!(f, "{}: {}", p.display(), self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReadError {}

/// An input error; `?` makes it an `evalscore_error::Error` with the same text and hint.
impl evalscore_error::Diagnostic for ReadError {
    fn kind(&self) -> evalscore_error::ErrorKind {
        evalscore_error::ErrorKind::Input
    }

    fn hint(&self) -> Option<String> {
        self.hint.clone()
    }
}
