//! The command line: clap's structs for every command and option.

use crate::key_value::{parse_label, parse_set};
use clap::{Parser, Subcommand};
use evalscore_engine::RowErrorLimit;
use std::path::PathBuf;

/// Score LLM evaluation results stored in Parquet or JSONL with declarative scorers.
#[derive(Debug, Parser)]
#[command(name = "evalscore", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score every input row with the task's scorers and write scores and metrics to --out.
    Run(RunArgs),
    /// The judge-model reply cache.
    #[command(subcommand)]
    Judge(JudgeCommand),
    /// Compare two runs row by row: paired differences, intervals, p-values and verdicts in
    /// DIR/compare.parquet and DIR/compare.json; exit 1 when --max-drop's gate fails.
    Compare(CompareArgs),
    /// Write a self-contained HTML report of a run (and of its comparison with --baseline).
    Report(ReportArgs),
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline run's --out folder, or a suite's (every task both suites scored is
    /// compared); or, with --base and --new, the root of the Delta tables (`run --format
    /// delta`) that hold both runs.
    pub base: PathBuf,
    /// The new run's --out folder, or a suite's (not with --base and --new).
    #[arg(required_unless_present = "base_run", conflicts_with = "base_run")]
    pub new: Option<PathBuf>,
    /// With a Delta table root: the baseline run's `run_id`.
    #[arg(long = "base", value_name = "RUN_ID", requires = "new_run")]
    pub base_run: Option<String>,
    /// With a Delta table root: the new run's `run_id`.
    #[arg(long = "new", value_name = "RUN_ID", requires = "base_run")]
    pub new_run: Option<String>,
    /// The folder that receives compare.parquet and compare.json.
    #[arg(long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// The kept columns that pair the rows of the two runs.
    #[arg(
        long = "key",
        value_name = "COL[,COL]",
        value_delimiter = ',',
        default_value = "id"
    )]
    pub key: Vec<String>,
    /// A kept column whose values group correlated rows: cluster-robust standard errors.
    #[arg(long = "cluster", value_name = "COL")]
    pub cluster: Option<String>,
    /// A kept column: every comparison again per value of it.
    #[arg(long = "group-by", value_name = "COL")]
    pub group_by: Option<String>,
    /// The confidence of the intervals; p < 1 − C is significant.
    #[arg(long = "confidence", value_name = "C", default_value_t = 0.95)]
    pub confidence: f64,
    /// Turns the gate on: exit 1 when a significant drop is larger than X.
    #[arg(long = "max-drop", value_name = "X")]
    pub max_drop: Option<f64>,
    /// Replace outputs already in --out.
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run's --out folder, or a suite's (one section per task); or, with --run-id, the
    /// root of its Delta tables.
    pub run: PathBuf,
    /// A baseline run's --out folder (a suite's for a suite): adds the comparison (forest
    /// plot, flipped rows).
    #[arg(
        long = "baseline",
        value_name = "BASE_DIR",
        conflicts_with = "baseline_run_id"
    )]
    pub baseline: Option<PathBuf>,
    /// With a Delta table root: the run's `run_id`.
    #[arg(long = "run-id", value_name = "RUN_ID")]
    pub run_id: Option<String>,
    /// With a Delta table root: the baseline run's `run_id` (adds the comparison).
    #[arg(long = "baseline-run-id", value_name = "RUN_ID", requires = "run_id")]
    pub baseline_run_id: Option<String>,
    /// The kept columns that pair the rows with the baseline.
    #[arg(
        long = "key",
        value_name = "COL[,COL]",
        value_delimiter = ',',
        default_value = "id"
    )]
    pub key: Vec<String>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Store an OpenAI Batch API output file (JSONL) in the judge cache: each successful
    /// line's reply under its `custom_id`; failed lines are counted and left out.
    Import {
        /// The Batch API output file.
        results: PathBuf,
        /// The cache: a SQLite file (default: $XDG_CACHE_HOME/evalscore/judge.sqlite, else
        /// ~/.cache/evalscore/judge.sqlite), or a shared cache (an s3/gs/az prefix, or a
        /// folder: a path ending in `/`), to which the replies are uploaded as one segment.
        #[arg(long = "cache", value_name = "PATH|URL")]
        cache: Option<PathBuf>,
        /// An object storage setting of a shared cache (e.g. `aws_endpoint=http://...`);
        /// repeatable. Never printed.
        #[arg(long = "storage-option", value_name = "KEY=VALUE")]
        storage_options: Vec<String>,
    },
    /// Write every judge request of TASK over the inputs that the cache does not hold, as
    /// OpenAI Batch API input files (`custom_id` = the cache key), at most 50,000 a file:
    /// --out first, then NAME.2.jsonl, NAME.3.jsonl, ...
    Export(ExportArgs),
    /// A shared judge cache (an object-storage prefix or a shared folder): its figures, or
    /// its small segments merged.
    #[command(subcommand)]
    Cache(SharedCacheCommand),
}

#[derive(Debug, Subcommand)]
pub enum SharedCacheCommand {
    /// Count the segments, replies and bytes of a shared cache (reads every segment's index,
    /// no reply).
    Stats(SharedCacheArgs),
    /// Merge the small segments of a shared cache into larger ones; each merged segment is
    /// written before the ones it merges are removed, so every reply stays reachable.
    Compact(SharedCacheArgs),
}

#[derive(Debug, clap::Args)]
pub struct SharedCacheArgs {
    /// The shared cache: `s3://BUCKET/PREFIX/`, `gs://...`, `az://...`, `abfss://...`, or a
    /// local folder.
    #[arg(value_name = "URL")]
    pub url: PathBuf,
    /// An object storage setting over the environment's; repeatable. Never printed.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The task definition (YAML).
    pub task: PathBuf,
    /// A Parquet file, a JSONL file or a directory of Parquet files; repeatable.
    #[arg(long = "input", required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// The first Batch API input file (JSONL).
    #[arg(long = "out", value_name = "FILE")]
    pub out: PathBuf,
    /// Fill or override a `<< config.NAME >>` value; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub sets: Vec<(String, String)>,
    /// The column holding the model output (default: `output`).
    #[arg(long = "output-column", value_name = "COL")]
    pub output_column: Option<String>,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// An object storage setting of a shared cache; repeatable. Never printed.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,
    /// Replace request files already there.
    #[arg(long)]
    pub overwrite: bool,
}

/// Where judge replies are cached.
#[derive(Debug, clap::Args)]
pub struct CacheArgs {
    /// The judge reply cache: a SQLite file (default: $XDG_CACHE_HOME/evalscore/judge.sqlite,
    /// else ~/.cache/evalscore/judge.sqlite), or a shared cache that the default file reads
    /// through: an object-storage prefix (`s3://lake/evalscore/judge-cache/`, gs, az) or a
    /// folder (a path ending in `/`, or an existing directory).
    #[arg(long = "cache", value_name = "PATH|URL", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Use no judge cache: every judge request is sent.
    #[arg(long = "no-cache")]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The cache chosen; `storage_options` are a shared cache's.
    pub fn choice(&self, storage_options: Vec<(String, String)>) -> evalscore_engine::JudgeCache {
        use evalscore_engine::JudgeCache;
        match (&self.cache, self.no_cache) {
            (_, true) => JudgeCache::Off,
            (Some(p), false) => match p.to_str() {
                Some(text) => JudgeCache::parse(text, storage_options),
                None => JudgeCache::Path(p.clone()),
            },
            (None, false) => JudgeCache::Default,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The task definition (YAML), or a suite file (YAML with top-level `tasks:`) that scores
    /// many tasks in one pass, each into DIR/task=NAME/ (docs/suites.md).
    pub task: PathBuf,
    /// A Parquet file, a JSONL file (.jsonl/.ndjson, also .gz/.zst) or a directory of Parquet
    /// files, local or an object storage URL (s3://, gs://, az://, abfss://, https://; a URL
    /// ending in `/` is a prefix of Parquet objects), or a glob such as 'dir/**/*.parquet'
    /// (quoted); repeatable. Required for a task; for a suite, replaces its shared `inputs:`.
    // Not `required` for clap: a suite may name its inputs. `run` asks clap for its own
    // error when a task has none (`args::missing_input`).
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Read a directory or prefix given to --input at any depth (its *.parquet files in byte
    /// order of their paths; names starting with `.` or `_` are skipped), not one level.
    #[arg(long)]
    pub recursive: bool,
    /// Read the `key=value` folders of a tree or glob (`model=m1/day=3/`) as
    /// columns, typed Int64, Date32 or Utf8 from their values; files whose keys differ are
    /// then an error. By default they are read when every file has the same keys.
    #[arg(long, conflicts_with = "no_hive_partitioning")]
    pub hive_partitioning: bool,
    /// Never read `key=value` folders as columns.
    #[arg(long)]
    pub no_hive_partitioning: bool,
    /// Read inputs whose columns differ as one table: the first file's columns, then those
    /// other files add; a column a file lacks is null in its rows, and types widen (integer
    /// widths, integers with floats to Float64, string and list layouts, timestamp units).
    #[arg(long)]
    pub union_by_name: bool,
    /// Read only the input files whose partition columns match EXPR, pruned before their
    /// footers are opened, e.g. `model = 'm1' and day >= 3`: `=`, `!=`, `<`, `<=`, `>`, `>=`,
    /// `in (...)`, `is [not] null`, `and`, `or`, `not`, parentheses; strings quoted, compared
    /// as the column is typed; a null value matches only `is null`. ANDed with the task's
    /// `filter:`.
    #[arg(long = "where", value_name = "EXPR")]
    pub where_filter: Option<String>,
    /// The folder that receives scores.parquet, metrics.parquet, confusion.parquet,
    /// metrics.json and run.json (last); or an s3://, gs://, az:// or abfss:// prefix. With
    /// `--format delta`, the root of the Delta tables the run appends to.
    #[arg(long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// `folder`: five files in --out; `delta`: rows appended to the Delta tables scores/,
    /// metrics/, confusion/ and runs/ under --out (docs/output-format.md).
    #[arg(long = "format", value_name = "FORMAT", default_value = "folder", value_parser = ["folder", "delta"])]
    pub format: String,
    /// Fill or override a `<< config.NAME >>` value; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub sets: Vec<(String, String)>,
    /// Input columns copied to scores.parquet (default: `id` when the input has it).
    #[arg(long = "keep", value_name = "COL[,COL...]", value_delimiter = ',')]
    pub keep: Option<Vec<String>>,
    /// The column holding the model output (default: `output`).
    #[arg(long = "output-column", value_name = "COL")]
    pub output_column: Option<String>,
    /// Worker threads, 1 to 1024 (default: one per core).
    #[arg(long = "threads", value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Replace outputs already in --out.
    #[arg(long)]
    pub overwrite: bool,
    /// Rows whose data a scorer cannot use (an MCQA ground truth that is not one character,
    /// a template that fails on the row) that are scored 0.0 and listed in run.json instead
    /// of stopping the run: a count, or a share of the rows such as `0.1%`.
    #[arg(long = "max-row-errors", value_name = "N|N%", default_value = "0", value_parser = RowErrorLimit::parse)]
    pub max_row_errors: RowErrorLimit,
    /// No progress line and no warnings on stderr.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Send no judge request: model-graded rows are scored from the cache, and a row whose
    /// reply is not cached is a row error.
    #[arg(long)]
    pub offline: bool,
    /// The run's id in the outputs' `run_id` columns (default: a fresh UUIDv7).
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,
    /// A label in the outputs' `labels` column (a JSON object); repeatable.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Also add the `run_id` column to scores.parquet.
    #[arg(long = "run-columns")]
    pub run_columns: bool,
    /// An object storage setting over the environment's (e.g. `aws_endpoint=http://...`,
    /// `aws_region=eu-west-1`, `azure_storage_account_name=...`); repeatable. Never printed.
    // Parsed after clap (`key_value::storage_options`): clap would echo a malformed value.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,
    /// Suites only: a failing task does not stop the others; they are committed, the failure
    /// is recorded in DIR/suite.json, and the exit code is 3.
    #[arg(long = "keep-going")]
    pub keep_going: bool,
}

/// Clap's own error for `evalscore run TASK` without `--input`, as when the option was
/// `required`: the command line parsed again with it required.
pub fn missing_input() -> Option<clap::Error> {
    use clap::CommandFactory;
    Cli::command()
        .mut_subcommand("run", |c| c.mut_arg("inputs", |a| a.required(true)))
        .try_get_matches_from(std::env::args_os())
        .err()
}

impl RunArgs {
    /// `--hive-partitioning`, `--no-hive-partitioning`, or neither.
    pub fn hive_partitioning(&self) -> evalscore_engine::HivePartitioning {
        use evalscore_engine::HivePartitioning;
        match (self.hive_partitioning, self.no_hive_partitioning) {
            (true, _) => HivePartitioning::On,
            (_, true) => HivePartitioning::Off,
            _ => HivePartitioning::Auto,
        }
    }
}
