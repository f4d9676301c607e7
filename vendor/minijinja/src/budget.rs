//! A per-thread byte budget for what a render or an expression builds (an evalscore patch).
//!
//! Fuel bounds the steps of a template, not its memory: a few steps (`'%0999999999d' |
//! format(1)`, a string concatenated with itself twenty times) can build gigabytes. Inside
//! [`with_byte_budget`], every byte the engine writes to its output (captures included), every
//! string it builds by concatenation, repetition or formatting, and every sequence element it
//! adds is charged to the budget first; the first charge that does not fit fails the render
//! with an error, and nothing of that size is allocated. Outside it nothing is charged.

use std::cell::Cell;
use std::fmt;

use crate::error::{Error, ErrorKind};

thread_local! {
    static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
}

/// The detail of the error a render or an evaluation gets when it goes over its budget.
pub const BUDGET_EXCEEDED: &str = "the template built more than its byte budget allows";

/// Runs `f` with a budget of `limit` bytes for this thread; returns its result and whether it
/// went over the budget (whatever error that became on its way out).
pub fn with_byte_budget<R>(limit: usize, f: impl FnOnce() -> R) -> (R, bool) {
    struct Restore(Option<usize>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            LEFT.with(|l| l.set(self.0));
            EXCEEDED.with(|e| e.set(self.1));
        }
    }
    let _restore = Restore(
        LEFT.with(|l| l.replace(Some(limit))),
        EXCEEDED.with(|e| e.replace(false)),
    );
    let rv = f();
    (rv, EXCEEDED.with(Cell::get))
}

/// Charges `n` bytes; an error once the budget cannot pay them.
pub fn charge(n: usize) -> Result<(), Error> {
    if try_charge(n) {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::InvalidOperation, BUDGET_EXCEEDED))
    }
}

/// The bytes left in this thread's budget (`usize::MAX` without one).
pub(crate) fn left() -> usize {
    LEFT.with(Cell::get).unwrap_or(usize::MAX)
}

/// Charges `count` items of `size` bytes each.
pub(crate) fn charge_items(count: usize, size: usize) -> Result<(), Error> {
    charge(count.saturating_mul(size))
}

fn try_charge(n: usize) -> bool {
    LEFT.with(|l| match l.get() {
        None => true,
        Some(left) if n <= left => {
            l.set(Some(left - n));
            true
        }
        Some(_) => {
            l.set(Some(0));
            EXCEEDED.with(|e| e.set(true));
            false
        }
    })
}

/// A [`fmt::Write`] that charges every byte before passing it on.
pub(crate) struct Charged<'a, W: fmt::Write + ?Sized>(pub &'a mut W);

impl<W: fmt::Write + ?Sized> fmt::Write for Charged<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if try_charge(s.len()) {
            self.0.write_str(s)
        } else {
            Err(fmt::Error)
        }
    }

    fn write_char(&mut self, c: char) -> fmt::Result {
        if try_charge(c.len_utf8()) {
            self.0.write_char(c)
        } else {
            Err(fmt::Error)
        }
    }
}

/// Formats `args` into a new string, charging every byte; an error once over the budget.
pub(crate) fn format_charged(args: fmt::Arguments<'_>) -> Result<String, Error> {
    let mut s = String::new();
    match fmt::write(&mut Charged(&mut s), args) {
        Ok(()) => Ok(s),
        Err(_) => Err(Error::new(ErrorKind::InvalidOperation, BUDGET_EXCEEDED)),
    }
}
