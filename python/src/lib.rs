//! `evalscore._evalscore`: the engine's library API for Python. A task's text and `--set`
//! values make a `_Task`; it binds to the schema of the data it is given (once per schema and
//! options), scores Arrow streams and batches with the GIL released, and merges and finishes
//! metric states as the CLI does. Arrow data crosses through the Arrow PyCapsule interface
//! (pyo3-arrow), so any producer of `__arrow_c_stream__` / `__arrow_c_array__` works and
//! results go back to pyarrow. The Python-facing API is `evalscore/__init__.py`.
//!
//! Modules: [`task`] (the `_Task` class and `read_task`), [`suite`] (`run_suite`), [`scoring`] (a stream of batches
//! scored on several threads), [`judge`] (judging apart from scoring, for Spark and Ray: each
//! distinct request sent once per job), [`functions`] (the task's Python functions),
//! [`convert`] (Arrow data to and from pyarrow, the options that map onto the engine's),
//! [`errors`] (the exception classes).

mod convert;
mod errors;
mod functions;
mod judge;
mod scoring;
mod suite;
mod task;

use errors::{DataError, EvalscoreError, InputError, OutputError, TaskError};
use pyo3::prelude::*;
use task::{read_task, PyTask};

#[pymodule]
fn _evalscore(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyTask>()?;
    m.add_class::<judge::PyJudgeReplies>()?;
    m.add_function(wrap_pyfunction!(read_task, m)?)?;
    m.add_function(wrap_pyfunction!(suite::run_suite, m)?)?;
    m.add("EvalscoreError", py.get_type::<EvalscoreError>())?;
    m.add("TaskError", py.get_type::<TaskError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Lets the benchmarks refuse a debug build (the tests install one into the same venv).
    m.add("_debug_build", cfg!(debug_assertions))?;
    Ok(())
}
