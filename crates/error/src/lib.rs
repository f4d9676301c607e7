//! evalscore's error, shared by every crate above it, and its one renderer.
//!
//! An [`Error`] says what failed (`message`, naming the file, row and column, or the task
//! line and column), of which [`ErrorKind`], why (its chain of causes: typed errors kept as
//! they are, reached through `std::error::Error::source`), and what the user can do
//! (`hint`, always added with [`Error::with_hint`]).
//!
//! Each crate keeps its own typed errors (`thiserror` enums with `#[source]`) and turns them
//! into an [`Error`] at its boundary: by implementing [`Diagnostic`] (kind and hint of each
//! variant), which gives `From<TheirError> for Error`, so `?` converts. [`render`] prints an
//! error the one way the CLI and the Python package show it:
//!
//! ```text
//! error: cannot read `runs/a/scores.parquet`
//!   Caused by: Parquet error: EOF: file size of 3 is less than footer
//! hint: pass the `--out` folder of a finished `evalscore run`
//! ```

mod file_kind;
mod suggest;
pub use file_kind::file_kind;
pub use suggest::did_you_mean;

use std::error::Error as StdError;
use std::fmt;

/// A typed error of any crate, as an [`Error`] holds it in its chain.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// What kind of failure an [`Error`] is, for callers that act on it (the CLI's exit code, the
/// Python package's exception class).
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
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped the run.
    Interrupted,
    /// Anything else (bad arguments, library misuse).
    Other,
}

/// A command failed: what, why (the chain of causes) and what to do.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    pub kind: ErrorKind,
    pub hint: Option<String>,
    /// The first cause; each cause's `source()` is the next. When `typed_head`, it is the
    /// typed error this one was made from (its text is `message`) and the causes start below it.
    source: Option<BoxError>,
    typed_head: bool,
}

/// A crate's typed error that knows its [`ErrorKind`] and hint: `?` turns it into an
/// [`Error`] whose message is its text, kept typed at the head of the chain (see
/// [`Error::downcast_ref`]), its `#[source]`s below.
pub trait Diagnostic: StdError + Send + Sync + 'static {
    fn kind(&self) -> ErrorKind;

    /// What the user can do about it.
    fn hint(&self) -> Option<String> {
        None
    }
}

impl<E: Diagnostic> From<E> for Error {
    fn from(e: E) -> Error {
        Error {
            message: e.to_string(),
            kind: Diagnostic::kind(&e),
            hint: Diagnostic::hint(&e),
            source: Some(Box::new(e)),
            typed_head: true,
        }
    }
}

/// A link of an [`Error`]'s chain that is only text ([`Error::caused_by`],
/// [`Error::source_from`]).
#[derive(Debug)]
pub struct Cause {
    message: String,
    next: Option<BoxError>,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for Cause {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.next.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        let first = self.source.as_deref()?;
        if self.typed_head {
            first.source()
        } else {
            Some(first)
        }
    }
}

impl Error {
    /// An error of kind [`ErrorKind::Other`] until [`Error::kind`] says otherwise.
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            kind: ErrorKind::Other,
            hint: None,
            source: None,
            typed_head: false,
        }
    }

    /// This error as one of `kind`.
    pub fn kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// What the user can do; replaces an earlier hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds the typed error `e` (and its own causes) at the end of the chain, kept as it is.
    pub fn with_source(mut self, e: impl Into<BoxError>) -> Self {
        self.append(e.into());
        self
    }

    /// Adds a cause that is only text at the end of the chain.
    pub fn caused_by(mut self, cause: impl Into<String>) -> Self {
        self.append(Box::new(Cause {
            message: cause.into(),
            next: None,
        }));
        self
    }

    /// Adds the text of `e` and of each of its causes at the end of the chain: for an error
    /// that is only borrowed; an owned one is kept typed by [`Error::with_source`].
    pub fn source_from(mut self, e: &(dyn StdError + 'static)) -> Self {
        if let Some(copy) = text_chain(Some(e)) {
            self.append(copy);
        }
        self
    }

    /// The causes' texts, first to last, as [`render`] prints them. A cause whose text ends
    /// the line before it is left out: many errors print their source inside their own text
    /// (parquet's `External: {source}`) and also return it from `source()`.
    pub fn causes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut next = StdError::source(self);
        while let Some(e) = next {
            let text = e.to_string();
            if !out.last().unwrap_or(&self.message).ends_with(&text) {
                out.push(text);
            }
            next = e.source();
        }
        out
    }

    /// The first error of type `T` in the chain, the typed error this one was made from
    /// included (for example the `std::io::Error` behind a failed write).
    pub fn downcast_ref<T: StdError + 'static>(&self) -> Option<&T> {
        let mut next = self
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static));
        while let Some(e) = next {
            if let Some(t) = e.downcast_ref::<T>() {
                return Some(t);
            }
            next = e.source();
        }
        None
    }

    /// Puts `link` at the end of the chain. A typed error's own chain cannot be extended, so a
    /// typed error that ends the chain becomes text first (same words, same order).
    fn append(&mut self, link: BoxError) {
        if self.typed_head {
            self.typed_head = false;
            let below = self.source.take();
            self.source = below.and_then(|head| text_chain(head.source()));
        }
        append(&mut self.source, link);
    }
}

fn append(slot: &mut Option<BoxError>, link: BoxError) {
    let Some(first) = slot else {
        *slot = Some(link);
        return;
    };
    if let Some(cause) = first.downcast_mut::<Cause>() {
        return append(&mut cause.next, link);
    }
    if let Some(typed) = slot.take() {
        *slot = text_chain(Some(typed.as_ref()));
    }
    append(slot, link);
}

/// The texts of `first` and its causes, as a chain of [`Cause`]s.
fn text_chain(first: Option<&(dyn StdError + 'static)>) -> Option<BoxError> {
    let mut texts = Vec::new();
    let mut next = first;
    while let Some(e) = next {
        texts.push(e.to_string());
        next = e.source();
    }
    texts.into_iter().rev().fold(None, |next, message| {
        Some(Box::new(Cause { message, next }) as BoxError)
    })
}

/// An error and its sources on one line (`a: b: c`), without repeating a source whose text
/// the error's own already shows: for messages built from other libraries' errors.
pub fn chain_text(e: &dyn StdError) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = s.source();
    }
    text
}

/// The error as the CLI prints it on stderr: `error: MESSAGE`, one `  Caused by: CAUSE` line
/// per cause, then `hint: HINT`, each line ending in a newline. The Python package's
/// exceptions carry the same text without the `error: ` lead-in and the last newline.
/// Control characters in it (a file name's ESC, CR or newline) are shown escaped
/// ([`printable`]), so that no message moves the terminal's cursor or forges a line.
pub fn render(e: &Error) -> String {
    let mut s = format!("error: {}\n", printable(&e.message));
    for c in e.causes() {
        s.push_str(&format!("  Caused by: {}\n", printable(&c.to_string())));
    }
    if let Some(h) = &e.hint {
        s.push_str(&format!("hint: {}\n", printable(h)));
    }
    s
}

/// `text` with its control characters escaped as Rust escapes them (`\u{1b}`, `\r`, `\n`);
/// a tab stays. For what is printed on a terminal: file names may hold anything.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Io(std::io::Error);

    impl fmt::Display for Io {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("cannot open `a.parquet`")
        }
    }

    impl StdError for Io {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    impl Diagnostic for Io {
        fn kind(&self) -> ErrorKind {
            ErrorKind::Input
        }
        fn hint(&self) -> Option<String> {
            Some("check the path".to_owned())
        }
    }

    fn denied() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied")
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        let e =
            Error::new("cannot read `x\u{1b}[2J\u{1b}[31mred\nline\r.parquet`").with_hint("a\tb");
        assert_eq!(
            render(&e),
            "error: cannot read `x\\u{1b}[2J\\u{1b}[31mred\\nline\\r.parquet`\nhint: a\tb\n"
        );
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn render_prints_message_causes_and_hint() {
        let e = Error::new("cannot read `x`")
            .kind(ErrorKind::Input)
            .caused_by("first")
            .caused_by("second")
            .with_hint("do this");
        assert_eq!(
            render(&e),
            "error: cannot read `x`\n  Caused by: first\n  Caused by: second\nhint: do this\n"
        );
        assert_eq!(render(&Error::new("plain")), "error: plain\n");
        assert_eq!(e.causes(), ["first", "second"]);
        assert_eq!(e.to_string(), "cannot read `x`");
    }

    #[test]
    fn a_typed_source_stays_typed_and_is_rendered_with_its_causes() {
        let e = Error::new("cannot write `out`")
            .kind(ErrorKind::Output)
            .caused_by("while staging")
            .with_source(Io(denied()));
        assert_eq!(
            render(&e),
            "error: cannot write `out`\n  Caused by: while staging\n  Caused by: cannot open `a.parquet`\n  Caused by: permission denied\n"
        );
        assert_eq!(
            e.downcast_ref::<std::io::Error>().map(|io| io.kind()),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        assert!(e.downcast_ref::<Io>().is_some());
    }

    #[test]
    fn a_diagnostic_becomes_the_head_with_its_kind_hint_and_sources() {
        let e: Error = Io(denied()).into();
        assert_eq!(e.kind, ErrorKind::Input);
        assert_eq!(
            render(&e),
            "error: cannot open `a.parquet`\n  Caused by: permission denied\nhint: check the path\n"
        );
        assert!(e.downcast_ref::<Io>().is_some());
        // A cause added after a typed chain keeps every text, in order.
        let e = e.caused_by("later");
        assert_eq!(e.causes(), ["permission denied", "later"]);
        assert_eq!(e.message, "cannot open `a.parquet`");
    }

    #[test]
    fn a_cause_repeating_the_end_of_the_line_before_is_left_out() {
        let io = std::io::Error::other("No space left on device (os error 28)");
        let e = Error::new("cannot write `out/scores.parquet`")
            .with_source(parquet::External(Box::new(io)))
            .caused_by("No space left on device (os error 28)")
            .caused_by("after");
        assert_eq!(
            e.causes(),
            ["External: No space left on device (os error 28)", "after"]
        );
    }

    /// A stand-in for `parquet::errors::ParquetError::External`: its text holds its source's.
    mod parquet {
        use super::*;

        #[derive(Debug)]
        pub struct External(pub BoxError);

        impl fmt::Display for External {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "External: {}", self.0)
            }
        }

        impl StdError for External {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(self.0.as_ref())
            }
        }
    }

    #[test]
    fn source_from_copies_a_borrowed_chain() {
        let io = denied();
        let e = Error::new("m").source_from(&Io(io)).with_hint("h");
        assert_eq!(e.causes(), ["cannot open `a.parquet`", "permission denied"]);
        assert_eq!(e.hint.as_deref(), Some("h"));
        let e = e.with_source(std::io::Error::other("disk gone"));
        assert_eq!(
            e.causes(),
            ["cannot open `a.parquet`", "permission denied", "disk gone"]
        );
        assert!(e.downcast_ref::<std::io::Error>().is_some());
    }
}
