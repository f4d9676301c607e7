//! Engine errors as Python exceptions: `EvalscoreError` and a subclass for each kind of
//! [`ErrorKind`] a user can act on, carrying the CLI's text and its parts.

use evalscore_engine::{Error, ErrorKind};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _evalscore,
    EvalscoreError,
    PyException,
    "An evalscore error: the CLI's message, `Caused by:` lines and hint."
);
create_exception!(
    _evalscore,
    TaskError,
    EvalscoreError,
    "The task: YAML, options, templates, the columns it names."
);
create_exception!(
    _evalscore,
    InputError,
    EvalscoreError,
    "An input: unreadable, damaged, another schema."
);
create_exception!(
    _evalscore,
    DataError,
    EvalscoreError,
    "A row's data that a scorer cannot use."
);
create_exception!(
    _evalscore,
    OutputError,
    EvalscoreError,
    "The output folder or its files."
);

/// The text the CLI prints (`evalscore_engine::render`) without its `error: ` lead-in and its
/// last newline: the message, each cause on a `  Caused by:` line, then the `hint:` line.
fn render(e: &Error) -> String {
    let text = evalscore_engine::render(e);
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    text.strip_suffix('\n').unwrap_or(text).to_owned()
}

/// An engine error as the Python exception of its kind, with `message`, `causes` and `hint`
/// attributes.
pub(crate) fn py_err(e: Error) -> PyErr {
    let text = render(&e);
    let err = match e.kind {
        ErrorKind::Task => TaskError::new_err(text),
        ErrorKind::Input => InputError::new_err(text),
        ErrorKind::Data => DataError::new_err(text),
        ErrorKind::Output => OutputError::new_err(text),
        _ => EvalscoreError::new_err(text),
    };
    Python::attach(|py| {
        let v = err.value(py);
        // Attributes of a fresh exception instance: setting them cannot fail in practice, and
        // if it did the exception still carries the whole text.
        let _ = v.setattr("message", &e.message);
        let _ = v.setattr("causes", e.causes());
        let _ = v.setattr("hint", e.hint.clone());
    });
    err
}

pub(crate) fn internal(e: impl std::fmt::Display) -> PyErr {
    py_err(Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal))
}
