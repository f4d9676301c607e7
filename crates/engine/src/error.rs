use evalscore_reader::ReadError;
use evalscore_task::TaskError;
use std::fmt;
use std::path::Path;

/// A run failed: what happened, the chain of causes, and what the user can do.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub message: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            causes: Vec::new(),
            hint: None,
        }
    }

    pub fn caused_by(mut self, cause: impl Into<String>) -> Self {
        self.causes.push(cause.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// An error in the task file, located by line and column.
    pub fn task(path: &Path, e: TaskError) -> Self {
        let at = match e.location {
            Some(l) => format!("task file `{}`, {l}", path.display()),
            None => format!("task file `{}`", path.display()),
        };
        Error {
            message: format!("{at}: {}", e.message),
            causes: Vec::new(),
            hint: e.hint,
        }
    }

    pub fn read(e: ReadError) -> Self {
        Error {
            message: e.to_string(),
            causes: Vec::new(),
            hint: e.hint,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
