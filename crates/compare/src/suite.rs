//! Comparing two suites' outputs whole. A suite folder holds `suite.json` (written last) and
//! one `task=NAME/` run folder per task; the tasks both suites scored (status `ok` in their
//! suite.json) are compared one by one exactly as [`crate::compare()`] compares two runs,
//! and the tasks scored on one side only are listed. The result's files are one
//! compare.parquet and one compare.json, each row led by its task.

use crate::compare::{check_options, compare, compare_pair};
use crate::comparison::{CompareOptions, CompareRow, Comparison, PARTITION_ROWS};
use crate::error::{CompareError, SuiteTasks};
use crate::opened::open_pair;
use crate::output::{gate_text, options_json, rows_batch, write_files};
use arrow::record_batch::RecordBatch;
use evalscore_error::Error;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The file a suite writes into its folder after every task.
pub const SUITE_JSON: &str = "suite.json";

/// Whether `dir` holds a suite's output: its suite.json.
pub fn is_suite(dir: &Path) -> bool {
    dir.join(SUITE_JSON).is_file()
}

/// The run folder of task `name` in the suite folder `dir`.
pub fn task_dir(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("task={name}"))
}

/// Whether `name` is a task name a suite accepts (and so a safe folder name): 1 to 128
/// letters, digits, `_`, `-` or `.`, not starting with `.`.
fn task_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The tasks a suite scored (status `ok` in its suite.json), in the suite's order. A task
/// that failed in the suite has no folder, so it counts as absent.
pub fn suite_tasks(dir: &Path) -> Result<Vec<String>, Error> {
    let path = dir.join(SUITE_JSON);
    let text = std::fs::read_to_string(&path).map_err(|source| CompareError::ReadJson {
        path: path.clone(),
        source,
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|source| CompareError::InvalidJson {
        path: path.clone(),
        source,
    })?;
    let bad = |what: String| CompareError::BadSuite {
        path: path.clone(),
        what,
    };
    let Some(tasks) = v["tasks"].as_array() else {
        return Err(bad("no `tasks` list".to_owned()).into());
    };
    let mut names: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let (Some(name), Some(status)) = (t["name"].as_str(), t["status"].as_str()) else {
            return Err(bad(format!("task {} has no `name` or no `status`", i + 1)).into());
        };
        if !task_name(name) {
            return Err(bad(format!(
                "task {}: `{name}` is not a task name (1 to 128 letters, digits, `_`, `-` or `.`, not starting with `.`)",
                i + 1
            ))
            .into());
        }
        if seen.contains(&name) {
            return Err(bad(format!("task `{name}` is listed twice")).into());
        }
        seen.push(name);
        if status == "ok" {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// The tasks of two suites: those both scored (in the base suite's order) and those only
/// one did (each in its suite's order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tasks {
    pub both: Vec<String>,
    pub only_base: Vec<String>,
    pub only_new: Vec<String>,
}

/// Pairs the tasks of the suites in `base` and `new`; no task in common is an error.
pub fn pair_tasks(base: &Path, new: &Path) -> Result<Tasks, Error> {
    let b = suite_tasks(base)?;
    let n = suite_tasks(new)?;
    let tasks = Tasks {
        both: b.iter().filter(|t| n.contains(t)).cloned().collect(),
        only_base: b.iter().filter(|t| !n.contains(t)).cloned().collect(),
        only_new: n.iter().filter(|t| !b.contains(t)).cloned().collect(),
    };
    if tasks.both.is_empty() {
        return Err(CompareError::NoCommonTask {
            base: base.to_path_buf(),
            new: new.to_path_buf(),
            tasks: SuiteTasks::new(&b, &n),
        }
        .into());
    }
    Ok(tasks)
}

/// What two folders hold: two runs, or two suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Runs,
    Suites,
}

/// Whether `base` and `new` are two suites' folders or two runs'. One of each is an error,
/// and so is a folder with `task=NAME` folders but neither suite.json nor scores.parquet
/// (a suite that did not finish). A folder that is neither is left to the run's checks.
pub fn kind(base: &Path, new: &Path) -> Result<Kind, Error> {
    kind_named(base, new, ["base", "new"])
}

/// [`kind`], naming the two folders `names` in its errors.
pub(crate) fn kind_named(base: &Path, new: &Path, names: [&'static str; 2]) -> Result<Kind, Error> {
    match (is_suite(base), is_suite(new)) {
        (true, true) => Ok(Kind::Suites),
        (true, false) | (false, true) => {
            let (suite_side, suite, run_side, run) = if is_suite(base) {
                (names[0], base, names[1], new)
            } else {
                (names[1], new, names[0], base)
            };
            Err(CompareError::SuiteAndRun {
                suite_side,
                suite: suite.to_path_buf(),
                run_side,
                run: run.to_path_buf(),
            }
            .into())
        }
        (false, false) => {
            for (what, dir) in [(names[0], base), (names[1], new)] {
                if !dir.join("scores.parquet").exists() && has_task_folders(dir) {
                    return Err(CompareError::UnfinishedSuite {
                        what,
                        dir: dir.to_path_buf(),
                    }
                    .into());
                }
            }
            Ok(Kind::Runs)
        }
    }
}

fn has_task_folders(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("task=")
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
    })
}

/// One task's comparison within a suite's.
#[derive(Debug)]
pub struct TaskComparison {
    pub task: String,
    /// Its options name the task's two folders.
    pub comparison: Comparison,
}

/// The comparison of two suites: one per task both scored, in the base suite's order.
#[derive(Debug)]
pub struct SuiteComparison {
    /// `base` and `new` are the suites' folders.
    pub options: CompareOptions,
    pub tasks: Vec<TaskComparison>,
    pub only_base_tasks: Vec<String>,
    pub only_new_tasks: Vec<String>,
}

/// A comparison of two runs, or of two suites.
#[derive(Debug)]
pub enum Compared {
    Runs(Comparison),
    Suites(SuiteComparison),
}

/// Compares `o.base` and `o.new`: two runs as [`compare()`] does, two suites as
/// [`compare_suites`] does.
pub fn compare_folders(o: &CompareOptions) -> Result<Compared, Error> {
    check_options(o)?;
    Ok(match kind(&o.base, &o.new)? {
        Kind::Runs => Compared::Runs(compare(o)?),
        Kind::Suites => Compared::Suites(compare_suites(o)?),
    })
}

/// The options of one task's comparison: the suites' options on its two folders.
fn task_options(o: &CompareOptions, task: &str) -> CompareOptions {
    let mut t = o.clone();
    t.base = task_dir(&o.base, task);
    t.new = task_dir(&o.new, task);
    t
}

/// `e` led by the task it happened in, as a suite's run reports a task's error.
pub(crate) fn in_task(task: &str, mut e: Error) -> Error {
    e.message = format!("task `{task}`: {}", e.message);
    e
}

/// Compares every task both suites scored. Each task's figures (Holm's adjustment
/// included) are those of [`compare()`] on the task's two folders. Every task's files are
/// opened and checked (footers, key, group, cluster and score columns) before any row is
/// read; an error names its task.
pub fn compare_suites(o: &CompareOptions) -> Result<SuiteComparison, Error> {
    check_options(o)?;
    let tasks = pair_tasks(&o.base, &o.new)?;
    let mut opened = Vec::with_capacity(tasks.both.len());
    for task in &tasks.both {
        let options = task_options(o, task);
        let pair = open_pair(&options).map_err(|e| in_task(task, e))?;
        opened.push((task, options, pair));
    }
    let mut compared = Vec::with_capacity(opened.len());
    for (task, options, pair) in opened {
        let comparison =
            compare_pair(&options, pair, PARTITION_ROWS).map_err(|e| in_task(task, e))?;
        compared.push(TaskComparison {
            task: task.clone(),
            comparison,
        });
    }
    Ok(SuiteComparison {
        options: o.clone(),
        tasks: compared,
        only_base_tasks: tasks.only_base,
        only_new_tasks: tasks.only_new,
    })
}

/// A row of a suite's compare.json: the task, then the row's fields.
#[derive(Serialize)]
struct TaskRow<'a> {
    task: &'a str,
    #[serde(flatten)]
    row: &'a CompareRow,
}

impl SuiteComparison {
    /// The tasks with a `regressed` verdict, each with the number of such verdicts.
    pub fn regressed_tasks(&self) -> Vec<(&str, usize)> {
        self.tasks
            .iter()
            .filter_map(|t| {
                let n = t
                    .comparison
                    .rows
                    .iter()
                    .filter(|r| r.verdict == "regressed")
                    .count();
                (n > 0).then_some((t.task.as_str(), n))
            })
            .collect()
    }

    /// Whether the gate is on and some task's verdict is `regressed`.
    pub fn gate_failed(&self) -> bool {
        self.tasks.iter().any(|t| t.comparison.gate_failed())
    }

    /// compare.json's content: the options and the gate, per task its folders, gate, row
    /// counts and keys on one side only, the tasks on one side only, and every row with its
    /// task.
    pub fn to_json(&self) -> Value {
        let o = &self.options;
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|t| {
                let c = &t.comparison;
                json!({
                    "task": t.task,
                    "base": c.options.base.display().to_string(),
                    "new": c.options.new.display().to_string(),
                    "gate": gate_text(o.max_drop, c.gate_failed()),
                    "base_rows": c.base_rows,
                    "new_rows": c.new_rows,
                    "only_base_keys": c.only_base_keys,
                    "only_new_keys": c.only_new_keys,
                })
            })
            .collect();
        let rows: Vec<TaskRow> = self
            .tasks
            .iter()
            .flat_map(|t| {
                t.comparison
                    .rows
                    .iter()
                    .map(|row| TaskRow { task: &t.task, row })
            })
            .collect();
        options_json(
            o,
            self.gate_failed(),
            json!({
                "tasks": tasks,
                "regressed_tasks": self.regressed_tasks().iter().map(|(t, _)| *t).collect::<Vec<_>>(),
                "only_base_tasks": self.only_base_tasks,
                "only_new_tasks": self.only_new_tasks,
                "comparisons": rows,
            }),
        )
    }

    /// compare.parquet's content: a run comparison's columns led by `task`.
    pub fn to_batch(&self) -> Result<RecordBatch, Error> {
        let (tasks, rows): (Vec<&str>, Vec<&CompareRow>) = self
            .tasks
            .iter()
            .flat_map(|t| t.comparison.rows.iter().map(|r| (t.task.as_str(), r)))
            .unzip();
        rows_batch(Some(&tasks), &rows)
    }

    /// Writes compare.parquet and compare.json into `out` as [`crate::write`] does.
    pub fn write(&self, out: &Path, overwrite: bool) -> Result<(), Error> {
        write_files(&self.to_batch()?, &self.to_json(), out, overwrite)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn suite(json: &str) -> (tempfile::TempDir, Result<Vec<String>, String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SUITE_JSON), json).unwrap();
        let got = suite_tasks(dir.path()).map_err(|e| e.message);
        (dir, got)
    }

    #[test]
    fn the_tasks_scored_are_those_with_status_ok_in_order() {
        let (_, got) = suite(
            r#"{"tasks": [{"name": "b", "status": "ok"}, {"name": "a", "status": "failed"},
                {"name": "c.v2", "status": "ok"}]}"#,
        );
        assert_eq!(got.unwrap(), ["b", "c.v2"]);
    }

    #[test]
    fn a_suite_json_that_no_suite_writes_is_an_error_naming_it() {
        for (json, what) in [
            (r#"{"run_id": "x"}"#, "no `tasks` list".to_owned()),
            (
                r#"{"tasks": [{"name": "a"}]}"#,
                "task 1 has no `name` or no `status`".to_owned(),
            ),
            (
                r#"{"tasks": [{"name": "a", "status": "ok"}, {"name": "a", "status": "failed"}]}"#,
                "task `a` is listed twice".to_owned(),
            ),
            (
                r#"{"tasks": [{"name": ".hidden", "status": "ok"}]}"#,
                "task 1: `.hidden` is not a task name (1 to 128 letters, digits, `_`, `-` or `.`, not starting with `.`)".to_owned(),
            ),
        ] {
            let (dir, got) = suite(json);
            let path = dir.path().join(SUITE_JSON);
            assert_eq!(got.unwrap_err(), format!("`{}`: {what}", path.display()));
        }
    }

    #[test]
    fn tasks_pair_in_the_base_suite_order() {
        let (b, _) = suite(
            r#"{"tasks": [{"name": "x", "status": "ok"}, {"name": "y", "status": "ok"},
                {"name": "z", "status": "ok"}]}"#,
        );
        let (n, _) = suite(
            r#"{"tasks": [{"name": "w", "status": "ok"}, {"name": "z", "status": "ok"},
                {"name": "x", "status": "ok"}, {"name": "y", "status": "failed"}]}"#,
        );
        assert_eq!(
            pair_tasks(b.path(), n.path()).unwrap(),
            Tasks {
                both: vec!["x".to_owned(), "z".to_owned()],
                only_base: vec!["y".to_owned()],
                only_new: vec!["w".to_owned()],
            }
        );
        assert_eq!(kind(b.path(), n.path()).unwrap(), Kind::Suites);
    }
}
