//! `evalscore._evalscore`: the engine's library API for Python. A task's text and `--set`
//! values make a `_Task`; it binds to the schema of the data it is given (once per schema and
//! options), scores Arrow streams and batches with the GIL released, and merges and finishes
//! metric states as the CLI does. Arrow data crosses through the Arrow PyCapsule interface
//! (pyo3-arrow), so any producer of `__arrow_c_stream__` / `__arrow_c_array__` works and
//! results go back to pyarrow. The Python-facing API is `evalscore/__init__.py`.

use arrow::array::ArrayRef;
use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Schema, SchemaRef};
use evalscore_engine::{
    library, BindOptions, Error, ErrorExt, ErrorKind, Functions, RowErrorLimit, RunOptions, Scorer,
    States, Task, UserFunctions,
};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::{PyArray, PyRecordBatch, PySchema, PyTable};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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
fn py_err(e: Error) -> PyErr {
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

fn internal(e: impl std::fmt::Display) -> PyErr {
    py_err(Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal))
}

/// The Python callables a task's `custom` scorers and `python` metrics call, by name. Each
/// call takes the GIL (the engine runs with it released) and goes through
/// `evalscore._functions`, which reads results and pickles metric states.
#[derive(Debug)]
struct PyFunctions {
    functions: BTreeMap<String, Py<PyAny>>,
}

impl PyFunctions {
    fn call<T>(
        &self,
        name: &str,
        glue: &str,
        args: impl for<'py> FnOnce(Python<'py>, &Py<PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>>,
        read: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>,
    ) -> Result<T, String> {
        Python::attach(|py| {
            let f = self
                .functions
                .get(name)
                .ok_or_else(|| format!("no function `{name}`"))?;
            let run = || -> PyResult<T> {
                let module = py.import("evalscore._functions")?;
                let args = args(py, f)?;
                let out = module
                    .getattr(glue)?
                    .call1(pyo3::types::PyTuple::new(py, args)?)?;
                read(&out)
            };
            run().map_err(|e| e.to_string())
        })
    }
}

fn to_py<'py>(py: Python<'py>, a: &ArrayRef) -> PyResult<Bound<'py, PyAny>> {
    let array = PyArray::from_array_ref(Arc::clone(a));
    // `to_pyarrow` borrows the wrapper for the token's lifetime; the pyarrow array it makes
    // owns its data, so it outlives the wrapper.
    let out = array.to_pyarrow(py)?.unbind();
    Ok(out.into_bound(py))
}

impl UserFunctions for PyFunctions {
    fn names(&self) -> Vec<String> {
        self.functions.keys().cloned().collect()
    }

    fn score(
        &self,
        name: &str,
        values: &ArrayRef,
        ground_truth: Option<&ArrayRef>,
    ) -> Result<ArrayRef, String> {
        self.call(
            name,
            "score",
            |py, f| {
                let gt = match ground_truth {
                    Some(g) => to_py(py, g)?,
                    None => py.None().into_bound(py),
                };
                Ok(vec![f.bind(py).clone(), to_py(py, values)?, gt])
            },
            |out| Ok(out.extract::<PyArray>()?.into_inner().0),
        )
    }

    fn metric_update(&self, name: &str, values: &ArrayRef) -> Result<Vec<u8>, String> {
        self.call(
            name,
            "metric_update",
            |py, f| Ok(vec![f.bind(py).clone(), to_py(py, values)?]),
            |out| out.extract::<Vec<u8>>(),
        )
    }

    fn metric_merge(&self, name: &str, parts: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        self.call(
            name,
            "metric_merge",
            |py, f| {
                let parts: Vec<Bound<'_, PyBytes>> =
                    parts.iter().map(|p| PyBytes::new(py, p)).collect();
                Ok(vec![
                    f.bind(py).clone(),
                    pyo3::types::PyList::new(py, parts)?.into_any(),
                ])
            },
            |out| out.extract::<Vec<u8>>(),
        )
    }

    fn metric_finish(
        &self,
        name: &str,
        state: &[u8],
    ) -> Result<Vec<(Option<String>, Option<f64>)>, String> {
        self.call(
            name,
            "metric_finish",
            |py, f| Ok(vec![f.bind(py).clone(), PyBytes::new(py, state).into_any()]),
            |out| out.extract::<Vec<(Option<String>, Option<f64>)>>(),
        )
    }
}

/// `functions=`: a mapping of names to callables.
fn functions_of(dict: Option<&Bound<'_, PyDict>>) -> PyResult<Option<Functions>> {
    let Some(dict) = dict else { return Ok(None) };
    let mut functions = BTreeMap::new();
    for (k, v) in dict.iter() {
        let name: String = k.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("functions: the names must be strings")
        })?;
        if !v.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "functions: `{name}` is not callable"
            )));
        }
        functions.insert(name, v.unbind());
    }
    Ok(Some(Arc::new(PyFunctions { functions })))
}

/// How score batches are bound: the library's `BindOptions`, comparable.
#[derive(Debug, Clone, PartialEq)]
struct Binding {
    keep: Option<Vec<String>>,
    output_column: Option<String>,
    max_row_errors: u64,
}

/// A scorer bound to one input schema, reused while batches keep that schema.
struct BoundScorer {
    schema: SchemaRef,
    binding: Binding,
    scorer: Arc<Scorer>,
}

/// A parsed task and what it was parsed from.
#[pyclass(name = "_Task", module = "evalscore._evalscore", frozen)]
struct PyTask {
    text: String,
    sets: Vec<(String, String)>,
    path: Option<PathBuf>,
    base_dir: Option<PathBuf>,
    task: Task,
    functions: Option<Functions>,
    bound: Mutex<Option<BoundScorer>>,
}

impl PyTask {
    fn parse(&self) -> Result<Task, Error> {
        parse(
            &self.text,
            &self.sets,
            self.path.as_deref(),
            self.base_dir.as_deref(),
        )
    }

    /// The scorer for `schema`: the last one when schema and options are the same.
    fn scorer(&self, schema: &SchemaRef, binding: &Binding) -> Result<Arc<Scorer>, Error> {
        let mut bound = self.bound.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = bound.as_ref() {
            if &b.binding == binding && b.schema.as_ref() == schema.as_ref() {
                return Ok(Arc::clone(&b.scorer));
            }
        }
        let scorer = Arc::new(Scorer::new(
            self.parse()?,
            schema,
            &BindOptions {
                keep: binding.keep.clone(),
                output_column: binding.output_column.clone(),
                max_row_errors: binding.max_row_errors,
                functions: self.functions.clone(),
                ..BindOptions::default()
            },
        )?);
        *bound = Some(BoundScorer {
            schema: Arc::clone(schema),
            binding: binding.clone(),
            scorer: Arc::clone(&scorer),
        });
        Ok(scorer)
    }

    /// The scorer for a schema alone (no rows are scored, so no row-error budget).
    fn schema_scorer(
        &self,
        schema: PySchema,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
    ) -> PyResult<Arc<Scorer>> {
        let binding = Binding {
            keep,
            output_column,
            max_row_errors: 0,
        };
        self.scorer(&schema.into_inner(), &binding).map_err(py_err)
    }

    fn merged(&self, states: &[Vec<u8>]) -> Result<States, Error> {
        let mut total = library::empty_states(&self.task);
        for (i, b) in states.iter().enumerate() {
            let s = States::from_bytes(b)
                .map_err(|e| Error::new(format!("states {}: {}", i + 1, e.message)))?;
            total.merge(&s)?;
            if let Some(f) = self.functions.as_deref() {
                total.compact_user(&self.task, f)?;
            }
        }
        Ok(total)
    }
}

fn parse(
    text: &str,
    sets: &[(String, String)],
    path: Option<&std::path::Path>,
    base_dir: Option<&std::path::Path>,
) -> Result<Task, Error> {
    Task::from_yaml_in(text, sets, base_dir).map_err(|t| match path {
        Some(p) => Error::task(p, t),
        None => {
            let e = Error::new(match t.location {
                Some(l) => format!("task, {l}: {}", t.message),
                None => format!("task: {}", t.message),
            })
            .kind(ErrorKind::Task);
            match t.hint {
                Some(h) => e.hint(h),
                None => e,
            }
        }
    })
}

#[pymethods]
impl PyTask {
    /// Parses a task. `path` names the file in messages (as the CLI does); `base_dir` is where
    /// relative paths in the task are found.
    #[new]
    #[pyo3(signature = (text, sets, path=None, base_dir=None, functions=None))]
    fn new(
        text: String,
        sets: Vec<(String, String)>,
        path: Option<PathBuf>,
        base_dir: Option<PathBuf>,
        functions: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let task = parse(&text, &sets, path.as_deref(), base_dir.as_deref()).map_err(py_err)?;
        Ok(PyTask {
            text,
            sets,
            path,
            base_dir,
            task,
            functions: functions_of(functions)?,
            bound: Mutex::new(None),
        })
    }

    /// The task's warnings (ignored keys, deprecated options).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.task.warnings.clone()
    }

    /// The scorer keys, in task order.
    #[getter]
    fn scorer_keys(&self) -> Vec<String> {
        self.task.scorers.iter().map(|s| s.key.clone()).collect()
    }

    /// Scores every batch of `data` on `threads` threads (0: one per core): (the score table
    /// or None, the merged states as bytes).
    #[pyo3(signature = (data, keep, output_column, max_row_errors, want_scores, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn score<'py>(
        &self,
        py: Python<'py>,
        data: AnyRecordBatch,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        max_row_errors: u64,
        want_scores: bool,
        threads: usize,
    ) -> PyResult<(Option<Bound<'py, PyAny>>, Bound<'py, PyBytes>)> {
        let binding = Binding {
            keep,
            output_column,
            max_row_errors,
        };
        let reader = data.into_reader()?;
        let schema = reader.schema();
        let scorer = self.scorer(&schema, &binding).map_err(py_err)?;
        let functions = self.functions.clone();
        let task = &self.task;
        let result = py.detach(move || {
            score_stream(
                &scorer,
                reader,
                threads,
                want_scores,
                functions.as_deref().map(|f| (task, f)),
            )
        });
        let (batches, states) = result.map_err(py_err)?;
        let bytes = states.to_bytes().map_err(py_err)?;
        let table = if want_scores {
            let schema = plain_schema(
                &self
                    .scorer(&schema, &binding)
                    .map_err(py_err)?
                    .output_schema(),
            );
            Some(PyTable::try_new(batches, schema)?.into_pyarrow(py)?)
        } else {
            None
        };
        Ok((table, PyBytes::new(py, &bytes)))
    }

    /// Scores one record batch: (its score batch as pyarrow, its states as bytes).
    #[pyo3(signature = (batch, keep, output_column, max_row_errors))]
    fn score_batch<'py>(
        &self,
        py: Python<'py>,
        batch: PyRecordBatch,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        max_row_errors: u64,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyBytes>)> {
        let batch = batch.into_inner();
        let binding = Binding {
            keep,
            output_column,
            max_row_errors,
        };
        let scorer = self.scorer(&batch.schema(), &binding).map_err(py_err)?;
        let (scores, states) = py
            .detach(move || {
                let (scores, states) = scorer.score(&batch)?;
                Ok::<_, Error>((plain(scores)?, states.to_bytes()?))
            })
            .map_err(py_err)?;
        Ok((
            PyRecordBatch::new(scores).into_pyarrow(py)?,
            PyBytes::new(py, &states),
        ))
    }

    /// The schema of the score batches for input `schema`.
    #[pyo3(signature = (schema, keep, output_column))]
    fn output_schema<'py>(
        &self,
        py: Python<'py>,
        schema: PySchema,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let scorer = self.schema_scorer(schema, keep, output_column)?;
        PySchema::new(plain_schema(&scorer.output_schema())).into_pyarrow(py)
    }

    /// The columns of input `schema` that the task reads, in schema order.
    #[pyo3(signature = (schema, keep, output_column))]
    fn input_columns(
        &self,
        schema: PySchema,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
    ) -> PyResult<Vec<String>> {
        let scorer = self.schema_scorer(schema, keep, output_column)?;
        Ok(scorer.input_columns().to_vec())
    }

    /// Merges serialized states (any order) into one.
    fn merge<'py>(&self, py: Python<'py>, states: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
        let total = self.merged(&states).map_err(py_err)?;
        Ok(PyBytes::new(py, &total.to_bytes().map_err(py_err)?))
    }

    /// The figures of merged states: (metrics, confusion, metrics.json's text).
    fn finish<'py>(
        &self,
        py: Python<'py>,
        states: Vec<Vec<u8>>,
        allow_row_errors: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
        let total = self.merged(&states).map_err(py_err)?;
        let report = library::report(
            &self.task,
            &total,
            allow_row_errors,
            self.functions.as_deref(),
        )
        .map_err(py_err)?;
        let json =
            library::metrics_json(&self.task, &total, &report, allow_row_errors).map_err(py_err)?;
        let metrics = report.metrics_batch().map_err(py_err)?;
        let confusion = report.confusion_batch().map_err(py_err)?;
        let table = |b: RecordBatch, py| {
            let schema = b.schema();
            PyTable::try_new(vec![b], schema)?.into_pyarrow(py)
        };
        let text = serde_json::to_string(&json).map_err(internal)?;
        Ok((table(metrics, py)?, table(confusion, py)?, text))
    }

    /// The CLI's `evalscore run`: the five files in `out`. Returns the rows scored.
    #[pyo3(signature = (inputs, out, keep, output_column, threads, overwrite, max_row_errors))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        inputs: Vec<PathBuf>,
        out: PathBuf,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        threads: usize,
        overwrite: bool,
        max_row_errors: String,
    ) -> PyResult<u64> {
        let limit = RowErrorLimit::parse(&max_row_errors).map_err(|m| {
            py_err(Error::new(format!("max_row_errors: {m}")).kind(ErrorKind::Other))
        })?;
        // A task from text runs from a copy in a temporary file, next to its base folder so
        // that relative paths in it resolve alike.
        let (task_path, _guard) = match &self.path {
            Some(p) => (p.clone(), None),
            None => {
                let mut b = tempfile::Builder::new();
                b.prefix(".evalscore-task-").suffix(".yaml");
                let f = match &self.base_dir {
                    Some(d) => b.tempfile_in(d),
                    None => b.tempfile(),
                }
                .and_then(|f| std::fs::write(f.path(), &self.text).map(|_| f))
                .map_err(|e| {
                    py_err(
                        Error::new("cannot write the task to a temporary file")
                            .caused_by(e.to_string()),
                    )
                })?;
                (f.path().to_path_buf(), Some(f))
            }
        };
        let sets = self.sets.clone();
        let functions = self.functions.clone();
        // RunOptions holds callbacks that are not Send: it is built on the detached thread.
        let summary = py
            .detach(move || {
                evalscore_engine::run(&RunOptions {
                    task: task_path,
                    inputs,
                    out_dir: out,
                    sets,
                    keep,
                    output_column,
                    threads,
                    overwrite,
                    max_row_errors: limit,
                    functions,
                    ..RunOptions::default()
                })
            })
            .map_err(py_err)?;
        Ok(summary.rows)
    }
}

/// Rows of one piece of work: batches are cut to this size, so that a table read as one
/// large chunk still spreads over every thread.
const PIECE_ROWS: usize = 65_536;

/// Scores a stream of batches on `threads` threads: pieces of at most [`PIECE_ROWS`] rows go
/// to the workers as they are read (a bounded number in flight), and their scores and states
/// are taken back in input order, so the result does not depend on the threads. The first
/// failing piece in input order gives the error, its rows counted from the input's start.
/// `user` compacts `python` metrics' states as they are merged.
fn score_stream(
    scorer: &Scorer,
    reader: impl Iterator<Item = Result<RecordBatch, arrow::error::ArrowError>>,
    threads: usize,
    want_scores: bool,
    user: Option<(&Task, &dyn UserFunctions)>,
) -> Result<(Vec<RecordBatch>, States), Error> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    // The first piece that failed: later pieces are not scored; earlier ones are, so the
    // error reported is the first in input order.
    let failed_at = AtomicUsize::new(usize::MAX);
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, u64, RecordBatch)>(threads * 2);
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Result<(RecordBatch, States), Error>)>();
    std::thread::scope(|scope| -> Result<(Vec<RecordBatch>, States), Error> {
        for _ in 0..threads {
            let (work_rx, done_tx, failed_at) = (&work_rx, done_tx.clone(), &failed_at);
            scope.spawn(move || loop {
                let next = work_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((idx, first_row, piece)) = next else {
                    return;
                };
                if idx > failed_at.load(Ordering::Relaxed) {
                    continue;
                }
                let r = scorer.score(&piece).map_err(|mut e| {
                    // The library counts rows within the piece; here they count in the input.
                    e.message = renumber(&e.message, first_row);
                    e
                });
                if r.is_err() {
                    failed_at.fetch_min(idx, Ordering::Relaxed);
                }
                if done_tx.send((idx, r)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut total = scorer.empty_states();
        let mut out = Vec::new();
        let mut pending: BTreeMap<usize, Result<(RecordBatch, States), Error>> = BTreeMap::new();
        let mut next = 0usize;
        let mut first_error: Option<Error> = None;
        // Takes the finished pieces that come next in input order.
        let take = |pending: &mut BTreeMap<usize, _>,
                    next: &mut usize,
                    total: &mut States,
                    out: &mut Vec<RecordBatch>|
         -> Result<(), Error> {
            while let Some(r) = pending.remove(next) {
                *next += 1;
                let (scores, states) = r?;
                total.merge(&states)?;
                if let Some((task, f)) = user {
                    total.compact_user(task, f)?;
                }
                if want_scores {
                    out.push(plain(scores)?);
                }
            }
            Ok(())
        };
        let mut sent = 0usize;
        let mut row = 0u64;
        let mut read_error = None;
        'read: for batch in reader {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    read_error = Some(Error::new("cannot read the input").caused_by(e.to_string()));
                    break;
                }
            };
            let mut offset = 0;
            while offset < batch.num_rows() {
                let len = PIECE_ROWS.min(batch.num_rows() - offset);
                if work_tx.send((sent, row, batch.slice(offset, len))).is_err() {
                    break 'read;
                }
                sent += 1;
                row += len as u64;
                offset += len;
                // Results are taken as they come, so finished pieces do not pile up.
                while let Ok((idx, r)) = done_rx.try_recv() {
                    pending.insert(idx, r);
                }
                if let Err(e) = take(&mut pending, &mut next, &mut total, &mut out) {
                    first_error = Some(e);
                }
                if first_error.is_some() || failed_at.load(Ordering::Relaxed) != usize::MAX {
                    break 'read;
                }
            }
        }
        drop(work_tx);
        while next < sent && first_error.is_none() {
            match done_rx.recv() {
                Ok((idx, r)) => {
                    pending.insert(idx, r);
                }
                Err(_) => break,
            }
            if let Err(e) = take(&mut pending, &mut next, &mut total, &mut out) {
                first_error = Some(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if let Some(e) = read_error {
            return Err(e);
        }
        Ok((out, total))
    })
}

/// `schema` with dictionary columns as their value type: scores.parquet's columns as a reader
/// of the file sees them (the engine encodes `completion_validity` as a dictionary).
fn plain_schema(schema: &SchemaRef) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Dictionary(_, v) => {
                    Arc::new(f.as_ref().clone().with_data_type(v.as_ref().clone()))
                }
                _ => Arc::clone(f),
            })
            .collect::<Vec<_>>(),
    ))
}

/// A score batch in [`plain_schema`].
fn plain(batch: RecordBatch) -> Result<RecordBatch, Error> {
    let schema = plain_schema(&batch.schema());
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| cast(c, f.data_type()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal))?;
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal))
}

/// `row N: ...` counted within a batch, as counted from the start of the input.
fn renumber(message: &str, first_row: u64) -> String {
    if first_row == 0 {
        return message.to_owned();
    }
    let Some(rest) = message.strip_prefix("row ") else {
        return message.to_owned();
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[..digits].parse::<u64>() {
        Ok(n) => format!("row {}{}", n + first_row, &rest[digits..]),
        Err(_) => message.to_owned(),
    }
}

/// A task file's text, read as the CLI reads it (the same errors).
#[pyfunction]
fn read_task(path: PathBuf) -> PyResult<String> {
    match std::fs::metadata(&path) {
        Ok(m) if !m.is_file() => {
            return Err(py_err(
                Error::new(format!(
                    "task file `{}` is not a regular file",
                    path.display()
                ))
                .kind(ErrorKind::Task)
                .hint("point TASK.yaml at a task file"),
            ))
        }
        _ => {}
    }
    std::fs::read_to_string(&path).map_err(|e| {
        py_err(
            Error::new(format!("cannot read task file `{}`", path.display()))
                .caused_by(e.to_string())
                .hint("check the TASK.yaml path"),
        )
    })
}

#[pymodule]
fn _evalscore(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyTask>()?;
    m.add_function(wrap_pyfunction!(read_task, m)?)?;
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
