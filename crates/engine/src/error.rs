//! The engine's error: what failed (a message naming the file, row and column, or the task
//! line and column), of which [`ErrorKind`], the chain of causes (`source()`, which the CLI
//! prints as `Caused by:` lines), and what the user can do (`hint`).

use evalscore_reader::ReadError;
use evalscore_scorers::judge::RuntimeError;
use evalscore_task::TaskError;
use std::path::Path;

/// What kind of failure an [`Error`] is, for callers that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The task file: YAML, options, templates, columns it names.
    Task,
    /// An input file: unreadable, damaged, another schema.
    Input,
    /// A row's data that a scorer cannot use (a row error).
    Data,
    /// The output folder or its files.
    Output,
    /// A bug: a check that should never fail, a panic.
    Internal,
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped the run; [`crate::interrupted`] says which.
    Interrupted,
    /// Anything else (bad arguments, library misuse).
    Other,
}

/// A run failed.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub message: String,
    pub kind: ErrorKind,
    /// The first cause; each cause holds the next.
    #[source]
    cause: Option<Box<Cause>>,
    pub hint: Option<String>,
}

/// One link of an [`Error`]'s chain of causes.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Cause {
    message: String,
    #[source]
    next: Option<Box<Cause>>,
}

impl Cause {
    fn push(&mut self, c: Cause) {
        match &mut self.next {
            Some(n) => n.push(c),
            None => self.next = Some(Box::new(c)),
        }
    }
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            kind: ErrorKind::Other,
            cause: None,
            hint: None,
        }
    }

    /// This error as one of `kind`.
    pub fn kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// Adds a cause at the end of the chain.
    pub fn caused_by(mut self, cause: impl Into<String>) -> Self {
        let c = Cause {
            message: cause.into(),
            next: None,
        };
        match &mut self.cause {
            Some(first) => first.push(c),
            None => self.cause = Some(Box::new(c)),
        }
        self
    }

    /// Adds `e` and its own causes at the end of the chain.
    pub fn source_from(mut self, e: &(dyn std::error::Error + 'static)) -> Self {
        let mut next = Some(e);
        while let Some(err) = next {
            self = self.caused_by(err.to_string());
            next = err.source();
        }
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The causes, first to last, as the CLI prints them.
    pub fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(self);
        while let Some(e) = next {
            out.push(e.to_string());
            next = e.source();
        }
        out
    }

    /// An error in the task file, located by line and column.
    pub fn task(path: &Path, e: TaskError) -> Self {
        let at = match e.location {
            Some(l) => format!("task file `{}`, {l}", path.display()),
            None => format!("task file `{}`", path.display()),
        };
        Error {
            message: format!("{at}: {}", e.message),
            kind: ErrorKind::Task,
            cause: None,
            hint: e.hint,
        }
    }

    pub fn read(e: ReadError) -> Self {
        Error {
            message: e.to_string(),
            kind: ErrorKind::Input,
            cause: None,
            hint: e.hint,
        }
    }
}

impl From<RuntimeError> for Error {
    /// The judge side of a run could not be set up: a task problem (an API key variable that
    /// is not set), a cache problem, or a bug.
    fn from(e: RuntimeError) -> Self {
        let hint = e.hint();
        let mut err = Error::new(e.to_string()).kind(match &e {
            RuntimeError::MissingApiKey { .. } | RuntimeError::BadApiKey { .. } => ErrorKind::Task,
            RuntimeError::Interrupted => ErrorKind::Interrupted,
            RuntimeError::ModelNotSetUp(_) => ErrorKind::Internal,
            _ => ErrorKind::Other,
        });
        if let RuntimeError::Cache(c) = &e {
            err = err.caused_by(c.to_string());
        }
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}
