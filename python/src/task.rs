//! `_Task`: a parsed task, bound to the schema of the data it is given, with the methods the
//! Python package calls (score, merge, finish, run; and for Spark and Ray, judging apart
//! from scoring: module `judge`), and `read_task`.

use crate::convert::{judge_options, plain, plain_schema};
use crate::errors::{internal, py_err};
use crate::functions::functions_of;
use crate::judge::{self, PyJudgeReplies};
use crate::scoring::score_stream;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use evalscore_engine::{
    read_task_file, BindOptions, EngineError, Error, ErrorKind, Functions, JudgeOptions,
    RowErrorLimit, RunOptions, Scorer, States, Task, TaskJudge,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::{PyRecordBatch, PySchema, PyTable};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// How score batches are bound: the library's `BindOptions`, comparable.
#[derive(Debug, Clone, PartialEq)]
struct Binding {
    keep: Option<Vec<String>>,
    output_column: Option<String>,
    max_row_errors: u64,
    judge: JudgeOptions,
}

/// A scorer bound to one input schema, reused while batches keep that schema.
struct BoundScorer {
    schema: SchemaRef,
    binding: Binding,
    scorer: Arc<Scorer>,
}

/// A parsed task and what it was parsed from.
#[pyclass(name = "_Task", module = "evalscore._evalscore", frozen)]
pub(crate) struct PyTask {
    text: String,
    sets: Vec<(String, String)>,
    path: Option<PathBuf>,
    base_dir: Option<PathBuf>,
    task: Task,
    functions: Option<Functions>,
    bound: Mutex<Option<BoundScorer>>,
    /// The judge that sends requests gathered by key (Spark, Ray), for the options it has.
    judge: Mutex<Option<(JudgeOptions, Arc<TaskJudge>)>>,
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
                judge: binding.judge.clone(),
                functions: self.functions.clone(),
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
        judge: JudgeOptions,
    ) -> PyResult<Arc<Scorer>> {
        let binding = Binding {
            keep,
            output_column,
            max_row_errors: 0,
            judge,
        };
        self.scorer(&schema.into_inner(), &binding).map_err(py_err)
    }

    /// The judge of the task's models with `opts`, the last one when they are the same.
    fn task_judge(&self, opts: &JudgeOptions) -> Result<Option<Arc<TaskJudge>>, Error> {
        let mut judge = self.judge.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((o, j)) = judge.as_ref() {
            if o == opts {
                return Ok(Some(Arc::clone(j)));
            }
        }
        let Some(j) = TaskJudge::new(&self.task, opts)? else {
            return Ok(None);
        };
        let j = Arc::new(j);
        *judge = Some((opts.clone(), Arc::clone(&j)));
        Ok(Some(j))
    }

    fn merged(&self, states: &[Vec<u8>]) -> Result<States, Error> {
        let mut total = States::empty(&self.task)?;
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
    Task::from_yaml_in(text, sets, base_dir).map_err(|error| {
        EngineError::Task {
            path: path.map(std::path::Path::to_path_buf),
            error,
        }
        .into()
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
            judge: Mutex::new(None),
        })
    }

    /// The task's warnings (ignored keys, deprecated options).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.task.warnings.clone()
    }

    /// Whether the judge requests of its batches can be listed ahead of scoring
    /// (`Task::lists_judge_requests`): then Spark and Ray send each distinct one once.
    #[getter]
    fn lists_judge_requests(&self) -> bool {
        self.task.lists_judge_requests()
    }

    /// The scorer keys, in task order.
    #[getter]
    fn scorer_keys(&self) -> Vec<String> {
        self.task.scorers.iter().map(|s| s.key.clone()).collect()
    }

    /// Scores every batch of `data` on `threads` threads (0: one per core): (the score table
    /// or None, the merged states as bytes, what each judge model cost meanwhile as JSON).
    #[pyo3(signature = (data, keep, output_column, max_row_errors, want_scores, threads=0, cache=None, offline=false))]
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
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
    ) -> PyResult<(Option<Bound<'py, PyAny>>, Bound<'py, PyBytes>, String)> {
        let binding = Binding {
            keep,
            output_column,
            max_row_errors,
            judge: judge_options(cache, offline)?,
        };
        let reader = data.into_reader()?;
        let schema = reader.schema();
        let scorer = self.scorer(&schema, &binding).map_err(py_err)?;
        let before = scorer.judge_stats();
        let out_schema = want_scores.then(|| plain_schema(&scorer.output_schema()));
        let functions = self.functions.clone();
        let task = &self.task;
        let scoring = Arc::clone(&scorer);
        let result = py.detach(move || {
            score_stream(
                &scoring,
                reader,
                threads,
                want_scores,
                functions.as_deref().map(|f| (task, f)),
            )
        });
        let (batches, states) = result.map_err(py_err)?;
        // A shared judge cache gets the replies this call bought.
        scorer.flush_cache().map_err(py_err)?;
        let bytes = states.to_bytes().map_err(py_err)?;
        let table = match out_schema {
            Some(schema) => Some(PyTable::try_new(batches, schema)?.into_pyarrow(py)?),
            None => None,
        };
        let cost = judge::stats_json(&before, &scorer.judge_stats());
        Ok((table, PyBytes::new(py, &bytes), cost))
    }

    /// Scores one record batch: (its score batch as pyarrow, its states as bytes). With
    /// `replies`, the judge replies are those alone (nothing is sent).
    #[pyo3(signature = (batch, keep, output_column, max_row_errors, cache=None, offline=false, replies=None))]
    #[allow(clippy::too_many_arguments)]
    fn score_batch<'py>(
        &self,
        py: Python<'py>,
        batch: PyRecordBatch,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        max_row_errors: u64,
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
        replies: Option<&Bound<'py, PyJudgeReplies>>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyBytes>)> {
        let batch = batch.into_inner();
        let binding = Binding {
            keep,
            output_column,
            max_row_errors,
            judge: judge_options(cache, offline)?,
        };
        let scorer = self.scorer(&batch.schema(), &binding).map_err(py_err)?;
        let replies = replies.map(|r| Arc::clone(&r.get().replies));
        let (scores, states) = py
            .detach(move || {
                let (scores, states) = match &replies {
                    Some(r) => scorer.score_with_replies(&batch, r)?,
                    None => scorer.score(&batch)?,
                };
                Ok::<_, Error>((plain(scores)?, states.to_bytes()?))
            })
            .map_err(py_err)?;
        Ok((
            PyRecordBatch::new(scores).into_pyarrow(py)?,
            PyBytes::new(py, &states),
        ))
    }

    /// The schema of the score batches for input `schema`.
    #[pyo3(signature = (schema, keep, output_column, cache=None, offline=false))]
    fn output_schema<'py>(
        &self,
        py: Python<'py>,
        schema: PySchema,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let judge = judge_options(cache, offline)?;
        let scorer = self.schema_scorer(schema, keep, output_column, judge)?;
        PySchema::new(plain_schema(&scorer.output_schema())).into_pyarrow(py)
    }

    /// The columns of input `schema` that the task reads, in schema order.
    #[pyo3(signature = (schema, keep, output_column, cache=None, offline=false))]
    fn input_columns<'py>(
        &self,
        schema: PySchema,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
    ) -> PyResult<Vec<String>> {
        let judge = judge_options(cache, offline)?;
        let scorer = self.schema_scorer(schema, keep, output_column, judge)?;
        Ok(scorer.input_columns().to_vec())
    }

    /// The judge requests of one record batch, distinct by key: rows `model_key`, `key`,
    /// `request` (JSON text) and `n` (the rows asking it), as pyarrow.
    #[pyo3(signature = (batch, keep, output_column, cache=None, offline=false))]
    fn judge_requests<'py>(
        &self,
        py: Python<'py>,
        batch: PyRecordBatch,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = batch.into_inner();
        let binding = Binding {
            keep,
            output_column,
            max_row_errors: 0,
            judge: judge_options(cache, offline)?,
        };
        let scorer = self.scorer(&batch.schema(), &binding).map_err(py_err)?;
        let rows = py
            .detach(move || judge::requests_batch(scorer.judge_requests(&batch)?))
            .map_err(py_err)?;
        PyRecordBatch::new(rows).into_pyarrow(py)
    }

    /// Sends the requests of `batch` (rows as `judge_requests` makes them), each once:
    /// (their replies as pyarrow rows `key`, `content`, `prompt_tokens`, `completion_tokens`,
    /// `error`, `attempts`; what each model cost, as JSON).
    #[pyo3(signature = (batch, cache=None, offline=false))]
    fn send_judge_requests<'py>(
        &self,
        py: Python<'py>,
        batch: PyRecordBatch,
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
    ) -> PyResult<(Bound<'py, PyAny>, String)> {
        let batch = batch.into_inner();
        let opts = judge_options(cache, offline)?;
        let sender = self.task_judge(&opts).map_err(py_err)?;
        let (replies, cost) = py
            .detach(move || {
                let requests = judge::read_requests(&batch)?;
                let keys: Vec<String> = requests.iter().map(|(_, r)| r.key()).collect();
                let Some(sender) = sender else {
                    return judge::replies_batch(&[], Vec::new()).map(|b| (b, "{}".to_owned()));
                };
                let before = sender.stats();
                let replies = sender.send(&requests)?;
                let cost = judge::stats_json(&before, &sender.stats());
                Ok::<_, Error>((judge::replies_batch(&keys, replies)?, cost))
            })
            .map_err(py_err)?;
        Ok((PyRecordBatch::new(replies).into_pyarrow(py)?, cost))
    }

    /// Replies (rows as `send_judge_requests` gives them, any number of batches) held for
    /// `score_batch(..., replies=...)`.
    fn judge_replies(&self, py: Python<'_>, data: AnyRecordBatch) -> PyResult<PyJudgeReplies> {
        let batches = data
            .into_reader()?
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        py.detach(|| judge::judge_replies(&self.task, &batches))
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
        let report = total
            .report(&self.task, allow_row_errors, self.functions.as_deref())
            .map_err(py_err)?;
        let json = total
            .metrics_json(&self.task, &report, allow_row_errors)
            .map_err(py_err)?;
        let metrics = report.metrics_batch().map_err(py_err)?;
        let confusion = report.confusion_batch().map_err(py_err)?;
        let table = |b: RecordBatch, py| {
            let schema = b.schema();
            PyTable::try_new(vec![b], schema)?.into_pyarrow(py)
        };
        let text = serde_json::to_string(&json).map_err(internal)?;
        Ok((table(metrics, py)?, table(confusion, py)?, text))
    }

    /// The CLI's `evalscore run`: the five files in `out` (or, with `format="delta"`, rows
    /// in the Delta tables under `out`). Returns the rows scored.
    /// `recursive`, `hive_partitioning` (`None`: when every file has the same keys) and
    /// `where_filter` are `--recursive`, `--hive-partitioning` / `--no-hive-partitioning`
    /// and `--where`; `union_by_name` is `--union-by-name`.
    #[pyo3(signature = (inputs, out, keep, output_column, threads, overwrite, max_row_errors, recursive, hive_partitioning, where_filter, union_by_name=false, format="folder", run_id=None, labels=Vec::new(), task_name=None, cache=None, offline=false))]
    #[allow(clippy::too_many_arguments)]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<PathBuf>,
        out: PathBuf,
        keep: Option<Vec<String>>,
        output_column: Option<String>,
        threads: usize,
        overwrite: bool,
        max_row_errors: String,
        recursive: bool,
        hive_partitioning: Option<bool>,
        where_filter: Option<String>,
        union_by_name: bool,
        format: &str,
        run_id: Option<String>,
        labels: Vec<(String, String)>,
        task_name: Option<String>,
        cache: Option<&Bound<'py, PyAny>>,
        offline: bool,
    ) -> PyResult<u64> {
        let format = crate::convert::output_format(format)?;
        let judge = judge_options(cache, offline)?;
        // A task from text has no file name to name it by in a Delta table.
        let task_name = task_name.or_else(|| self.path.is_none().then(|| "task".to_owned()));
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
                    union_by_name,
                    functions,
                    recursive,
                    hive_partitioning: crate::convert::hive_partitioning(hive_partitioning),
                    where_filter,
                    format,
                    run_id,
                    labels,
                    task_name,
                    judge,
                    ..RunOptions::default()
                })
            })
            .map_err(py_err)?;
        Ok(summary.rows)
    }
}

/// A task file's text, read as the CLI reads it (the same errors).
#[pyfunction]
pub(crate) fn read_task(path: PathBuf) -> PyResult<String> {
    read_task_file(&path, false).map_err(|e| py_err(e.into()))
}
