//! `run_suite`: the CLI's `evalscore run SUITE.yaml` for Python. Returns suite.json's text
//! (as written, also into object storage).

use crate::errors::py_err;
use evalscore_engine::{Error, ErrorKind, RowErrorLimit, RunOptions, SuiteOptions};
use pyo3::prelude::*;
use std::path::PathBuf;

/// Runs a suite file into `out`: each task into `out/task=NAME/`, `out/suite.json` last.
/// Raises the first failing task's error unless `keep_going`; returns suite.json's text.
#[pyfunction]
/// `recursive`, `hive_partitioning`, `where_filter` and `union_by_name` are as for a task's
/// run, and apply to every task's inputs; `cache` and `offline` to every task's judge.
#[pyo3(signature = (path, out, inputs, labels, sets, keep, output_column, threads, overwrite, max_row_errors, keep_going, run_id, recursive=false, hive_partitioning=None, where_filter=None, union_by_name=false, format="folder", cache=None, offline=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_suite<'py>(
    py: Python<'py>,
    path: PathBuf,
    out: PathBuf,
    inputs: Vec<PathBuf>,
    labels: Vec<(String, String)>,
    sets: Vec<(String, String)>,
    keep: Option<Vec<String>>,
    output_column: Option<String>,
    threads: usize,
    overwrite: bool,
    max_row_errors: String,
    keep_going: bool,
    run_id: Option<String>,
    recursive: bool,
    hive_partitioning: Option<bool>,
    where_filter: Option<String>,
    union_by_name: bool,
    format: &str,
    cache: Option<&Bound<'py, PyAny>>,
    offline: bool,
) -> PyResult<String> {
    let format = crate::convert::output_format(format)?;
    let judge = crate::convert::judge_options(cache, offline)?;
    let limit = RowErrorLimit::parse(&max_row_errors)
        .map_err(|m| py_err(Error::new(format!("max_row_errors: {m}")).kind(ErrorKind::Other)))?;
    // RunOptions holds callbacks that are not Send: it is built on the detached thread.
    py.detach(move || {
        let summary = evalscore_engine::run_suite(SuiteOptions {
            run: RunOptions {
                task: path,
                inputs,
                out_dir: out,
                sets,
                keep,
                output_column,
                threads,
                overwrite,
                max_row_errors: limit,
                run_id,
                labels,
                recursive,
                hive_partitioning: crate::convert::hive_partitioning(hive_partitioning),
                where_filter,
                union_by_name,
                format,
                judge,
                ..RunOptions::default()
            },
            keep_going,
        })?;
        Ok::<_, Error>(summary.suite_json)
    })
    .map_err(py_err)
}
