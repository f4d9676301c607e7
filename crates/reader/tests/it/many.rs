//! Many files opened at once (module `opening`): the files in the order they were listed,
//! the first error in that order, and the same values whether each file keeps its parsed
//! footer or its units read it again; locally and on a real S3 server (moto).

use crate::remote::{answers, parquet_of, s3_options};
use evalscore_reader::{InputSource, Inputs, OpenOptions, ReadError, Unit};
use evalscore_test_support::stores::*;
use std::path::{Path, PathBuf};

/// More files than the threads that open them, so that they finish out of order.
const FILES: usize = 300;

fn name(i: usize) -> String {
    format!("part-{i:05}.parquet")
}

/// `input` opened with `kept` files keeping their parsed footer.
fn open_kept(input: &str, options: &[(String, String)], kept: usize) -> Result<Inputs, ReadError> {
    let source = InputSource::parse(Path::new(input), false)?;
    let opts = OpenOptions {
        storage_options: options.to_vec(),
        ..OpenOptions::default()
    };
    Inputs::open_sources_kept(&[source], &opts, kept)
}

/// `open_kept`, but no object read whole when opened: each is read as a larger one is, its
/// tail at open and its footer again (when dropped) and chunks for each unit.
fn open_unwhole(
    input: &str,
    options: &[(String, String)],
    kept: usize,
) -> Result<Inputs, ReadError> {
    let source = InputSource::parse(Path::new(input), false)?;
    let opts = OpenOptions {
        storage_options: options.to_vec(),
        ..OpenOptions::default()
    };
    Inputs::open_sources_whole(&[source], &opts, kept, 0)
}

/// Every unit's stored `answer` chunk: its bytes and its footer metadata (statistics
/// included, which a copy of the chunk carries over), as text.
fn stored(inputs: &Inputs) -> Vec<(Vec<u8>, String)> {
    inputs
        .units()
        .iter()
        .map(|u| {
            let chunk = inputs.stored_chunk(u, "answer").unwrap().unwrap();
            (chunk.bytes.to_vec(), format!("{:?}", chunk.meta))
        })
        .collect()
}

/// Opened keeping every footer, none, or some: the same files in the same order, the same
/// footers' SHA-256, and the same values and stored chunks.
fn same_either_way(input: &str, options: &[(String, String)], expected: &[String]) {
    let all = open_kept(input, options, usize::MAX).unwrap();
    let names: Vec<String> = all
        .files
        .iter()
        .map(|f| {
            let p = f.path.to_str().unwrap();
            p.rsplit('/').next().unwrap().to_owned()
        })
        .collect();
    assert_eq!(names, expected);
    let values: Vec<String> = expected
        .iter()
        .flat_map(|n| std::iter::repeat_n(n.clone(), 100))
        .collect();
    assert_eq!(answers(&all).unwrap(), values);
    let chunks = stored(&all);
    for kept in [0, 7] {
        let some = open_kept(input, options, kept).unwrap();
        let shas = |i: &Inputs| -> Vec<String> {
            i.files.iter().map(|f| f.footer_sha256.clone()).collect()
        };
        assert_eq!(shas(&some), shas(&all), "kept {kept}");
        assert_eq!(some.units(), all.units(), "kept {kept}");
        assert_eq!(answers(&some).unwrap(), values, "kept {kept}");
        assert_eq!(stored(&some), chunks, "kept {kept}");
    }
}

/// A folder of [`FILES`] files, each file's `answer` its name.
fn folder() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..FILES).map(name).collect();
    for n in &names {
        std::fs::write(dir.path().join(n), parquet_of(n)).unwrap();
    }
    (dir, names)
}

#[test]
fn many_local_files_open_in_order_with_or_without_footers() {
    let (dir, names) = folder();
    let base = dir.path().to_str().unwrap();
    same_either_way(base, &[], &names);
    same_either_way(&format!("{base}/**/*.parquet"), &[], &names);
}

/// A progress callback is told each input listed, then the files opened every 64 and at
/// the last, whatever order the threads open them in.
#[test]
fn opening_reports_its_progress() {
    use evalscore_reader::{OpenProgress, OpenStep};
    use std::sync::{Arc, Mutex};
    let (dir, _) = folder();
    let base = dir.path().to_str().unwrap();
    let steps: Arc<Mutex<Vec<OpenStep>>> = Arc::default();
    let told = Arc::clone(&steps);
    let opts = OpenOptions {
        progress: Some(OpenProgress(Arc::new(move |s| {
            told.lock().unwrap().push(s)
        }))),
        ..OpenOptions::default()
    };
    let source = InputSource::parse(Path::new(base), false).unwrap();
    let inputs = Inputs::open_sources_options(&[source], &opts).unwrap();
    assert_eq!(inputs.files.len(), FILES);
    let steps = steps.lock().unwrap().clone();
    assert_eq!(steps[0], OpenStep::Listing(base.to_owned()));
    let mut opened: Vec<(usize, usize)> = steps[1..]
        .iter()
        .map(|s| match s {
            OpenStep::Opened { done, total } => (*done, *total),
            other => panic!("{other:?}"),
        })
        .collect();
    opened.sort();
    assert_eq!(
        opened,
        [(64, 300), (128, 300), (192, 300), (256, 300), (300, 300)]
    );
}

/// Files whose footers hold statistics, zstd: a file that dropped its footer (parsed at
/// open without statistics) gives its units the same values, and a copy of a stored chunk
/// the same footer metadata, statistics included, as a file that kept it.
#[test]
fn a_dropped_footer_still_gives_copies_their_statistics() {
    use arrow::array::{RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..12).map(name).collect();
    for n in &names {
        let column = StringArray::from(vec![n.as_str(); 100]);
        let batch =
            RecordBatch::try_from_iter([("answer", std::sync::Arc::new(column) as _)]).unwrap();
        let props = WriterProperties::builder()
            .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
            .build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        std::fs::write(dir.path().join(n), out).unwrap();
    }
    let base = dir.path().to_str().unwrap();
    let all = open_kept(base, &[], usize::MAX).unwrap();
    let none = open_kept(base, &[], 0).unwrap();
    let values: Vec<String> = names
        .iter()
        .flat_map(|n| std::iter::repeat_n(n.clone(), 100))
        .collect();
    assert_eq!(answers(&none).unwrap(), values);
    let (kept, dropped) = (stored(&all), stored(&none));
    assert_eq!(dropped, kept);
    for u in none.units() {
        let chunk = none.stored_chunk(&u, "answer").unwrap().unwrap();
        assert!(chunk.meta.statistics().is_some());
    }
}

/// A file that dropped its footer and no longer ends as Parquet when its unit reads the
/// footer again (its length and time kept, so that the change goes unseen until then): the
/// unit's error names the file and row group, in parquet-rs's words.
#[test]
fn a_dropped_footer_that_no_longer_reads_is_the_units_error() {
    let (dir, names) = folder();
    let none = open_kept(dir.path().to_str().unwrap(), &[], 0).unwrap();
    let path = dir.path().join(&names[1]);
    let meta = std::fs::metadata(&path).unwrap();
    std::fs::write(&path, vec![b'x'; meta.len() as usize]).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(meta.modified().unwrap()).unwrap();
    let e = answers(&none).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}: cannot decode row group 0 (rows 1 to 100): Parquet error: Invalid Parquet file. Corrupt footer",
            path.display()
        )
    );
}

/// A file rewritten after the run opened it (another length; or the same length, written
/// later) is an error naming it, not rows of another file under its name and fingerprint.
#[test]
fn a_file_rewritten_during_the_run_is_an_error() {
    for same_length in [false, true] {
        let (dir, names) = folder();
        let none = open_kept(dir.path().to_str().unwrap(), &[], 0).unwrap();
        let path = dir.path().join(&names[2]);
        let mut bytes = std::fs::read(dir.path().join(&names[3])).unwrap();
        if !same_length {
            bytes.extend_from_slice(b"PAR1");
        }
        // A time the file cannot have had when it was opened.
        std::fs::write(&path, &bytes).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
        let was = none.files[2].rows;
        assert_eq!(was, 100);
        let e = answers(&none).unwrap_err();
        let len = std::fs::metadata(&path).unwrap().len();
        let opened = if same_length { len } else { len - 4 };
        let tail = if same_length {
            ", and modified since"
        } else {
            ""
        };
        assert_eq!(
            (e.to_string(), e.hint.unwrap_or_default()),
            (
                format!(
                    "{}: changed during the run: {opened} bytes when the run opened it, {len} now{tail}",
                    path.display()
                ),
                "another process rewrote it; run again once it is done".to_owned()
            ),
            "same length: {same_length}"
        );
    }
}

/// A JSON Lines input rewritten after the run opened it is the same error.
#[test]
fn a_jsonl_file_rewritten_during_the_run_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.jsonl");
    std::fs::write(&path, "{\"answer\": \"a\"}\n{\"answer\": \"b\"}\n").unwrap();
    let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
    std::fs::write(&path, "{\"answer\": \"c\"}\n").unwrap();
    let e = answers(&inputs).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: changed during the run: 32 bytes when the run opened it, 16 now",
            path.display()
        )
    );
}

/// A file replaced by a FIFO after the run listed it: its unit is refused at once, not left
/// waiting for a writer that never comes.
#[test]
fn a_file_replaced_by_a_fifo_is_refused_without_waiting() {
    let (dir, names) = folder();
    let none = open_kept(dir.path().to_str().unwrap(), &[], 0).unwrap();
    let path = dir.path().join(&names[1]);
    std::fs::remove_file(&path).unwrap();
    evalscore_test_support::special_files::mkfifo(&path);
    let started = std::time::Instant::now();
    let e = answers(&none).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        (e.to_string(), e.hint.unwrap_or_default()),
        (
            format!("{}: not a regular file (a FIFO)", path.display()),
            "it was a file when the run listed its inputs: something replaced it; run again"
                .to_owned()
        )
    );
}

/// A file that is not Parquet: too short for a footer.
const NOT_PARQUET: &[u8] = b"id,answer\n1,Paris\n";

#[test]
fn the_first_damaged_file_among_many_is_the_error() {
    let (dir, _) = folder();
    let first = dir.path().join(name(120));
    std::fs::write(&first, NOT_PARQUET).unwrap();
    // A later damaged file, which a concurrent open may meet first.
    let mut later = parquet_of(&name(250));
    let n = later.len();
    later[n - 5] ^= 0x7f;
    std::fs::write(dir.path().join(name(250)), later).unwrap();
    let e = Inputs::open(&[dir.path().to_path_buf()]).unwrap_err();
    let alone = Inputs::open(std::slice::from_ref(&first)).unwrap_err();
    assert_eq!(e.to_string(), alone.to_string());
    assert_eq!(
        e.to_string(),
        format!(
            "{}: not a readable Parquet file: Parquet error: Invalid Parquet file. Corrupt footer",
            first.display()
        )
    );
    assert_eq!(
        e.hint.unwrap(),
        "the file may be truncated, still being written, or not Parquet at all"
    );
    // Files given one by one, the damaged one after a folder of good ones: the same error.
    let good = tempfile::tempdir().unwrap();
    std::fs::write(good.path().join("a.parquet"), parquet_of("a")).unwrap();
    let e = Inputs::open(&[good.path().to_path_buf(), first.clone()]).unwrap_err();
    assert_eq!(e.to_string(), alone.to_string());
    // A missing input after a damaged file: the damaged file, met first, is the error.
    let e = Inputs::open(&[first, PathBuf::from("/nonexistent/x.parquet")]).unwrap_err();
    assert_eq!(e.to_string(), alone.to_string());
}

#[test]
fn many_objects_open_in_order_and_the_first_damaged_one_is_the_error() {
    let server = moto();
    create_bucket(server.port, "lake");
    let names: Vec<String> = (0..FILES).map(name).collect();
    for n in &names {
        put_object(server.port, "lake", &format!("many/{n}"), &parquet_of(n));
    }
    let options = s3_options(server.port);
    same_either_way("s3://lake/many/", &options, &names);
    same_either_way("s3://lake/many/*.parquet", &options, &names);

    put_object(
        server.port,
        "lake",
        &format!("many/{}", name(120)),
        NOT_PARQUET,
    );
    put_object(server.port, "lake", &format!("many/{}", name(250)), b"PAR");
    let e = open_kept("s3://lake/many/", &options, usize::MAX).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "s3://lake/many/{}: not a readable Parquet file: it does not end with the Parquet magic `PAR1`",
            name(120)
        )
    );
}

/// A footer dropped at open is fetched again from the version opened: an object replaced
/// since is an error naming it, never the new object's footer read for the old one's units.
/// (An object not read whole when opened: a small one past `WHOLE_BYTES`, or a larger one.)
#[test]
fn a_dropped_footer_is_fetched_again_from_the_version_opened() {
    let server = moto();
    create_bucket(server.port, "evals");
    let (paris, rome) = ("Paris".repeat(20), "Rome!".repeat(20));
    put_object(server.port, "evals", "qa.parquet", &parquet_of(&paris));
    let options = s3_options(server.port);
    let url = "s3://evals/qa.parquet";
    let replaced = format!("{url}: the object was replaced while it was being read (its ETag changed since it was opened)");
    let inputs = open_unwhole(url, &options, 0).unwrap();
    assert_eq!(answers(&inputs).unwrap(), vec![paris; 100]);
    let again = open_unwhole(url, &options, 0).unwrap();
    put_object(server.port, "evals", "qa.parquet", &parquet_of(&rome));
    // The footer read again, and the chunks: the object opened is gone.
    let unit = again.units()[0];
    let e = again.stored_chunk(&unit, "answer").unwrap_err();
    assert_eq!(e.to_string(), replaced);
    let e = answers(&again).unwrap_err();
    assert_eq!(e.to_string(), replaced);
    let e = answers(&inputs).unwrap_err();
    assert_eq!(e.to_string(), replaced);
}

/// The resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Figures, not a check: the memory and time of opening the files of `EVALSCORE_MANY_INPUT`
/// (a folder, glob or prefix; `EVALSCORE_MANY_OPTIONS` holds `KEY=VALUE,...` storage
/// options), keeping every footer and none. Run by hand (BENCHMARKS.md):
/// `EVALSCORE_MANY_INPUT=DIR cargo test --release -p evalscore-reader --test it many::opening_figures -- --ignored --nocapture`
#[test]
#[ignore]
fn opening_figures() {
    let input = std::env::var("EVALSCORE_MANY_INPUT").unwrap();
    let options: Vec<(String, String)> = std::env::var("EVALSCORE_MANY_OPTIONS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    for kept in [0, usize::MAX] {
        let before = rss_kib();
        let t = std::time::Instant::now();
        let inputs = open_kept(&input, &options, kept).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let grown = rss_kib().saturating_sub(before);
        let n = inputs.files.len();
        println!(
            "footers kept: {}  files: {n}  rows: {}  open: {secs:.2} s  memory held: {} KiB ({} bytes per file)",
            if kept == 0 { "none" } else { "all" },
            inputs.rows(),
            grown,
            grown * 1024 / n.max(1) as u64
        );
        drop(inputs);
    }
}

/// Units fetched ahead (`Inputs::fetching_ahead`) are read from what was fetched, once: objects
/// replaced after the fetch ahead still read as the version fetched, where a unit that was
/// not fetched ahead, or was read already, fetches again and finds the object replaced.
/// (Objects not read whole when opened, as the small ones past `WHOLE_BYTES` are.)
#[test]
fn units_fetched_ahead_are_read_without_fetching_again() {
    let server = moto();
    create_bucket(server.port, "lake");
    let names: Vec<String> = (0..40).map(name).collect();
    for n in &names {
        put_object(server.port, "lake", &format!("ahead/{n}"), &parquet_of(n));
    }
    let options = s3_options(server.port);
    // No footer kept: every unit fetches its footer and chunks when read.
    let inputs = open_unwhole("s3://lake/ahead/", &options, 0).unwrap();
    // The same objects opened again: what the first inputs fetched ahead is not theirs.
    let other = open_unwhole("s3://lake/ahead/", &options, 0).unwrap();
    let units = inputs.units();
    let columns = ["answer".to_owned()];
    let read_from = |inputs: &Inputs, unit: &Unit| -> Result<Vec<String>, ReadError> {
        let mut got = Vec::new();
        inputs.read_unit(unit, &columns, |b| {
            let a = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8).unwrap();
            let a = a
                .as_any()
                .downcast_ref::<arrow::array::StringArray>()
                .unwrap();
            got.extend(a.iter().flatten().map(str::to_owned));
            Ok::<(), ReadError>(())
        })?;
        Ok(got)
    };
    let read = |i: usize| read_from(&inputs, &units[i]);
    let replaced = |i: usize| {
        format!(
            "s3://lake/ahead/{}: the object was replaced while it was being read (its ETag changed since it was opened)",
            names[i]
        )
    };
    // Handing out the first of 30 units fetches all 30 ahead.
    let mut ahead = inputs.fetching_ahead(&units[..30], &columns).enumerate();
    let first = ahead.next().unwrap();
    for n in &names {
        put_object(
            server.port,
            "lake",
            &format!("ahead/{n}"),
            &parquet_of("Rome!"),
        );
    }
    assert_eq!(
        read_from(&other, &units[1]).unwrap_err().to_string(),
        replaced(1)
    );
    for (i, unit) in std::iter::once(first).chain(ahead) {
        assert_eq!(
            read_from(&inputs, unit).unwrap(),
            vec![names[i].clone(); 100],
            "unit {i}"
        );
    }
    assert_eq!(read(30).unwrap_err().to_string(), replaced(30));
    assert_eq!(read(0).unwrap_err().to_string(), replaced(0));
}
