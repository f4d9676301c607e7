//! The engine's errors are [`evalscore_error::Error`]s (re-exported here, with the renderer):
//! what failed (a message naming the file, row and column, or the task line and column), of
//! which [`ErrorKind`], the chain of causes (`source()`, which the CLI prints as `Caused by:`
//! lines), and what the user can do (`hint`). [`ErrorExt`] adds the constructors from the
//! errors of the crates below the engine; a reader's error, and the judge runtime's, convert
//! with `?`.

pub use evalscore_error::{render, Cause, Error, ErrorKind};
use evalscore_reader::ReadError;
use evalscore_task::TaskError;
use std::path::Path;

/// [`Error`]'s constructors from the task and reader crates' errors, called as
/// `Error::task(path, e)` and `Error::read(e)` where this trait is in scope.
pub trait ErrorExt {
    /// An error in the task file, located by line and column.
    fn task(path: &Path, e: TaskError) -> Error;

    /// An input that could not be read (the same as `Error::from(e)`).
    fn read(e: ReadError) -> Error;
}

impl ErrorExt for Error {
    fn task(path: &Path, e: TaskError) -> Error {
        let at = match e.location {
            Some(l) => format!("task file `{}`, {l}", path.display()),
            None => format!("task file `{}`", path.display()),
        };
        let err = Error::new(format!("{at}: {}", e.message)).kind(ErrorKind::Task);
        match e.hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    }

    fn read(e: ReadError) -> Error {
        Error::from(e)
    }
}
