//! The judge crate's errors as [`evalscore_error::Error`]s: each knows its kind, so `?`
//! converts it. Hints are the caller's (the scorers' judge runtime knows the task's models and
//! the command line); none is given here.

use crate::{CacheError, JudgeError, RequestError, WindowError};
use evalscore_error::{Diagnostic, ErrorKind};

/// A file the user gave (a Batch API output) that cannot be read is an input problem; the
/// cache itself failing is not the task's nor the input's.
impl Diagnostic for CacheError {
    fn kind(&self) -> ErrorKind {
        match self {
            CacheError::Read { .. }
            | CacheError::NotAFile { .. }
            | CacheError::BatchLine { .. } => ErrorKind::Input,
            _ => ErrorKind::Other,
        }
    }

    fn hint(&self) -> Option<String> {
        match self {
            CacheError::Shared(e) => e.hint.clone(),
            _ => None,
        }
    }
}

/// A request that failed for good, after its retries.
impl Diagnostic for RequestError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Other
    }
}

/// A row without a reply: a failed request, or one `--offline` forbids.
impl Diagnostic for JudgeError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Data
    }
}

/// A window that stopped: a signal, the cache, or an endpoint that is down.
impl Diagnostic for WindowError {
    fn kind(&self) -> ErrorKind {
        match self {
            WindowError::Interrupted => ErrorKind::Interrupted,
            WindowError::Cache(e) => e.kind(),
            WindowError::Unreachable { .. } => ErrorKind::Other,
        }
    }
}
