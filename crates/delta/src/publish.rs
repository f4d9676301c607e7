//! Publishing a run: its staged files become data files of the `scores`, `metrics` and
//! `confusion` tables (one commit per table), then its rows go into `runs` (one commit).
//!
//! Order and what a failure leaves:
//! - Every table's schema is checked against the run's files before anything is written: a
//!   column whose type changed is an error and the root is untouched.
//! - The data files are uploaded (a rename for a local root), then the data tables commit,
//!   at once. A failed commit deletes the files of the tables it did not commit.
//! - `runs` commits last. A process killed between the data tables' commits and the `runs`
//!   commit leaves data-table rows of a run id that `runs` does not list: a reader joining
//!   through `runs` never counts them. The next publish of the same run id replaces them
//!   (each data table's commit removes every earlier file of that run id), and any publish
//!   removes those of other run ids once they are older than [`ORPHAN_AGE_MS`] (a publish
//!   takes seconds, so no live run's files are that old).
//!
//! Concurrency: appends of different runs to one table are blind appends, which delta-rs's
//! conflict check lets through (its commit retries at the next version; the log entry is
//! written create-only, `If-None-Match: *` in object storage). A commit that does conflict
//! (two runs creating a table, or both changing its schema) is redone from a fresh snapshot,
//! up to [`ATTEMPTS`] times.

use crate::files::{self, folder_value, Footer};
use crate::root::DeltaRoot;
use crate::runs::{self, RunRow};
use crate::schema::{self, DATA_PARTITIONS};
use crate::DeltaError;
use deltalake_core::kernel::transaction::{CommitBuilder, CommitProperties, TransactionError};
use deltalake_core::kernel::{Action, Add, MetadataExt, StructField, StructType};
use deltalake_core::operations::create::CreateBuilder;
use deltalake_core::protocol::{DeltaOperation, SaveMode};
use deltalake_core::{DeltaTable, DeltaTableError, TableProperty};
use evalscore_storage::block_on;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The data tables, in commit order.
pub const DATA_TABLES: [&str; 3] = ["scores", "metrics", "confusion"];
/// The table of runs, committed last.
pub const RUNS_TABLE: &str = "runs";
/// The partition column of `runs`.
const RUNS_PARTITIONS: [&str; 1] = ["run_id"];
/// How often a conflicting commit is redone from a fresh snapshot.
pub const ATTEMPTS: usize = 10;
/// The tables' `delta.checkpointInterval`.
pub const CHECKPOINT_INTERVAL: &str = "10";
/// Data-table files of a run id that `runs` does not list, older than this, are removed by
/// the next publish into the table: 24 hours.
pub const ORPHAN_AGE_MS: i64 = 24 * 3600 * 1000;

/// A task's staged outputs: the folder holding its scores.parquet, metrics.parquet,
/// confusion.parquet, metrics.json and run.json.
#[derive(Debug, Clone)]
pub struct TaskFiles {
    pub task: String,
    pub dir: PathBuf,
}

/// A task of the run that failed (a suite with `--keep-going`): a `runs` row with status
/// `failed`, no data.
#[derive(Debug, Clone)]
pub struct TaskFailure {
    pub task: String,
    pub error: String,
}

/// One file to add to a table.
struct DataFile {
    local: PathBuf,
    rel: String,
    add: Add,
}

impl DeltaRoot {
    /// Refuses a run id that `runs` lists already, unless `overwrite`.
    pub fn check_run(&self, run_id: &str, overwrite: bool) -> Result<(), DeltaError> {
        if overwrite {
            return Ok(());
        }
        block_on(async {
            if self.has_run(run_id).await? {
                return Err(DeltaError::RunExists {
                    root: self.shown.clone(),
                    run_id: run_id.to_owned(),
                });
            }
            Ok(())
        })
    }

    async fn has_run(&self, run_id: &str) -> Result<bool, DeltaError> {
        match self.load(RUNS_TABLE).await? {
            None => Ok(false),
            Some(t) => Ok(!run_files(&t, run_id)?.is_empty()),
        }
    }

    /// Publishes a run's tasks (see the module docs). `scratch` is a local folder for the
    /// rewritten small files.
    pub fn publish(
        &self,
        run_id: &str,
        tasks: &[TaskFiles],
        failed: &[TaskFailure],
        overwrite: bool,
        scratch: &Path,
    ) -> Result<(), DeltaError> {
        // Uploads block on the storage runtime themselves; the table calls are run on it here.
        // Each table is loaded once (at once); a commit reloads it only to retry.
        let names = [DATA_TABLES[0], DATA_TABLES[1], DATA_TABLES[2], RUNS_TABLE];
        let mut loaded: Vec<Option<DeltaTable>> = block_on(futures::future::try_join_all(
            names.iter().map(|t| self.load(t)),
        ))?;
        let runs_table = loaded.pop().flatten();
        let had_run = match &runs_table {
            Some(t) => !run_files(t, run_id)?.is_empty(),
            None => false,
        };
        if had_run && !overwrite {
            return Err(DeltaError::RunExists {
                root: self.shown.clone(),
                run_id: run_id.to_owned(),
            });
        }
        // Every table's files and schema, checked before anything is written.
        let mut plans: Vec<(&str, Vec<StructField>, Vec<DataFile>)> = Vec::new();
        for table in DATA_TABLES {
            let mut fields: Vec<StructField> = Vec::new();
            let mut data = Vec::new();
            for t in tasks {
                let (local, footer) = self.staged(table, t, scratch)?;
                let f =
                    schema::delta_fields(&footer.schema, &DATA_PARTITIONS, (&self.shown, table))?;
                fields = union(fields, &f, (&self.shown, table))?;
                data.push(data_file(table, run_id, Some(&t.task), local, &footer)?);
            }
            plans.push((table, fields, data));
        }
        for ((table, fields, _), t) in plans.iter().zip(&loaded) {
            if let Some(t) = t {
                self.check_table(t, table, fields, &DATA_PARTITIONS)?;
            }
        }
        let rows = run_rows(tasks, failed)?;
        let runs_batch = runs::batch(&rows)?;
        let runs_local = scratch.join("runs.parquet");
        files::write(&runs_batch, &runs_local)?;
        let runs_fields = schema::delta_fields(
            &runs_batch.schema(),
            &RUNS_PARTITIONS,
            (&self.shown, RUNS_TABLE),
        )?;
        if let Some(t) = &runs_table {
            self.check_table(t, RUNS_TABLE, &runs_fields, &RUNS_PARTITIONS)?;
        }
        let footer = files::footer(&runs_local)?;
        let runs_file = data_file(RUNS_TABLE, run_id, None, runs_local, &footer)?;

        // Upload, then commit table by table; `runs` last.
        let mut pending: Vec<String> = Vec::new();
        let result = (|| {
            for (_, _, data) in &plans {
                for d in data {
                    self.put_file(&d.local, &d.rel)?;
                    pending.push(d.rel.clone());
                }
            }
            self.put_file(&runs_file.local, &runs_file.rel)?;
            pending.push(runs_file.rel.clone());
            // The data tables commit at once: each is all or nothing on its own, and `runs`
            // waits for all of them.
            let listed = self.listed_runs(runs_table.as_ref())?;
            let commits = plans.iter().zip(loaded).map(|((table, fields, data), t)| {
                let adds: Vec<Add> = data.iter().map(|d| d.add.clone()).collect();
                self.commit(
                    t,
                    table,
                    fields,
                    &DATA_PARTITIONS,
                    adds,
                    run_id,
                    true,
                    Some(&listed),
                )
            });
            let results = block_on(futures::future::join_all(commits));
            let mut first_error = None;
            for ((_, _, data), result) in plans.iter().zip(results) {
                match result {
                    Ok(()) => {
                        let committed: HashSet<&str> =
                            data.iter().map(|d| d.rel.as_str()).collect();
                        pending.retain(|p| !committed.contains(p.as_str()));
                    }
                    Err(e) => first_error = first_error.or(Some(e)),
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
            crash_point();
            block_on(self.commit(
                runs_table,
                RUNS_TABLE,
                &runs_fields,
                &RUNS_PARTITIONS,
                vec![runs_file.add.clone()],
                run_id,
                had_run,
                None,
            ))?;
            pending.clear();
            Ok::<(), DeltaError>(())
        })();
        for rel in &pending {
            self.delete_file(rel);
        }
        result
    }

    /// The local file of `table` for task `t`: scores.parquet as staged; metrics.parquet and
    /// confusion.parquet rewritten into `scratch` without `run_id`.
    fn staged(
        &self,
        table: &str,
        t: &TaskFiles,
        scratch: &Path,
    ) -> Result<(PathBuf, Footer), DeltaError> {
        let from = t.dir.join(format!("{table}.parquet"));
        if table == "scores" {
            let footer = files::footer(&from)?;
            return Ok((from, footer));
        }
        let to = scratch.join(format!("{}-{table}.parquet", folder_value(&t.task)));
        let footer = files::rewrite(&from, &to, &["run_id"])?;
        Ok((to, footer))
    }

    /// Refuses `fields` that table `t`'s schema cannot take, and a table partitioned
    /// otherwise; gives the merged schema when `fields` add columns.
    fn check_table(
        &self,
        t: &DeltaTable,
        table: &str,
        fields: &[StructField],
        partitions: &[&str],
    ) -> Result<Option<Vec<StructField>>, DeltaError> {
        let snap = t
            .snapshot()
            .map_err(|e| self.delta_error(table, "read", e))?;
        check_partitions(
            &self.shown,
            table,
            snap.metadata().partition_columns(),
            partitions,
        )?;
        schema::merge(&snap.schema(), fields, (&self.shown, table))
    }

    /// Commits `adds` to `table`, creating it if needed, with the merged schema; with
    /// `replace`, every earlier file of `run_id` is removed in the same commit. Other files
    /// of run ids that `runs` does not list, older than [`ORPHAN_AGE_MS`], go too.
    #[allow(clippy::too_many_arguments)]
    async fn commit(
        &self,
        preloaded: Option<DeltaTable>,
        table: &str,
        fields: &[StructField],
        partitions: &[&str],
        adds: Vec<Add>,
        run_id: &str,
        replace: bool,
        listed: Option<&HashSet<String>>,
    ) -> Result<(), DeltaError> {
        let mut preloaded = Some(preloaded);
        for _ in 0..ATTEMPTS {
            let current = match preloaded.take() {
                Some(t) => t,
                None => self.load(table).await?,
            };
            let result = match current {
                None => CreateBuilder::new()
                    .with_log_store(self.unloaded(table).log_store())
                    .with_columns(fields.to_vec())
                    .with_partition_columns(partitions.iter().map(|p| p.to_string()))
                    .with_actions(adds.iter().cloned().map(Action::Add))
                    .with_save_mode(SaveMode::ErrorIfExists)
                    // A checkpoint every 10 versions: a nightly append reads the last
                    // checkpoint and at most 9 commits, whatever the table's age.
                    .with_configuration_property(
                        TableProperty::CheckpointInterval,
                        Some(CHECKPOINT_INTERVAL),
                    )
                    .await
                    .map(drop),
                Some(t) => {
                    let actions = self.actions(
                        &t, table, fields, partitions, &adds, run_id, replace, listed,
                    )?;
                    let removes = actions.iter().any(|a| matches!(a, Action::Remove(_)));
                    let op = DeltaOperation::Write {
                        mode: if removes {
                            SaveMode::Overwrite
                        } else {
                            SaveMode::Append
                        },
                        partition_by: Some(partitions.iter().map(|p| p.to_string()).collect()),
                        predicate: removes
                            .then(|| format!("run_id = '{}'", run_id.replace('\'', "''"))),
                    };
                    let snap = t
                        .snapshot()
                        .map_err(|e| self.delta_error(table, "read", e))?;
                    // The default properties: a checkpoint every `delta.checkpointInterval`
                    // (100) versions, so that loading a table does not replay all its log.
                    CommitBuilder::from(CommitProperties::default())
                        .with_actions(actions)
                        .build(Some(snap), t.log_store(), op)
                        .await
                        .map(drop)
                }
            };
            match result {
                Ok(()) => return Ok(()),
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(self.delta_error(table, "commit to", e)),
            }
        }
        Err(DeltaError::Contended {
            root: self.shown.clone(),
            table: table.to_owned(),
            attempts: ATTEMPTS,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn actions(
        &self,
        t: &DeltaTable,
        table: &str,
        fields: &[StructField],
        partitions: &[&str],
        adds: &[Add],
        run_id: &str,
        replace: bool,
        listed: Option<&HashSet<String>>,
    ) -> Result<Vec<Action>, DeltaError> {
        let merged = self.check_table(t, table, fields, partitions)?;
        let snap = t
            .snapshot()
            .map_err(|e| self.delta_error(table, "read", e))?;
        let mut actions = Vec::new();
        if let Some(merged) = merged {
            let st = StructType::try_new(merged)
                .map_err(|e| self.delta_error(table, "change the schema of", e.into()))?;
            let m = snap
                .metadata()
                .clone()
                .with_schema(&st)
                .map_err(|e| self.delta_error(table, "change the schema of", e.into()))?;
            actions.push(Action::Metadata(m));
        }
        let now = chrono::Utc::now().timestamp_millis();
        for f in snap.log_data().iter() {
            let values = f.partition_values_map();
            let id = values.get("run_id").cloned().flatten();
            let same = id.as_deref() == Some(run_id);
            let orphan = listed.is_some_and(|l| id.as_ref().is_some_and(|i| !l.contains(i)))
                && now - f.modification_time() > ORPHAN_AGE_MS;
            if (same && replace) || orphan {
                actions.push(Action::Remove(f.remove_action(true)));
            }
        }
        actions.extend(adds.iter().cloned().map(Action::Add));
        Ok(actions)
    }

    /// The run ids `runs` lists.
    fn listed_runs(&self, runs: Option<&DeltaTable>) -> Result<HashSet<String>, DeltaError> {
        let Some(t) = runs else {
            return Ok(HashSet::new());
        };
        let snap = t
            .snapshot()
            .map_err(|e| self.delta_error(RUNS_TABLE, "read", e))?;
        Ok(snap
            .log_data()
            .iter()
            .filter_map(|f| f.partition_values_map().get("run_id").cloned().flatten())
            .collect())
    }
}

/// The files of `run_id` in `t`, as paths relative to the table.
pub(crate) fn run_files(
    t: &DeltaTable,
    run_id: &str,
) -> Result<Vec<(Option<String>, String)>, DeltaError> {
    let snap = t.snapshot().map_err(|e| DeltaError::NotARoot {
        root: t.table_url().to_string(),
        message: e.to_string(),
    })?;
    Ok(snap
        .log_data()
        .iter()
        .filter_map(|f| {
            let v = f.partition_values_map();
            (v.get("run_id").cloned().flatten().as_deref() == Some(run_id))
                .then(|| (v.get("task").cloned().flatten(), f.path().to_string()))
        })
        .collect())
}

fn check_partitions(
    root: &str,
    table: &str,
    have: &[String],
    want: &[&str],
) -> Result<(), DeltaError> {
    if have.iter().map(String::as_str).eq(want.iter().copied()) {
        return Ok(());
    }
    Err(DeltaError::NotARoot {
        root: root.to_owned(),
        message: format!(
            "the `{table}` table is partitioned by [{}], not [{}] as evalscore writes it: it was not made by evalscore",
            have.join(", "),
            want.join(", ")
        ),
    })
}

/// The union of two tasks' fields for one table.
fn union(
    mut acc: Vec<StructField>,
    more: &[StructField],
    at: (&str, &str),
) -> Result<Vec<StructField>, DeltaError> {
    if acc.is_empty() {
        return Ok(more.to_vec());
    }
    let st = StructType::try_new(acc.clone())
        .map_err(|e| DeltaError::Parquet(at.1.into(), e.to_string()))?;
    if let Some(merged) = schema::merge(&st, more, at)? {
        acc = merged;
    }
    Ok(acc)
}

/// A data file's place in `table` and its add action.
fn data_file(
    table: &str,
    run_id: &str,
    task: Option<&str>,
    local: PathBuf,
    footer: &Footer,
) -> Result<DataFile, DeltaError> {
    let size = std::fs::metadata(&local)
        .map_err(|e| DeltaError::io(&local, "read", e))?
        .len() as i64;
    let mut dir = format!("run_id={}", folder_value(run_id));
    let mut partition_values = std::collections::HashMap::new();
    partition_values.insert("run_id".to_owned(), Some(run_id.to_owned()));
    if let Some(task) = task {
        dir.push_str(&format!("/task={}", folder_value(task)));
        partition_values.insert("task".to_owned(), Some(task.to_owned()));
    }
    let name = format!(
        "{dir}/part-00000-{}-c000.zstd.parquet",
        uuid::Uuid::new_v4()
    );
    Ok(DataFile {
        local,
        rel: format!("{table}/{name}"),
        add: Add {
            path: name,
            partition_values,
            size,
            modification_time: chrono::Utc::now().timestamp_millis(),
            data_change: true,
            stats: Some(serde_json::json!({ "numRecords": footer.rows }).to_string()),
            ..Default::default()
        },
    })
}

/// The `runs` rows: each task's from its run.json and metrics.json, then the failed ones.
fn run_rows(tasks: &[TaskFiles], failed: &[TaskFailure]) -> Result<Vec<RunRow>, DeltaError> {
    let read = |p: PathBuf| std::fs::read_to_string(&p).map_err(|e| DeltaError::io(&p, "read", e));
    let mut rows = Vec::new();
    for t in tasks {
        let run_json = read(t.dir.join("run.json"))?;
        let metrics_json = read(t.dir.join("metrics.json"))?;
        let v: serde_json::Value = serde_json::from_str(&run_json)
            .map_err(|e| DeltaError::Parquet(t.dir.join("run.json"), e.to_string()))?;
        let time = |k: &str| v.get(k).and_then(|x| x.as_str()).and_then(runs::micros);
        rows.push(RunRow {
            task: t.task.clone(),
            status: "succeeded",
            error: None,
            started_at: time("started_at"),
            finished_at: time("finished_at"),
            run_json: Some(run_json),
            metrics_json: Some(metrics_json),
        });
    }
    let now = chrono::Utc::now().timestamp_micros();
    rows.extend(failed.iter().map(|f| RunRow {
        task: f.task.clone(),
        status: "failed",
        error: Some(f.error.clone()),
        run_json: None,
        metrics_json: None,
        started_at: None,
        finished_at: Some(now),
    }));
    Ok(rows)
}

/// The tests' stand-in for a process killed between the data tables' commits and the `runs`
/// commit: debug builds abort here when `EVALSCORE_TEST_ABORT_BEFORE_RUNS` is set.
fn crash_point() {
    if cfg!(debug_assertions) && std::env::var_os("EVALSCORE_TEST_ABORT_BEFORE_RUNS").is_some() {
        std::process::abort();
    }
}

/// A commit that lost to another writer: redone from a fresh snapshot.
fn is_conflict(e: &DeltaTableError) -> bool {
    match e {
        DeltaTableError::VersionAlreadyExists(_) => true,
        DeltaTableError::Transaction { source } => matches!(
            source,
            TransactionError::VersionAlreadyExists(_)
                | TransactionError::CommitConflict(_)
                | TransactionError::MaxCommitAttempts(_)
        ),
        DeltaTableError::GenericError { source } => source.to_string().contains("already exists"),
        _ => false,
    }
}
