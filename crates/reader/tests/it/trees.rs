//! Folders read at any depth (`--recursive`) and globs, locally and on a real S3 server
//! (moto): which files are read, in which order, and what is skipped.

use crate::remote::{answers, parquet_of, s3_options};
use evalscore_reader::{Format, Inputs};
use evalscore_test_support::stores::*;
use std::path::{Path, PathBuf};

/// A tree as a Spark job leaves it: its files' paths relative to the tree.
const TREE: [&str; 12] = [
    "a.parquet",
    "b-x.parquet",
    "b/c.parquet",
    "b/d/e.parquet",
    "model=m1/h.parquet",
    "_x=1/k.parquet",
    // Skipped at any depth below the base.
    "_SUCCESS",
    "b/_committed_123",
    "b/.hidden/f.parquet",
    "_temporary/0/g.parquet",
    "b/.c.parquet.crc",
    "_tmp.parquet",
];

/// The Parquet files of [`TREE`] read at any depth, in byte order of their paths (`-` sorts
/// before `/`).
const EVERY_PARQUET: [&str; 6] = [
    "_x=1/k.parquet",
    "a.parquet",
    "b-x.parquet",
    "b/c.parquet",
    "b/d/e.parquet",
    "model=m1/h.parquet",
];

/// The tree in a new temporary folder; every Parquet file's `answer` is its relative path.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for rel in TREE {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let bytes = if rel.ends_with(".parquet") {
            parquet_of(rel)
        } else {
            b"marker".to_vec()
        };
        std::fs::write(p, bytes).unwrap();
    }
    std::fs::write(
        dir.path().join("b/x.jsonl"),
        "{\"answer\": \"b/x.jsonl\"}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not an input").unwrap();
    dir
}

/// The files `input` opens to (recursive or not), as paths relative to `base`.
fn opened(base: &Path, input: &str, recursive: bool) -> Vec<String> {
    let inputs = Inputs::open_tree(&[PathBuf::from(input)], recursive, &[]).unwrap();
    // Every file is read, and holds the rows of the path it was opened as.
    let mut expected = Vec::new();
    let files: Vec<String> = inputs
        .files
        .iter()
        .map(|f| {
            let rel = f.path.strip_prefix(base).unwrap().to_str().unwrap();
            let rows = if f.format == Format::Jsonl { 1 } else { 100 };
            expected.extend(std::iter::repeat_n(rel.to_owned(), rows));
            rel.to_owned()
        })
        .collect();
    assert_eq!(answers(&inputs).unwrap(), expected, "{input}");
    files
}

#[test]
fn a_folder_is_read_one_level_deep_unless_recursive() {
    let dir = tree();
    let base = dir.path();
    let folder = base.to_str().unwrap();
    // As before: the `*.parquet` directly in it, sorted, none skipped.
    assert_eq!(
        opened(base, folder, false),
        ["_tmp.parquet", "a.parquet", "b-x.parquet"]
    );
    // At any depth, in byte order of the path (`-` before `/`), hidden names skipped.
    assert_eq!(opened(base, folder, true), EVERY_PARQUET);
    // A file is a file, recursive or not.
    let one = format!("{folder}/b/c.parquet");
    assert_eq!(opened(base, &one, true), ["b/c.parquet"]);
}

#[test]
fn a_glob_matches_at_the_depths_its_pattern_allows() {
    let dir = tree();
    let base = dir.path();
    let folder = base.to_str().unwrap();
    for (pattern, expected) in [
        ("*.parquet", vec!["a.parquet", "b-x.parquet"]),
        (
            "*/*.parquet",
            vec!["_x=1/k.parquet", "b/c.parquet", "model=m1/h.parquet"],
        ),
        ("b/*/*.parquet", vec!["b/d/e.parquet"]),
        ("**/*.parquet", EVERY_PARQUET.to_vec()),
        ("b/**/*.parquet", vec!["b/c.parquet", "b/d/e.parquet"]),
        ("model=*/*.parquet", vec!["model=m1/h.parquet"]),
        ("{a,b-x}.parquet", vec!["a.parquet", "b-x.parquet"]),
        ("**/*.jsonl", vec!["b/x.jsonl"]),
    ] {
        // `recursive` changes nothing for a glob.
        for recursive in [false, true] {
            let got = opened(base, &format!("{folder}/{pattern}"), recursive);
            assert_eq!(got, expected, "{pattern}");
        }
    }
    // Several inputs: each one's files in order, after those of the inputs before it.
    let inputs = Inputs::open_with(
        &[
            PathBuf::from(format!("{folder}/b/**/*.parquet")),
            PathBuf::from(format!("{folder}/a.parquet")),
        ],
        &[],
    )
    .unwrap();
    let files: Vec<&Path> = inputs
        .files
        .iter()
        .map(|f| f.path.strip_prefix(base).unwrap())
        .collect();
    assert_eq!(
        files,
        [
            Path::new("b/c.parquet"),
            Path::new("b/d/e.parquet"),
            Path::new("a.parquet")
        ]
    );
}

#[test]
fn nothing_matched_is_an_error_naming_the_pattern() {
    let dir = tree();
    let folder = dir.path().to_str().unwrap();
    let open = |input: &str, recursive| {
        Inputs::open_tree(&[PathBuf::from(input)], recursive, &[]).unwrap_err()
    };
    let skipped =
        "names starting with `.` or `_` (`_SUCCESS`, `.hidden`) and `.crc` files are skipped";
    for pattern in ["**/*.csv", "*/f.parquet", "missing/**/*.parquet"] {
        let e = open(&format!("{folder}/{pattern}"), false);
        assert_eq!(
            e.to_string(),
            format!("no input file matches `{folder}/{pattern}`")
        );
        assert_eq!(
            e.hint.unwrap(),
            format!("`*` matches within a folder and `**` across folders; {skipped}")
        );
    }
    // A folder of markers and hidden files only.
    let empty = dir.path().join("logs");
    std::fs::create_dir_all(empty.join(".hidden")).unwrap();
    std::fs::write(empty.join("_SUCCESS"), "").unwrap();
    std::fs::write(empty.join(".hidden/x.parquet"), parquet_of("x")).unwrap();
    let e = open(empty.to_str().unwrap(), true);
    assert_eq!(
        e.to_string(),
        format!("no input file matches `{folder}/logs/**/*.parquet`")
    );
    assert_eq!(
        e.hint.unwrap(),
        format!("`--recursive` reads the `*.parquet` files at any depth under the folder or prefix; {skipped}")
    );
    // Without `--recursive`, a folder's message is as it always was.
    let e = open(empty.to_str().unwrap(), false);
    assert_eq!(
        e.to_string(),
        format!("{folder}/logs: directory holds no Parquet files (*.parquet)")
    );
    let e = open(&format!("{folder}/[b.parquet"), false);
    assert_eq!(
        e.to_string(),
        format!(
            "invalid glob pattern `{folder}/[b.parquet`: unclosed character class; missing ']'"
        )
    );
}

/// The keys of an export as Spark writes it to S3, with its markers.
const KEYS: [&str; 8] = [
    "evals/model=m1/run=r25/part-0.parquet",
    "evals/model=m1/run=r26/part-0.parquet",
    "evals/model=m2/run=r25/part-0.parquet",
    "evals/model=m2/run=q01/part-0.parquet",
    "evals/model=m1/run=r25/_SUCCESS",
    "evals/model=m1/run=r25/.part-0.parquet.crc",
    "evals/model=m1/_temporary/0/part-9.parquet",
    "evals/model=m10/run=r25/part-0.parquet",
];

#[test]
fn a_prefix_is_listed_with_a_glob_or_recursively_on_s3() {
    let server = moto();
    create_bucket(server.port, "lake");
    for key in KEYS {
        put_object(server.port, "lake", key, &parquet_of(key));
    }
    let options = s3_options(server.port);
    let open =
        |input: &str, recursive| Inputs::open_tree(&[PathBuf::from(input)], recursive, &options);
    let urls = |inputs: &Inputs| -> Vec<String> {
        inputs
            .files
            .iter()
            .map(|f| f.path.to_str().unwrap().to_owned())
            .collect()
    };
    let glob = open("s3://lake/evals/model=*/run=r*/*.parquet", false).unwrap();
    assert_eq!(
        urls(&glob),
        [
            "s3://lake/evals/model=m1/run=r25/part-0.parquet",
            "s3://lake/evals/model=m1/run=r26/part-0.parquet",
            "s3://lake/evals/model=m10/run=r25/part-0.parquet",
            "s3://lake/evals/model=m2/run=r25/part-0.parquet",
        ]
    );
    let expected: Vec<String> = [KEYS[0], KEYS[1], KEYS[7], KEYS[2]]
        .iter()
        .flat_map(|k| std::iter::repeat_n((*k).to_owned(), 100))
        .collect();
    assert_eq!(answers(&glob).unwrap(), expected);

    let tree = open("s3://lake/evals/", true).unwrap();
    assert_eq!(
        urls(&tree),
        [
            "s3://lake/evals/model=m1/run=r25/part-0.parquet",
            "s3://lake/evals/model=m1/run=r26/part-0.parquet",
            "s3://lake/evals/model=m10/run=r25/part-0.parquet",
            "s3://lake/evals/model=m2/run=q01/part-0.parquet",
            "s3://lake/evals/model=m2/run=r25/part-0.parquet",
        ]
    );
    // A whole bucket, and a glob at its top.
    let top = open("s3://lake/*/model=m2/*/*.parquet", false).unwrap();
    assert_eq!(
        urls(&top),
        [
            "s3://lake/evals/model=m2/run=q01/part-0.parquet",
            "s3://lake/evals/model=m2/run=r25/part-0.parquet",
        ]
    );
    // Without `--recursive` the prefix is one level, as before: it holds no object itself.
    let e = open("s3://lake/evals/", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "s3://lake/evals/: prefix holds no Parquet files (*.parquet)"
    );
    let e = open("s3://lake/evals/model=m3*/**/*.parquet", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no input file matches `s3://lake/evals/model=m3*/**/*.parquet`"
    );
    let e = open("s3://lake/nothing/", true).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no input file matches `s3://lake/nothing/**/*.parquet`"
    );
}

/// A tree wider than the folders listed at once (`LISTERS`) at each level, with odd keys in
/// two of its folders: every object found, in byte order, and the warnings in order, however
/// the listings of a level finish.
#[test]
fn a_wide_tree_is_listed_in_byte_order() {
    let server = moto();
    create_bucket(server.port, "lake");
    let mut keys = Vec::new();
    for m in 0..evalscore_storage::LISTERS + 8 {
        for d in ["2026-11-01", "2026-11-02"] {
            keys.push(format!("wide/model=m{m}/date={d}/part-0.parquet"));
        }
    }
    for key in &keys {
        put_object(server.port, "lake", key, b"PAR1");
    }
    for odd in [
        "wide/model=m7/date=x//y.parquet",
        "wide/model=m30/date=x//y.parquet",
    ] {
        put_object(server.port, "lake", odd, b"PAR1");
    }
    let options = s3_options(server.port);
    let url = evalscore_storage::StoreUrl::parse("s3://lake/wide/").unwrap();
    let listing = url
        .connect(&options)
        .unwrap()
        .list_tree(|_, _| true)
        .unwrap();
    let found: Vec<&str> = listing.found.iter().map(|(rel, _)| rel.as_str()).collect();
    keys.sort();
    let want: Vec<&str> = keys.iter().map(|k| &k["wide/".len()..]).collect();
    assert_eq!(found, want);
    assert_eq!(listing.skipped, ["model=m30/date=x//", "model=m7/date=x//"]);
}

/// Keys no object path can hold (a `..`, `.` or empty part) under a listed prefix are
/// stepped over, the other objects read, in order. Those that could have been read are
/// named in a warning; a `.` or `..` folder is hidden, so never read, and an empty folder
/// name is not.
#[test]
fn odd_keys_under_a_prefix_are_skipped_with_a_warning() {
    let server = moto();
    create_bucket(server.port, "lake");
    for key in [
        "odd/w/../x.parquet",
        "odd/y.parquet",
        "odd/k/./x.parquet",
        "odd/k/z.parquet",
        "odd/m//x.parquet",
        "odd/..",
        "near/m//x.parquet",
        "near/m/ok.parquet",
        "only/w/../x.parquet",
        "only/m//x.parquet",
    ] {
        put_object(server.port, "lake", key, &parquet_of(key));
    }
    assert_eq!(
        list_keys(server.port, "lake", "odd/"),
        [
            "odd/..",
            "odd/k/./x.parquet",
            "odd/k/z.parquet",
            "odd/m//x.parquet",
            "odd/w/../x.parquet",
            "odd/y.parquet"
        ]
    );
    let options = s3_options(server.port);
    let open =
        |input: &str, recursive| Inputs::open_tree(&[PathBuf::from(input)], recursive, &options);
    let why = "it is not a valid object path (a `.` or `..` part, or an empty one)";
    let warnings = [format!(
        "skipped the objects under `s3://lake/odd/m//`: {why}; rename them to read them"
    )];
    for (input, recursive) in [
        ("s3://lake/odd/**/*.parquet", false),
        ("s3://lake/odd/", true),
    ] {
        let inputs = open(input, recursive).unwrap();
        let files: Vec<&str> = inputs
            .files
            .iter()
            .map(|f| f.path.to_str().unwrap())
            .collect();
        assert_eq!(
            files,
            ["s3://lake/odd/k/z.parquet", "s3://lake/odd/y.parquet"],
            "{input}"
        );
        assert_eq!(inputs.warnings, warnings, "{input}");
        let values: Vec<String> = ["odd/k/z.parquet", "odd/y.parquet"]
            .iter()
            .flat_map(|k| std::iter::repeat_n((*k).to_owned(), 100))
            .collect();
        assert_eq!(answers(&inputs).unwrap(), values);
    }
    // The empty folder directly under the prefix given.
    let e = open("s3://lake/only/m/", true).unwrap_err();
    assert_eq!(
        e.hint.unwrap(),
        format!("`--recursive` reads the `*.parquet` files at any depth under the folder or prefix; names starting with `.` or `_` (`_SUCCESS`, `.hidden`) and `.crc` files are skipped; skipped the objects under `s3://lake/only/m//`: {why}; rename them to read them")
    );
    let beside = open("s3://lake/near/m/", true).unwrap();
    assert_eq!(beside.files.len(), 1);
    assert_eq!(
        beside.warnings,
        [format!(
            "skipped the objects under `s3://lake/near/m//`: {why}; rename them to read them"
        )]
    );
    // One level: no folder is read, so none is reported; nor is `odd/..`, not a Parquet name.
    let flat = open("s3://lake/odd/", false).unwrap();
    assert_eq!(flat.files.len(), 1);
    assert!(flat.warnings.is_empty(), "{:?}", flat.warnings);
    // Nothing else to read: the error says what was skipped.
    let e = open("s3://lake/only/", true).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no input file matches `s3://lake/only/**/*.parquet`"
    );
    assert_eq!(
        e.hint.unwrap(),
        format!("`--recursive` reads the `*.parquet` files at any depth under the folder or prefix; names starting with `.` or `_` (`_SUCCESS`, `.hidden`) and `.crc` files are skipped; skipped the objects under `s3://lake/only/m//`: {why}; rename them to read them")
    );
}

/// A folder's marker object (`data.parquet/`, no bytes, beside a Spark output folder of that
/// name) is the folder: its files are read, the marker is not, whether the folder is given
/// or reached by a recursive listing or a glob.
#[test]
fn a_folder_marker_is_not_a_file() {
    let server = moto();
    create_bucket(server.port, "lake");
    put_object(server.port, "lake", "sp/data.parquet/", b"");
    put_object(server.port, "lake", "sp/", b"");
    for key in ["sp/data.parquet/part-00000.parquet", "sp/top.parquet"] {
        put_object(server.port, "lake", key, &parquet_of(key));
    }
    put_object(server.port, "lake", "sp/data.parquet/_SUCCESS", b"");
    let options = s3_options(server.port);
    let open =
        |input: &str, recursive| Inputs::open_tree(&[PathBuf::from(input)], recursive, &options);
    let paths = |i: &Inputs| -> Vec<String> {
        i.files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    };
    let part = "s3://lake/sp/data.parquet/part-00000.parquet";
    assert_eq!(
        paths(&open("s3://lake/sp/data.parquet/", false).unwrap()),
        [part]
    );
    let both = [part, "s3://lake/sp/top.parquet"];
    assert_eq!(paths(&open("s3://lake/sp/", true).unwrap()), both);
    assert_eq!(
        paths(&open("s3://lake/sp/**/*.parquet", false).unwrap()),
        both
    );
    assert_eq!(
        paths(&open("s3://lake/sp/", false).unwrap()),
        ["s3://lake/sp/top.parquet"]
    );
}

/// A bucket's URL without a key (`s3://bucket`) is its root, as `s3://bucket/`: one level,
/// or every level with `--recursive`.
#[test]
fn a_bucket_alone_is_its_root() {
    let server = moto();
    create_bucket(server.port, "root");
    for key in ["top.parquet", "deep/x.parquet"] {
        put_object(server.port, "root", key, &parquet_of(key));
    }
    let options = s3_options(server.port);
    let open = |recursive| Inputs::open_tree(&[PathBuf::from("s3://root")], recursive, &options);
    let paths = |i: Inputs| -> Vec<String> {
        i.files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    };
    assert_eq!(paths(open(false).unwrap()), ["s3://root/top.parquet"]);
    assert_eq!(
        paths(open(true).unwrap()),
        ["s3://root/deep/x.parquet", "s3://root/top.parquet"]
    );
}

/// A glob whose base folder's name is not UTF-8 text is a glob all the same: the files under
/// that folder are read.
#[cfg(unix)]
#[test]
fn a_glob_below_a_folder_named_in_other_bytes_is_read() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"c4c\xff"));
    for rel in ["a/p.parquet", "b/q.parquet"] {
        let p = odd.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, parquet_of(rel)).unwrap();
    }
    let inputs = Inputs::open(&[odd.join("**/*.parquet")]).unwrap();
    let found: Vec<PathBuf> = inputs.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(found, [odd.join("a/p.parquet"), odd.join("b/q.parquet")]);
}
