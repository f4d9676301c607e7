use std::fmt;

/// A line and column in the task file, both 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    pub line: u64,
    pub column: u64,
}

impl Location {
    pub fn new(line: u64, column: u64) -> Self {
        Location { line, column }
    }

    pub(crate) fn from_saphyr(loc: &serde_saphyr::Location) -> Option<Self> {
        // serde-saphyr reports 0 for locations it does not know (values from flattening).
        (loc.line() > 0).then(|| Location::new(loc.line(), loc.column()))
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// An error in a task definition: what is wrong, where, and what to do about it. The engine
/// names the task file before it (`task file `t.yaml`, line 3, column 5: ...`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", at(location))]
pub struct TaskError {
    pub message: String,
    pub location: Option<Location>,
    pub hint: Option<String>,
}

/// `line L, column C: ` before a located message.
fn at(location: &Option<Location>) -> String {
    location.map(|l| format!("{l}: ")).unwrap_or_default()
}

impl TaskError {
    pub fn new(message: impl Into<String>, location: Option<Location>) -> Self {
        TaskError {
            message: message.into(),
            location,
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// A task error is of [`ErrorKind::Task`](evalscore_error::ErrorKind::Task); the engine puts
/// the task file's name before it when it knows it.
impl evalscore_error::Diagnostic for TaskError {
    fn kind(&self) -> evalscore_error::ErrorKind {
        evalscore_error::ErrorKind::Task
    }

    fn hint(&self) -> Option<String> {
        self.hint.clone()
    }
}

/// The closest candidate to `word` by edit distance, if it is close enough to be a likely
/// typo (shared with the reader's partition filters).
pub use evalscore_error::did_you_mean;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let c = ["string_equals", "string_equals_mcqa", "mean"];
        assert_eq!(did_you_mean("string_equal", &c), Some("string_equals"));
        assert_eq!(did_you_mean("maen", &c), Some("mean"));
        assert_eq!(did_you_mean("regex", &c), None);
    }
}
