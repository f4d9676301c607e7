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

/// An error in a task definition: what is wrong, where, and what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskError {
    pub message: String,
    pub location: Option<Location>,
    pub hint: Option<String>,
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

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(loc) => write!(f, "{}: {}", loc, self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for TaskError {}

/// The closest candidate to `word` by edit distance, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

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
