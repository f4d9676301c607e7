//! `--input` as a glob or a folder read at any depth (`--recursive`) over a tree as Spark
//! writes it: which files are scored, in which order, and what is skipped.
#![allow(clippy::unwrap_used)]

use crate::common::*;

/// A case whose `exports/` holds the example QA file four times over three levels, plus a
/// `_SUCCESS` marker, a checksum and a `.hidden` folder that are not read.
fn exports() -> Case {
    let case = Case::quiet();
    let qa = std::fs::read(examples().join("qa.parquet")).unwrap();
    for rel in [
        "exports/model=m1/part-0.parquet",
        "exports/model=m2/part-0.parquet",
        "exports/model=m2/late/part-1.parquet",
        "exports/top.parquet",
        "exports/.hidden/part-9.parquet",
        "exports/model=m1/.part-0.parquet.crc",
    ] {
        let p = case.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &qa).unwrap();
    }
    case.write("exports/_SUCCESS", "");
    std::fs::copy(examples().join("qa.yaml"), case.path("qa.yaml")).unwrap();
    case
}

/// rows_scored and the inputs of run.json of a run in `case` with `args`.
fn scored(case: &Case, args: &[&str], out: &str) -> (u64, Vec<String>) {
    let (code, stdout, err) = case.run_out(args, out);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {err}");
    let run = read_json(&case.path(out).join("run.json"));
    (run["rows_scored"].as_u64().unwrap(), input_paths(&run))
}

#[test]
fn a_glob_scores_every_file_of_the_tree_in_path_order() {
    let case = exports();
    let rows = read_parquet(&examples().join("qa.parquet")).num_rows() as u64;
    let all = [
        "exports/model=m1/part-0.parquet",
        "exports/model=m2/late/part-1.parquet",
        "exports/model=m2/part-0.parquet",
        "exports/top.parquet",
    ];
    let glob = scored(
        &case,
        &["qa.yaml", "--input", "exports/**/*.parquet"],
        "glob",
    );
    assert_eq!(glob, (4 * rows, all.map(str::to_owned).to_vec()));
    let tree = scored(
        &case,
        &["qa.yaml", "--input", "exports", "--recursive"],
        "tree",
    );
    assert_eq!(tree, glob);
    // One level, as without the flag always: only the file directly in the folder.
    let one = scored(&case, &["qa.yaml", "--input", "exports"], "one");
    assert_eq!(one, (rows, vec!["exports/top.parquet".to_owned()]));
    let depth_two = scored(
        &case,
        &["qa.yaml", "--input", "exports/model=*/*.parquet"],
        "two",
    );
    assert_eq!(
        depth_two,
        (2 * rows, vec![all[0].to_owned(), all[2].to_owned()])
    );
}

#[test]
fn a_glob_without_a_match_or_invalid_is_an_error_naming_it() {
    let case = exports();
    let err = case.fails(&["qa.yaml", "--input", "exports/**/*.csv"]);
    assert_eq!(
        err,
        "error: no input file matches `exports/**/*.csv`\n\
         hint: `*` matches within a folder and `**` across folders; names starting with `.` or `_` (`_SUCCESS`, `.hidden`) and `.crc` files are skipped\n"
    );
    case.write("exports/logs/_SUCCESS", "");
    case.write("exports/logs/.hidden/part-0.parquet", "");
    let err = case.fails(&["qa.yaml", "--input", "exports/logs", "--recursive"]);
    assert_eq!(
        err,
        "error: no input file matches `exports/logs/**/*.parquet`\n\
         hint: `--recursive` reads the `*.parquet` files at any depth under the folder or prefix; names starting with `.` or `_` (`_SUCCESS`, `.hidden`) and `.crc` files are skipped\n"
    );
    let err = case.fails(&["qa.yaml", "--input", "exports/model=[m1/*.parquet"]);
    assert_eq!(
        err,
        "error: invalid glob pattern `exports/model=[m1/*.parquet`: unclosed character class; missing ']'\n\
         hint: quote the pattern so the shell leaves it alone; `*` matches within a folder, `**` across folders, `[abc]` one of the characters, `{a,b}` either text\n"
    );
}

/// `--out` inside the tree read: the second run leaves the first run's outputs out of its
/// inputs, with a warning, and scores what the first did; so does a suite, whose tasks'
/// outputs are in `task=NAME/` folders. Another folder's outputs are inputs as any file.
#[test]
fn the_runs_own_outputs_are_not_its_inputs() {
    let case = exports();
    let args = ["qa.yaml", "--input", "exports/**/*.parquet", "--overwrite"];
    let first = scored(&case, &args, "exports/out");
    // Without `--quiet`, which silences warnings.
    let o = evalscore()
        .current_dir(case.path("."))
        .arg("run")
        .args(args)
        .args(["--out", "exports/out"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "warning: left out 3 files of this run's own output folder `exports/out` (scores.parquet, metrics.parquet, confusion.parquet): a run's outputs are not read as its input\n"
    );
    assert_eq!(scored(&case, &args, "exports/out"), first);
    let recursive = [
        "qa.yaml",
        "--input",
        "exports",
        "--recursive",
        "--overwrite",
    ];
    assert_eq!(scored(&case, &recursive, "exports/out"), first);

    std::fs::remove_dir_all(case.path("exports/out")).unwrap();
    case.write(
        "suite.yaml",
        "inputs: [\"exports/**/*.parquet\"]\ntasks:\n  - {name: qa, task: qa.yaml}\n",
    );
    for _ in 0..2 {
        let (code, stdout, err) = case.run_out(&["suite.yaml", "--overwrite"], "exports/s");
        assert_eq!(code, Some(0), "{stdout}{err}");
    }
    let run = read_json(&case.path("exports/s/task=qa/run.json"));
    assert_eq!(
        (run["rows_scored"].as_u64().unwrap(), input_paths(&run)),
        first
    );

    // Outputs in another folder are read as any file (here, refused: another schema).
    let (code, _, err) = case.run_out(&args, "elsewhere");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("have different schemas"), "{err}");
}
