//! Kept columns copied as stored: a work item of one whole Parquet row group splices the
//! stored chunk of a column it only keeps (`id`) into scores.parquet instead of decoding and
//! re-encoding it. These runs check that the copied chunk is the input's byte for byte, with
//! an offset index a reader can use, that the values and nullability round-trip exactly, and
//! that every fallback (the column read by a template, joined row groups, a differing
//! repetition, JSONL) still writes exactly the input's values.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::{ColumnChunkMetaData, PageIndexPolicy, ParquetMetaData};
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod damaged;
mod fallbacks;
mod row_groups;
mod schemas_and_codecs;

/// One string_equals scorer, `exact`: the model output against `answer`.
const QA_TASK: &str = "definition:\n  scorers:\n    - type: string_equals\n      key: exact\n      ground_truth: \"{{ sample.answer }}\"\n";

/// `exact` as in [`QA_TASK`], and `by_id`, whose ground truth is the `id` column itself: the
/// template reads `id`, so it cannot be copied.
const ID_TASK: &str = "definition:\n  scorers:\n    - type: string_equals\n      key: exact\n      ground_truth: \"{{ sample.answer }}\"\n    - type: string_equals\n      key: by_id\n      ground_truth: \"{{ sample.id }}\"\n";

// ---------------------------------------------------------------------------------------------
// Inputs

/// The answer of input row `i` (0-based over the whole file).
fn answer(i: usize) -> String {
    if i.is_multiple_of(2) { "yes" } else { "no" }.to_owned()
}

/// The model output of input row `i`: wrong ("maybe") on every third row, else the answer.
fn output(i: usize) -> String {
    if i.is_multiple_of(3) {
        "maybe".to_owned()
    } else {
        answer(i)
    }
}

/// `exact__is_correct` of row `i`.
fn exact(i: usize) -> f64 {
    if i.is_multiple_of(3) {
        0.0
    } else {
        1.0
    }
}

/// A batch of rows `first..first + ids.len()`: `id` (as given), `output` and `answer`.
fn qa_batch(first: usize, id: ArrayRef, nullable_id: bool) -> RecordBatch {
    let rows = first..first + id.len();
    let schema = Schema::new(vec![
        Field::new("id", id.data_type().clone(), nullable_id),
        Field::new("output", DataType::Utf8, false),
        Field::new("answer", DataType::Utf8, false),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            id,
            Arc::new(StringArray::from_iter_values(rows.clone().map(output))),
            Arc::new(StringArray::from_iter_values(rows.map(answer))),
        ],
    )
    .unwrap()
}

/// Writes the rows from 0 with the `id`s `id` (nullable or not) as one batch.
fn write_qa(path: &Path, id: ArrayRef, nullable_id: bool, props: WriterPropertiesBuilder) {
    write_parquet(path, &[qa_batch(0, id, nullable_id)], props.build());
}

/// `ids` as an Int64 array.
fn int64<T: Clone>(ids: &[T]) -> ArrayRef
where
    Int64Array: From<Vec<T>>,
{
    Arc::new(Int64Array::from(ids.to_vec()))
}

/// Writes `batches` with parquet's ArrowWriter, each batch ending a row group (and `props`
/// cutting them smaller).
fn write_parquet(path: &Path, batches: &[RecordBatch], props: WriterProperties) {
    let f = File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(f, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
}

/// Row groups of `rows` rows, in data pages of at most `page_rows` rows.
fn props(rows: usize, page_rows: usize) -> WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows))
        .set_write_batch_size(page_rows)
        .set_data_page_row_count_limit(page_rows)
}

/// The required ids of the standard input: large, not in row order, distinct.
fn required_ids(n: usize) -> Vec<i64> {
    (0..n as i64)
        .map(|i| 5_000_000_000 + (i * 7919) % n as i64)
        .collect()
}

/// The nullable ids: as [`required_ids`], null on every fifth row and on the last.
fn nullable_ids(n: usize) -> Vec<Option<i64>> {
    required_ids(n)
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i % 5 != 2 && i != n - 1).then_some(v))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Runs and outputs

/// Runs `task` on `inputs` in `dir`, into `dir/out`, and returns that folder.
fn run(dir: &Path, task: &str, inputs: &[&Path], extra: &[&str]) -> PathBuf {
    let task_path = dir.join("task.yaml");
    std::fs::write(&task_path, task).unwrap();
    let out = dir.join("out");
    let mut c = evalscore();
    c.arg("run").arg(&task_path);
    for i in inputs {
        c.arg("--input").arg(i);
    }
    c.arg("--out").arg(&out).arg("--quiet").args(extra);
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// A file's footer.
fn footer(path: &Path) -> ParquetMetaData {
    SerializedFileReader::new(File::open(path).unwrap())
        .unwrap()
        .metadata()
        .clone()
}

/// Reader options that load the offset index (an error when a chunk has none) and the
/// column index where there is one (a copied chunk has none).
fn page_index_options() -> ArrowReaderOptions {
    ArrowReaderOptions::new()
        .with_column_index_policy(PageIndexPolicy::Optional)
        .with_offset_index_policy(PageIndexPolicy::Required)
}

/// A file's footer with its page index (offset and column indexes) loaded.
fn footer_with_page_index(path: &Path) -> Arc<ParquetMetaData> {
    let options = page_index_options();
    ParquetRecordBatchReaderBuilder::try_new_with_options(File::open(path).unwrap(), options)
        .unwrap()
        .metadata()
        .clone()
}

/// The bytes of a column chunk as the file stores them.
fn chunk_bytes(path: &Path, c: &ColumnChunkMetaData) -> Vec<u8> {
    let (start, len) = c.byte_range();
    std::fs::read(path).unwrap()[start as usize..(start + len) as usize].to_vec()
}

/// The first byte of a chunk: its dictionary page, else its first data page.
fn chunk_start(c: &ColumnChunkMetaData) -> i64 {
    c.dictionary_page_offset()
        .unwrap_or_else(|| c.data_page_offset())
}

fn encodings(c: &ColumnChunkMetaData) -> Vec<Encoding> {
    c.encodings().collect()
}

/// The leaf column `name` of row group `rg`.
fn column<'a>(meta: &'a ParquetMetaData, rg: usize, name: &str) -> &'a ColumnChunkMetaData {
    meta.row_group(rg)
        .columns()
        .iter()
        .find(|c| c.column_path().string() == name)
        .unwrap_or_else(|| panic!("no column {name} in row group {rg}"))
}

/// Asserts that chunk `out_name` of row group `out_rg` of scores.parquet is chunk `in_name`
/// of row group `in_rg` of the input as stored: same bytes, sizes, encodings, codec, values
/// and page layout (dictionary and data page offsets relative to the chunk's start).
fn assert_copied(
    input: &Path,
    (in_rg, in_name): (usize, &str),
    scores: &Path,
    (out_rg, out_name): (usize, &str),
) {
    let (fi, fo) = (footer(input), footer(scores));
    let (a, b) = (column(&fi, in_rg, in_name), column(&fo, out_rg, out_name));
    let what = format!("input row group {in_rg} `{in_name}` -> scores row group {out_rg}");
    assert_eq!(b.compressed_size(), a.compressed_size(), "{what}");
    assert_eq!(b.uncompressed_size(), a.uncompressed_size(), "{what}");
    assert_eq!(encodings(b), encodings(a), "{what}");
    assert_eq!(b.compression(), a.compression(), "{what}");
    assert_eq!(b.num_values(), a.num_values(), "{what}");
    assert_eq!(
        b.data_page_offset() - chunk_start(b),
        a.data_page_offset() - chunk_start(a),
        "{what}"
    );
    assert_eq!(
        b.dictionary_page_offset().is_some(),
        a.dictionary_page_offset().is_some(),
        "{what}"
    );
    assert_eq!(chunk_bytes(scores, b), chunk_bytes(input, a), "{what}");
}

/// A decoded (re-encoded) kept column: zstd-compressed by scores.parquet's writer, where the
/// test inputs store it otherwise.
fn assert_decoded(meta: &ParquetMetaData, rg: usize, name: &str) {
    assert!(
        matches!(column(meta, rg, name).compression(), Compression::ZSTD(_)),
        "row group {rg}, column {name}: {:?}",
        column(meta, rg, name).compression()
    );
}

/// scores.parquet of a run's output folder: its path and its rows.
fn scores_of(out: &Path) -> (PathBuf, RecordBatch) {
    let path = out.join("scores.parquet");
    let scores = read_parquet(&path);
    (path, scores)
}

/// `exact__is_correct` of rows 0 to `n - 1` is what [`exact`] gives.
fn assert_exact(scores: &RecordBatch, n: usize) {
    assert_eq!(exact_scores(scores), (0..n).map(exact).collect::<Vec<_>>());
}

/// scores.parquet's `id` field: Int64, nullable or not.
fn assert_id_field(scores: &RecordBatch, nullable: bool) {
    assert_eq!(
        field(scores, "id"),
        Field::new("id", DataType::Int64, nullable)
    );
}

/// Int64 column `col` with its nulls.
fn opt_ints(b: &RecordBatch, col: &str) -> Vec<Option<i64>> {
    b.column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"))
        .as_primitive::<Int64Type>()
        .iter()
        .collect()
}

fn field(b: &RecordBatch, name: &str) -> Field {
    b.schema().field_with_name(name).unwrap().clone()
}

/// `exact__is_correct` as plain numbers (it has no nulls in these runs).
fn exact_scores(b: &RecordBatch) -> Vec<f64> {
    floats(b, "exact__is_correct")
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// (a) Required id, one row group per work item: copied

/// 3 row groups of 1,000 rows, `id` required Int64 in 4 data pages of 250 rows each
/// (dictionary-encoded, uncompressed: parquet's defaults), scored on one thread.
/// Checks that `column` was decoded in every row group of `path`.
fn assert_all_decoded(path: &Path, column: &str) {
    let fo = footer(path);
    for rg in 0..fo.num_row_groups() {
        assert_decoded(&fo, rg, column);
    }
}

/// Checks that `path` has `groups` row groups of `rows` rows, `column` decoded in each.
fn assert_decoded_groups(path: &Path, groups: usize, rows: i64, column: &str) {
    let fo = footer(path);
    assert_eq!(fo.num_row_groups(), groups);
    for rg in 0..groups {
        assert_eq!(fo.row_group(rg).num_rows(), rows);
        assert_decoded(&fo, rg, column);
    }
}

/// `task` on one thread over `n` rows with nullable ids (row groups and pages as `props`):
/// the folder, the ids, and the path and contents of scores.parquet.
fn run_on_nullable_ids(
    task: &str,
    n: usize,
    props: WriterPropertiesBuilder,
) -> (tempfile::TempDir, Vec<Option<i64>>, PathBuf, RecordBatch) {
    let (dir, input) = workdir();
    let ids = nullable_ids(n);
    write_qa(&input, int64(&ids), true, props);
    let (scores_path, scores) = run_scores(dir.path(), task, &[&input], &["--threads", "1"]);
    (dir, ids, scores_path, scores)
}

/// `run`, then [`scores_of`] its output.
fn run_scores(dir: &Path, task: &str, inputs: &[&Path], extra: &[&str]) -> (PathBuf, RecordBatch) {
    scores_of(&run(dir, task, inputs, extra))
}

/// [`QA_TASK`] on `input` in `dir`: the path and contents of its scores.parquet.
fn score_qa(dir: &tempfile::TempDir, input: &Path, extra: &[&str]) -> (PathBuf, RecordBatch) {
    run_scores(dir.path(), QA_TASK, &[input], extra)
}

/// A temporary folder, and the path of `in.parquet` in it.
fn workdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.parquet");
    (dir, input)
}

/// Per row group of `path`, the first row of each page of its first column, from the offset
/// index.
fn first_rows_of_pages(path: &Path) -> Vec<Vec<i64>> {
    let with_index = footer_with_page_index(path);
    let offsets = with_index.offset_index().expect("offset index");
    offsets
        .iter()
        .map(|columns| {
            let pages = columns[0].page_locations();
            pages.iter().map(|p| p.first_row_index).collect()
        })
        .collect()
}

#[test]
fn required_id_is_copied_chunk_for_chunk_with_an_offset_index() {
    let (dir, input) = workdir();
    let ids = required_ids(3000);
    write_qa(&input, int64(&ids), false, props(1000, 250));
    let fi = footer(&input);
    assert_eq!(fi.num_row_groups(), 3);
    assert_eq!(
        column(&fi, 0, "id").compression(),
        Compression::UNCOMPRESSED
    );
    assert!(column(&fi, 0, "id").dictionary_page_offset().is_some());

    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1"]);
    assert_eq!(column_names(&scores), ["id", "exact__is_correct"]);
    assert_eq!(ints(&scores, "id"), ids);
    assert_eq!(ids[..3], [5_000_000_000, 5_000_001_919, 5_000_000_838]);
    assert_id_field(&scores, false);
    assert_eq!(null_count(&scores, "id"), 0);

    // The other score column is computed as usual.
    assert_exact(&scores, 3000);
    let got = exact_scores(&scores);
    for (row, want) in [
        (0, 0.0),
        (1, 1.0),
        (2, 1.0),
        (999, 0.0),
        (1000, 1.0),
        (2997, 0.0),
        (2999, 1.0),
    ] {
        assert_eq!(got[row], want, "row {row}");
    }

    // Copied: each row group's `id` chunk is the input's, byte for byte.
    let fo = footer(&scores_path);
    assert_eq!(fo.num_row_groups(), 3);
    for rg in 0..3 {
        assert_eq!(fo.row_group(rg).num_rows(), 1000);
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
        // The input's codec (none) where every encoded column of scores.parquet is zstd.
        assert_eq!(
            column(&fo, rg, "id").compression(),
            Compression::UNCOMPRESSED
        );
        assert_decoded(&fo, rg, "exact__is_correct");
    }

    // The offset index: one entry per row group and column; the copied chunk's pages are the
    // input's (4 of 250 rows), at their place in scores.parquet.
    let with_index = footer_with_page_index(&scores_path);
    let input_index = footer_with_page_index(&input);
    let offsets = with_index.offset_index().expect("offset index");
    let input_offsets = input_index.offset_index().expect("input offset index");
    assert_eq!(offsets.len(), 3);
    for (rg, columns) in offsets.iter().enumerate() {
        assert_eq!(columns.len(), 2, "row group {rg}");
        let id = column(&with_index, rg, "id");
        let pages = columns[0].page_locations();
        let first_rows: Vec<i64> = pages.iter().map(|p| p.first_row_index).collect();
        assert_eq!(first_rows, [0, 250, 500, 750], "row group {rg}");
        let rows = with_index.row_group(rg).num_rows();
        let counts: Vec<i64> = first_rows
            .iter()
            .zip(first_rows.iter().skip(1).chain([&rows]))
            .map(|(a, b)| b - a)
            .collect();
        assert_eq!(counts, [250, 250, 250, 250]);
        assert_eq!(counts.iter().sum::<i64>(), rows);
        assert_eq!(pages[0].offset, id.data_page_offset());
        let (start, len) = id.byte_range();
        let last = pages.last().unwrap();
        assert_eq!(
            (last.offset + i64::from(last.compressed_page_size)) as u64,
            start + len
        );
        // Page for page the input's, moved by where the chunk starts.
        let input_id = column(&input_index, rg, "id");
        let input_pages = input_offsets[rg][0].page_locations();
        assert_eq!(pages.len(), input_pages.len());
        for (p, q) in pages.iter().zip(input_pages) {
            assert_eq!(p.offset - chunk_start(id), q.offset - chunk_start(input_id));
            assert_eq!(p.compressed_page_size, q.compressed_page_size);
            assert_eq!(p.first_row_index, q.first_row_index);
        }
    }

    // A reader that skips pages through the offset index finds the right rows.
    let options = page_index_options();
    let selection = RowSelection::from(vec![
        RowSelector::skip(260),
        RowSelector::select(5),
        RowSelector::skip(1500),
        RowSelector::select(3),
        RowSelector::skip(1229),
        RowSelector::select(3),
    ]);
    let reader = ParquetRecordBatchReaderBuilder::try_new_with_options(
        File::open(&scores_path).unwrap(),
        options,
    )
    .unwrap()
    .with_row_selection(selection)
    .build()
    .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let selected = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let rows: Vec<usize> = (260..265).chain(1765..1768).chain(2997..3000).collect();
    assert_eq!(
        ints(&selected, "id"),
        rows.iter().map(|&r| ids[r]).collect::<Vec<_>>()
    );
    assert_eq!(
        exact_scores(&selected),
        rows.iter().map(|&r| exact(r)).collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------------------------
// (b) Nullable id with nulls: copied, nulls and all

/// 3 row groups of 1,000 rows; `id` nullable with 601 nulls, plain-encoded and
/// Snappy-compressed in pages of 300 rows.
#[test]
fn nullable_id_with_nulls_is_copied_and_stays_nullable() {
    let (dir, input) = workdir();
    let ids = nullable_ids(3000);
    assert_eq!(ids.iter().filter(|v| v.is_none()).count(), 601);
    write_qa(
        &input,
        int64(&ids),
        true,
        props(1000, 300)
            .set_dictionary_enabled(false)
            .set_compression(Compression::SNAPPY),
    );

    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1"]);
    assert_eq!(opt_ints(&scores, "id"), ids);
    assert_eq!(
        opt_ints(&scores, "id")[..4],
        [
            Some(5_000_000_000),
            Some(5_000_001_919),
            None,
            Some(5_000_002_757)
        ]
    );
    assert_eq!(opt_ints(&scores, "id")[2999], None);
    assert_id_field(&scores, true);
    assert_eq!(null_count(&scores, "id"), 601);
    assert_exact(&scores, 3000);

    let fo = footer(&scores_path);
    assert_eq!(fo.num_row_groups(), 3);
    for rg in 0..3 {
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
        assert_eq!(column(&fo, rg, "id").compression(), Compression::SNAPPY);
        assert_eq!(
            encodings(column(&fo, rg, "id")),
            [Encoding::PLAIN, Encoding::RLE]
        );
    }
    let first_rows = first_rows_of_pages(&scores_path);
    assert_eq!(first_rows, [[0, 300, 600, 900]; 3]);
}
