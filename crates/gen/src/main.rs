//! `evalscore-gen`: deterministic generator of inputs for evalscore.
//!
//! * `evalscore-gen synthetic --rows N --out FILE [--row-group-size 1000000] [--seed 42]
//!   [--batch-size 65536] [--profile default]` streams a large zstd Parquet file of
//!   multiple-choice evaluation rows (`id, prompt, output, answer, choices, choices_json,
//!   label_gt, label_pred`). Every row is a pure function of `(seed, id)`, so the
//!   content does not depend on the batch or row group size. `--profile export` shapes
//!   the rows like a real evaluation export (free-text rows, messy outputs and labels).
//! * `evalscore-gen examples --out DIR` writes the small example inputs
//!   (`qa.parquet`, `qa.jsonl`, `mcqa.parquet`, `README.md`) with edge cases on
//!   fixed row ids; the output is byte-for-byte reproducible.
//! * `evalscore-gen judge-server [--port 0] [--delay-ms 0]` serves chat completions on
//!   127.0.0.1 with one fixed classifier reply, for the judge benchmark.
//! * `evalscore-gen inspect FILE [--ids 1,2,3] [--checksum true]` prints a Parquet
//!   file's schema, row groups and, optionally, selected rows by `id` and a
//!   checksum of the content (independent of row group / page layout).
//!
//! No randomness source other than a seeded splitmix64 is used.

mod battles;
mod examples;
mod export;
mod format_floor;
mod judge_server;
mod rng;
mod rows;
mod synthetic;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};

type Error = Box<dyn std::error::Error>;

const USAGE: &str = "usage:
  evalscore-gen synthetic --rows N --out FILE [--row-group-size 1000000] [--seed 42] [--batch-size 65536] [--profile default|export]
  evalscore-gen examples --out DIR
  evalscore-gen inspect FILE [--ids 1,2,3] [--checksum true]
  evalscore-gen read FILE... --columns a,b,c [--threads 2]   (evalscore's reader, no scoring)
  evalscore-gen format-floor PATH... --columns a,b,c [--threads 2] [--hash true]   (open, footer, decompress: no decoding)
  evalscore-gen judge-server [--port 0] [--delay-ms 0]   (an instant OpenAI-compatible judge, for the judge benchmark)";

/// Writer settings shared by all outputs: zstd, fixed `created_by` so the bytes
/// do not depend on the parquet crate version, and a row-count row group limit.
pub(crate) fn writer_props(row_group_size: usize) -> WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by("evalscore-gen".to_string())
        .set_max_row_group_row_count(Some(row_group_size.max(1)))
        .set_max_row_group_bytes(None)
}

/// `--key value` / `--key=value` flags plus positional arguments.
struct Args {
    positional: Vec<String>,
    flags: HashMap<String, String>,
}

impl Args {
    fn parse(args: impl Iterator<Item = String>, allowed: &[&str]) -> Result<Self, Error> {
        let mut positional = Vec::new();
        let mut flags = HashMap::new();
        let mut it = args;
        while let Some(a) = it.next() {
            if let Some(flag) = a.strip_prefix("--") {
                let (key, value) = match flag.split_once('=') {
                    Some((k, v)) => (k.to_string(), v.to_string()),
                    None => {
                        let v = it.next().ok_or_else(|| format!("--{flag} needs a value"))?;
                        (flag.to_string(), v)
                    }
                };
                if !allowed.contains(&key.as_str()) {
                    return Err(format!("unknown option --{key}\n{USAGE}").into());
                }
                flags.insert(key, value);
            } else {
                positional.push(a);
            }
        }
        Ok(Args { positional, flags })
    }

    fn get<T: std::str::FromStr>(&self, key: &str, default: Option<T>) -> Result<T, Error>
    where
        T::Err: std::fmt::Display,
    {
        match (self.flags.get(key), default) {
            (Some(v), _) => v
                .parse()
                .map_err(|e| format!("invalid --{key} {v:?}: {e}").into()),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(format!("missing required --{key}\n{USAGE}").into()),
        }
    }
}

fn inspect(args: &Args) -> Result<(), Error> {
    let [path] = args.positional.as_slice() else {
        return Err(format!("inspect takes one FILE\n{USAGE}").into());
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let meta = builder.metadata().clone();
    println!("file: {path}");
    println!("created_by: {:?}", meta.file_metadata().created_by());
    println!("rows: {}", meta.file_metadata().num_rows());
    let sizes: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
    println!("row groups: {} {:?}", sizes.len(), sizes);
    if let Some(c) = meta.row_groups().first().and_then(|g| g.columns().first()) {
        println!("compression: {:?}", c.compression());
    }
    println!("arrow schema:");
    for f in builder.schema().fields() {
        let null = if f.is_nullable() {
            "nullable"
        } else {
            "not null"
        };
        println!(
            "  {}: {} ({null})",
            f.name(),
            examples::type_name(f.data_type())
        );
    }
    if args.get("checksum", Some(false))? {
        println!(
            "content checksum: {:016x}",
            content_checksum(Path::new(path))?
        );
    }
    if let Some(ids) = args.flags.get("ids") {
        let wanted: Vec<i64> = ids
            .split(',')
            .map(|s| s.trim().parse::<i64>())
            .collect::<Result<_, _>>()?;
        let mut rows: Vec<RecordBatch> = Vec::new();
        for batch in builder.build()? {
            let batch = batch?;
            let id = batch
                .column_by_name("id")
                .and_then(|c| c.as_primitive_opt::<Int64Type>())
                .ok_or("no Int64 id column")?;
            for (i, v) in id.values().iter().enumerate() {
                if wanted.contains(v) {
                    rows.push(batch.slice(i, 1));
                }
            }
        }
        // Debug-format strings so whitespace and control characters are visible.
        for b in &rows {
            let mut cells = Vec::new();
            for (f, c) in b.schema().fields().iter().zip(b.columns()) {
                let v = ArrayFormatter::try_new(c.as_ref(), &FormatOptions::default())?
                    .value(0)
                    .to_string();
                let shown = if c.is_null(0) {
                    "null".to_string()
                } else if matches!(f.data_type(), arrow::datatypes::DataType::Utf8) {
                    format!("{:?}", c.as_string::<i32>().value(0))
                } else {
                    v
                };
                if f.name() != "prompt" && f.name() != "question" {
                    cells.push(format!("{}={shown}", f.name()));
                }
            }
            println!("{}", cells.join(" "));
        }
    }
    Ok(())
}

/// FNV-1a over every displayed value of a Parquet file, row by row (nulls distinct from
/// "null" text), so it does not depend on row group or page layout.
fn content_checksum(path: &Path) -> Result<u64, Error> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let opts = FormatOptions::default().with_null("\u{0}NULL");
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?.build()?;
    for batch in reader {
        let batch = batch?;
        let fmts = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<Result<Vec<_>, _>>()?;
        let mut buf = String::new();
        for row in 0..batch.num_rows() {
            for f in &fmts {
                buf.clear();
                write!(buf, "{}\u{1}", f.value(row))?;
                for b in buf.bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
    }
    Ok(h)
}

/// The read-only floor of the benchmark: evalscore's own reader (same projection, same
/// parallel row-group scan, strings as views) over `--columns`, with no scorer, no metric and
/// no output. Prints the row count.
fn read_floor(args: &Args) -> Result<(), Error> {
    let columns: String = args.get("columns", None)?;
    let columns: Vec<String> = columns.split(',').map(|c| c.trim().to_owned()).collect();
    let threads: usize = args.get("threads", Some(2))?;
    let paths: Vec<PathBuf> = args.positional.iter().map(PathBuf::from).collect();
    let inputs = evalscore_reader::Inputs::open(&paths)?;
    let mut rows = 0u64;
    evalscore_reader::scan_ordered(
        &inputs.units(),
        threads,
        |unit| {
            let mut n = 0u64;
            inputs.read_unit(unit, &columns, |b| {
                n += b.num_rows() as u64;
                Ok(())
            })?;
            Ok::<u64, evalscore_reader::ReadError>(n)
        },
        |n| {
            rows += n;
            Ok(())
        },
    )?;
    println!("{rows}");
    Ok(())
}

fn main() -> Result<(), Error> {
    let mut argv = std::env::args().skip(1);
    let cmd = argv.next().unwrap_or_default();
    match cmd.as_str() {
        "synthetic" => {
            let args = Args::parse(
                argv,
                &[
                    "rows",
                    "out",
                    "row-group-size",
                    "seed",
                    "batch-size",
                    "profile",
                ],
            )?;
            let opts = synthetic::Options {
                rows: args.get("rows", None)?,
                row_group_size: args.get("row-group-size", Some(1_000_000))?,
                batch_size: args.get("batch-size", Some(65_536))?,
                seed: args.get("seed", Some(42))?,
                profile: args.get("profile", Some(synthetic::Profile::Default))?,
            };
            let out: PathBuf = args.get("out", None)?;
            synthetic::run(&opts, &out)
        }
        "examples" => {
            let args = Args::parse(argv, &["out"])?;
            let out: PathBuf = args.get("out", None)?;
            examples::run(&out)
        }
        "inspect" => inspect(&Args::parse(argv, &["ids", "checksum"])?),
        "read" => read_floor(&Args::parse(argv, &["columns", "threads"])?),
        "format-floor" => {
            let args = Args::parse(argv, &["columns", "threads", "hash"])?;
            let columns: String = args.get("columns", None)?;
            let columns: Vec<String> = columns.split(',').map(|c| c.trim().to_owned()).collect();
            let paths: Vec<PathBuf> = args.positional.iter().map(PathBuf::from).collect();
            format_floor::run(
                &paths,
                &columns,
                args.get("threads", Some(2))?,
                args.get("hash", Some(false))?,
            )
            .map_err(|e| e as Error)
        }
        "judge-server" => {
            let args = Args::parse(argv, &["port", "delay-ms"])?;
            judge_server::serve(
                args.get("port", Some(0))?,
                std::time::Duration::from_millis(args.get("delay-ms", Some(0))?),
            )
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown subcommand {other:?}\n{USAGE}").into()),
    }
}
