//! Regular expressions from task files, compiled once at load time with fixed limits.
//!
//! Every pattern a task file gives goes through [`compile`]: `regex.pattern`,
//! `normalize: [{regexes_to_ignore: [...]}]`, `extract.regex`, and a `valid_json` schema's
//! `pattern`. The regex crate matches in time linear in the text whatever the pattern; what a
//! hostile pattern can still claim is memory, because counted repetitions multiply
//! (`\w{5000}` is 5,000 copies of a class of some 800 ranges, `(?:a{1000}){1000}` a million
//! states). The limits below bound that. Unicode classes weigh most: `\w{20}` fits in 1 MiB,
//! `\w{21}` does not, while `[A-Za-z0-9_]{5000}`, `(?-u:\w){1000}` and `.{1000}` fit.
//!
//! | limit | value | exceeded |
//! | --- | --- | --- |
//! | [`REGEX_SIZE_LIMIT`] | 1 MiB | the compiled program: a load error, [`PatternError::TooLarge`] |
//! | [`REGEX_DFA_SIZE_LIMIT`] | 2 MiB | the lazy DFA's cache, per regex and thread: matching falls back to slower (still linear) engines |
//! | [`REGEX_NEST_LIMIT`] | 64 | nesting of groups and repetitions: a load error, [`PatternError::Syntax`] |
//!
//! The regex crate's own defaults are 10 MiB and 2 MiB; real task patterns compile to a few KiB.

use regex::{Regex, RegexBuilder};
use std::cell::RefCell;
use std::fmt;

/// Largest compiled program of one task pattern: 1 MiB, a tenth of the regex crate's default.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Largest lazy-DFA cache of one task pattern, per regex and thread: 2 MiB.
pub const REGEX_DFA_SIZE_LIMIT: usize = 2 << 20;
/// Deepest nesting of groups and repetitions in a task pattern.
pub const REGEX_NEST_LIMIT: u32 = 64;

/// A task pattern that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    /// Not valid regex syntax (or nested deeper than [`REGEX_NEST_LIMIT`]): the parser's
    /// one-line reason, e.g. `unclosed group`.
    Syntax(String),
    /// Compiled, the pattern exceeds [`REGEX_SIZE_LIMIT`].
    TooLarge,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Syntax(m) => f.write_str(m),
            PatternError::TooLarge => write!(
                f,
                "the pattern is too large: compiled, it exceeds the size limit of {} MiB",
                REGEX_SIZE_LIMIT >> 20
            ),
        }
    }
}

impl std::error::Error for PatternError {}

/// Compiles a task pattern with the limits above.
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => PatternError::TooLarge,
            // The parser's message ends with its one-line reason; the caller adds the location.
            regex::Error::Syntax(s) => PatternError::Syntax(
                s.lines()
                    .last()
                    .unwrap_or("invalid regular expression")
                    .trim_start_matches("error: ")
                    .to_owned(),
            ),
            other => PatternError::Syntax(other.to_string()),
        })
}

/// A task pattern that a scorer searches for (`regex.pattern`), with the fewest bytes any
/// match spans: a text shorter than that cannot match, which is decided without running
/// the regex (most short answers, such as a single letter, under an `answer is (X)` rule).
#[derive(Debug, Clone)]
pub struct SearchPattern {
    regex: Regex,
    min_len: usize,
}

impl SearchPattern {
    /// Compiles `pattern` with the limits above ([`compile`]).
    pub fn new(pattern: &str) -> Result<SearchPattern, PatternError> {
        let regex = compile(pattern)?;
        // The regex crate parses with these settings too; a pattern it compiled parses here.
        let min_len = regex_syntax::ParserBuilder::new()
            .nest_limit(REGEX_NEST_LIMIT)
            .build()
            .parse(pattern)
            .ok()
            .and_then(|hir| hir.properties().minimum_len())
            .unwrap_or(0);
        Ok(SearchPattern { regex, min_len })
    }

    pub fn regex(&self) -> &Regex {
        &self.regex
    }

    /// The length in bytes of the shortest text the pattern can match.
    pub fn min_len(&self) -> usize {
        self.min_len
    }
}

thread_local! {
    /// This thread's copies of the task regexes it has run ([`with_thread_copy`]).
    static THREAD_COPIES: RefCell<Vec<Regex>> = const { RefCell::new(Vec::new()) };
}

/// How many task regexes a thread keeps copies of.
const THREAD_COPY_LIMIT: usize = 16;

/// Runs `f` with this thread's own copy of `regex`, made on first use and kept for later
/// calls. Why: a `Regex` shared between threads hands out its match cache (the lazy DFA's
/// learned states) through a shared pool, and a fresh clone per batch relearns them every
/// batch. Copies are found by pattern text; every task pattern is compiled with the same
/// settings ([`compile`]), so equal text means an equal regex.
pub fn with_thread_copy<R>(regex: &Regex, f: impl FnOnce(&Regex) -> R) -> R {
    THREAD_COPIES.with(|copies| {
        let Ok(mut copies) = copies.try_borrow_mut() else {
            // Called from inside `f` (not done today): a private copy is still correct.
            return f(&regex.clone());
        };
        let i = match copies.iter().position(|c| c.as_str() == regex.as_str()) {
            Some(i) => i,
            None => {
                if copies.len() == THREAD_COPY_LIMIT {
                    copies.remove(0);
                }
                copies.push(regex.clone());
                copies.len() - 1
            }
        };
        f(&copies[i])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn patterns_over_the_size_limit_are_too_large_and_fail_fast() {
        for p in [
            r"(?:a{1000}){1000}",
            r"\w{5000}",
            r"(?:\w{100}){100}",
            "a{10000000}",
        ] {
            let t = Instant::now();
            assert_eq!(compile(p).unwrap_err(), PatternError::TooLarge, "{p}");
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{p}: {:?}",
                t.elapsed()
            );
        }
        assert_eq!(
            PatternError::TooLarge.to_string(),
            "the pattern is too large: compiled, it exceeds the size limit of 1 MiB"
        );
    }

    #[test]
    fn ordinary_patterns_compile() {
        for p in [
            r"(?i)answer: (\d+)",
            r"#### (\-?[0-9.,]+)",
            r"[A-D]\)",
            r"\w{20}",
            r"[A-Za-z0-9_]{5000}",
            r".{1000}",
        ] {
            assert!(compile(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn syntax_errors_give_the_parser_reason() {
        assert_eq!(
            compile("(unclosed").unwrap_err(),
            PatternError::Syntax("unclosed group".into())
        );
        let deep = "(".repeat(100) + &")".repeat(100);
        assert!(matches!(compile(&deep), Err(PatternError::Syntax(m)) if m.contains("nest")));
    }
}
