//! JSON Lines input: one pass to validate every line (UTF-8, JSON), infer the schema and cut
//! the file into chunks of [`JSONL_UNIT_ROWS`] rows at line starts; then each chunk is a unit
//! of work, decoded with arrow-json from its own byte range, in parallel like Parquet row
//! groups, so a large file is never held whole.
//!
//! A compressed file (`.jsonl.gz`, `.jsonl.zst`, `.ndjson.*`) is decompressed as it is read,
//! twice (the first pass, then the decoding), and never held whole or written out. A
//! compressed stream cannot be entered midway, so such a file is one unit, decoded by one
//! worker; several compressed files are decoded in parallel.

use crate::{Format, InputFile, ReadError};
use arrow::json::reader::{infer_json_schema_from_iterator, ReaderBuilder};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

const JSONL_BATCH: usize = 8 * 1024;

/// Rows per unit of work of a JSONL file.
pub const JSONL_UNIT_ROWS: u64 = 256 * 1024;

/// The compression of a JSON Lines file, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// `.jsonl.gz`, `.ndjson.gz`: gzip, one member or several concatenated.
    Gzip,
    /// `.jsonl.zst`, `.ndjson.zst`: Zstandard, one frame or several.
    Zstd,
}

impl Compression {
    /// The name run.json records.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// Whether `path` names a JSON Lines file, and how it is compressed: `Some(None)` for
/// `.jsonl` / `.ndjson`, `Some(Some(_))` for those names ending `.gz` or `.zst` (any case).
pub fn jsonl_kind(path: &Path) -> Option<Option<Compression>> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let (stem, compression) = if let Some(s) = name.strip_suffix(".gz") {
        (s, Some(Compression::Gzip))
    } else if let Some(s) = name.strip_suffix(".zst") {
        (s, Some(Compression::Zstd))
    } else {
        (name.as_str(), None)
    };
    (stem.ends_with(".jsonl") || stem.ends_with(".ndjson")).then_some(compression)
}

/// The file's lines as a byte stream: the file itself, or its decompressed content.
/// `src` is read; messages name `path` (a remote input's URL when `src` is its staged copy),
/// which must not have changed since it was first opened (`stamp`, when it was).
fn open_stream(
    src: &Path,
    path: &Path,
    compression: Option<Compression>,
    stamp: Option<&crate::stamp::Stamp>,
) -> Result<Box<dyn Read + Send>, ReadError> {
    let (handle, _) = crate::stamp::open_input(src, path, stamp)?;
    Ok(match compression {
        None => Box::new(handle),
        // Multi-member: `cat a.jsonl.gz b.jsonl.gz` is a valid gzip file of both.
        Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(
            BufReader::with_capacity(1 << 16, handle),
        )),
        Some(Compression::Zstd) => Box::new(
            zstd::stream::read::Decoder::new(handle)
                .map_err(|e| ReadError::at(path, format!("cannot open: {e}")))?,
        ),
    })
}

/// Opens the JSON Lines file at `src`; messages and the input's name are `path` (see
/// [`open_stream`]).
pub(crate) fn open(
    src: &Path,
    path: &Path,
    compression: Option<Compression>,
) -> Result<InputFile, ReadError> {
    open_in_units(src, path, compression, JSONL_UNIT_ROWS)
}

pub(crate) fn open_in_units(
    src: &Path,
    path: &Path,
    compression: Option<Compression>,
    unit_rows: u64,
) -> Result<InputFile, ReadError> {
    // A compressed file is one unit (see the module's note).
    let unit_rows = if compression.is_some() {
        u64::MAX
    } else {
        unit_rows
    };
    let mut reader = BufReader::with_capacity(1 << 16, open_stream(src, path, compression, None)?);
    let mut hasher = Sha256::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut rows = 0u64;
    let mut values = Vec::new();
    let mut schema = None;
    let mut offset = 0u64;
    // (first byte, rows) of each chunk; a chunk starts at the line of its first row.
    let mut chunks: Vec<(u64, u64)> = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| {
            let e = ReadError::at(path, format!("cannot read: {e}"));
            match compression {
                Some(c) => e.with_line(number + 1).with_hint(format!(
                    "the file is named as {} JSON Lines; it may be damaged, truncated or not compressed that way",
                    c.name()
                )),
                None => e,
            }
        })?;
        if n == 0 {
            break;
        }
        let line_start = offset;
        offset += n as u64;
        number += 1;
        hasher.update(&line);
        let text = std::str::from_utf8(&line).map_err(|e| {
            ReadError::at(
                path,
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
            )
            .with_line(number)
            .with_hint("JSON Lines files must be UTF-8; re-export the file as UTF-8")
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(text).map_err(|e| {
            ReadError::at(path, format!("not valid JSON: {e}"))
                .with_line(number)
                .with_hint("every line of a JSON Lines file must be one JSON object")
        })?;
        let value = match parsed {
            Line::Object { twice: Some(key), .. } => {
                return Err(ReadError::at(path, format!("two columns are named `{key}`: the line holds the key twice"))
                    .with_line(number)
                    .with_hint("columns are read by name, so a key must appear once in a line: remove the repeated key"))
            }
            Line::Object { value, .. } => value,
            Line::Other => {
                return Err(ReadError::at(path, "line is not a JSON object")
                    .with_line(number)
                    .with_hint("every line of a JSON Lines file must be one JSON object"))
            }
        };
        match chunks.last_mut() {
            Some((_, r)) if *r < unit_rows.max(1) => *r += 1,
            _ => chunks.push((line_start, 1)),
        }
        rows += 1;
        values.push((number, value));
        // Infer the schema in chunks so the first pass holds a bounded number of lines.
        if values.len() == JSONL_BATCH {
            schema = Some(merge_schema(schema, std::mem::take(&mut values), path)?);
        }
    }
    let schema = merge_schema(schema, values, path)?;
    let (row_groups, jsonl_spans) = if chunks.is_empty() {
        (vec![0], vec![(0, offset)])
    } else {
        let ends = chunks.iter().skip(1).map(|c| c.0).chain([offset]);
        (
            chunks.iter().map(|c| c.1).collect(),
            chunks.iter().map(|c| c.0).zip(ends).collect(),
        )
    };
    Ok(InputFile {
        path: path.to_path_buf(),
        format: Format::Jsonl,
        compression,
        rows,
        row_groups,
        footer_sha256: format!("{:x}", hasher.finalize()),
        schema: Arc::new(schema),
        jsonl_spans,
        reader_meta: None,
        dropped: None,
        remote: None,
        partitions: Vec::new(),
        stamp: None,
    })
}

/// One line of a JSON Lines file: an object (and the first key it holds twice, which
/// serde_json's own map would silently overwrite), or another JSON value.
enum Line {
    Object {
        value: serde_json::Value,
        twice: Option<String>,
    },
    Other,
}

impl<'de> serde::Deserialize<'de> for Line {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Line, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess};
        struct LineVisitor;
        impl<'de> serde::de::Visitor<'de> for LineVisitor {
            type Value = Line;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line, A::Error> {
                let mut value = serde_json::Map::new();
                let mut twice = None;
                while let Some(key) = map.next_key::<String>()? {
                    let v: serde_json::Value = map.next_value()?;
                    if value.contains_key(&key) {
                        twice.get_or_insert(key);
                    } else {
                        value.insert(key, v);
                    }
                }
                Ok(Line::Object {
                    value: serde_json::Value::Object(value),
                    twice,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Line, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Line::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Line, E> {
                Ok(Line::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Line, E> {
                Ok(Line::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Line, E> {
                Ok(Line::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Line, E> {
                Ok(Line::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Line, E> {
                Ok(Line::Other)
            }
            fn visit_unit<E>(self) -> Result<Line, E> {
                Ok(Line::Other)
            }
        }
        d.deserialize_any(LineVisitor)
    }
}

/// Folds the schema of `values` (with their line numbers) into `prev`. When they disagree,
/// the lines are folded one by one to name the first line that does.
fn merge_schema(
    prev: Option<arrow::datatypes::Schema>,
    values: Vec<(u64, serde_json::Value)>,
    path: &Path,
) -> Result<arrow::datatypes::Schema, ReadError> {
    let infer = |v: &[(u64, serde_json::Value)]| {
        infer_json_schema_from_iterator(v.iter().map(|(_, x)| Ok(x.clone())))
    };
    let merge = |p: Option<arrow::datatypes::Schema>, s: arrow::datatypes::Schema| match p {
        None => Ok(s),
        Some(p) => arrow::datatypes::Schema::try_merge([p, s]),
    };
    let whole = infer(&values).and_then(|s| merge(prev.clone(), s));
    if let Ok(s) = whole {
        return Ok(s);
    }
    let mut schema = prev;
    for one in values.chunks(1) {
        let line = one[0].0;
        let merged = infer(one).and_then(|s| merge(schema.clone(), s));
        match merged {
            Ok(s) => schema = Some(s),
            Err(e) => {
                return Err(ReadError::at(
                    path,
                    format!("a value's type differs from the earlier lines': {e}"),
                )
                .with_line(line)
                .with_hint("a column must hold one type in every line (null aside)"))
            }
        }
    }
    schema.ok_or_else(|| ReadError::at(path, "cannot infer a schema"))
}

/// The decoder of one chunk of lines.
pub(crate) type ChunkReader =
    arrow::json::reader::Reader<BufReader<std::io::Take<Box<dyn Read + Send>>>>;

/// Opens chunk `chunk` of the file for decoding; also the indices of `columns` in its schema.
pub(crate) fn open_chunk(
    file: &InputFile,
    chunk: usize,
    columns: &[String],
) -> Result<(ChunkReader, Vec<usize>), ReadError> {
    let path = &file.path;
    let src = file.read_path();
    let (start, end) = file
        .jsonl_spans
        .get(chunk)
        .copied()
        .ok_or_else(|| ReadError::at(path, format!("internal error: no chunk {chunk}")))?;
    let handle: Box<dyn Read + Send> = match file.compression {
        // A compressed file is one chunk, from its start.
        Some(_) => open_stream(src, path, file.compression, file.stamp.as_ref())?,
        None => {
            let (mut handle, _) = crate::stamp::open_input(src, path, file.stamp.as_ref())?;
            handle
                .seek(SeekFrom::Start(start))
                .map_err(|e| ReadError::at(path, format!("cannot read: {e}")))?;
            Box::new(handle)
        }
    };
    let mut indices: Vec<usize> = columns
        .iter()
        .filter_map(|c| file.schema.index_of(c).ok())
        .collect();
    indices.sort_unstable();
    indices.dedup();
    // Only the needed columns are decoded: the decoder skips every other key of a line.
    let projected = file
        .schema
        .project(&indices)
        .map_err(|e| ReadError::at(path, format!("cannot project columns: {e}")))?;
    let reader = ReaderBuilder::new(Arc::new(projected))
        .with_batch_size(JSONL_BATCH)
        .build(BufReader::new(handle.take(end.saturating_sub(start))))
        .map_err(|e| ReadError::at(path, format!("cannot decode: {e}")))?;
    Ok((reader, (0..indices.len()).collect()))
}

/// The line of chunk `chunk` that the decoder of `schema` refuses, and why: the chunk's lines
/// decoded one at a time. Only called once the chunk's decoding failed (arrow-json's errors name
/// no line); `None` when no single line fails.
pub(crate) fn failing_line(
    file: &InputFile,
    chunk: usize,
    schema: &arrow::datatypes::SchemaRef,
) -> Option<(u64, String)> {
    let (start, end) = *file.jsonl_spans.get(chunk)?;
    let stream = open_stream(
        file.read_path(),
        &file.path,
        file.compression,
        file.stamp.as_ref(),
    )
    .ok()?;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let (mut line, mut number, mut offset) = (Vec::new(), 0u64, 0u64);
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).ok()?;
        if n == 0 {
            return None;
        }
        let at = offset;
        offset += n as u64;
        number += 1;
        if at < start || line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if at >= end {
            return None;
        }
        let mut decoder = ReaderBuilder::new(Arc::clone(schema))
            .build_decoder()
            .ok()?;
        if let Err(e) = decoder.decode(&line).and_then(|_| decoder.flush()) {
            return Some((number, e.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};

    /// Reads chunk `chunk` of `file` through [`crate::Inputs::unit_batches`], which must
    /// hold `rows` rows.
    fn read(file: &InputFile, chunk: usize, rows: u64) -> Result<Vec<Option<String>>, ReadError> {
        let inputs = crate::Inputs {
            files: vec![file.clone()],
            schema: Arc::clone(&file.schema),
            union_by_name: false,
            partition_columns: Vec::new(),
            pruning: None,
            warnings: Vec::new(),
        };
        let unit = crate::Unit {
            file: 0,
            row_group: chunk,
            first_row: 0,
            rows,
        };
        let mut got = Vec::new();
        for b in inputs.unit_batches(&unit, &["a".to_owned()])? {
            let b = b?;
            let a = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8)
                .map_err(|e| ReadError::new(e.to_string()))?;
            let a = a.as_string::<i32>();
            got.extend((0..a.len()).map(|i| a.is_valid(i).then(|| a.value(i).to_owned())));
        }
        Ok(got)
    }

    fn collect(file: &InputFile, chunk: usize, rows: u64) -> Vec<Option<String>> {
        read(file, chunk, rows).unwrap()
    }

    /// Chunks start at line starts, skip blank lines, keep every row once and in order, and
    /// the last line needs no newline.
    #[test]
    fn chunks_cover_every_row_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let text = "\n{\"a\":\"r1\"}\n{\"a\":\"r2\"}\n\n{\"a\":\"é3\"}\n{\"a\":null}\n  \n{\"a\":\"r5\"}\n{\"a\":\"r6\"}\n{\"a\":\"r7\"}";
        std::fs::write(&path, text).unwrap();
        let whole = open_in_units(&path, &path, None, 1_000).unwrap();
        assert_eq!(whole.row_groups, [7]);
        let all = collect(&whole, 0, 7);
        assert_eq!(all.len(), 7);
        assert_eq!(all[2].as_deref(), Some("é3"));
        assert_eq!(all[3], None);

        let f = open_in_units(&path, &path, None, 3).unwrap();
        assert_eq!(f.rows, 7);
        assert_eq!(f.row_groups, [3, 3, 1]);
        assert_eq!(f.footer_sha256, whole.footer_sha256);
        let mut pieces = Vec::new();
        for (chunk, rows) in f.row_groups.iter().enumerate() {
            pieces.extend(collect(&f, chunk, *rows));
        }
        assert_eq!(pieces, all);
        // A span that no longer holds its rows (the file changed) is an error, not a guess.
        let err = read(&f, 0, 4).unwrap_err();
        assert!(
            err.to_string()
                .contains("hold 3 rows, not the 4 found when the file was opened"),
            "{err}"
        );
    }

    #[test]
    fn names_say_jsonl_and_compression() {
        let kind = |name: &str| jsonl_kind(Path::new(name));
        assert_eq!(kind("a.jsonl"), Some(None));
        assert_eq!(kind("dir.x/a.NDJSON"), Some(None));
        assert_eq!(kind("a.jsonl.gz"), Some(Some(Compression::Gzip)));
        assert_eq!(kind("a.ndjson.GZ"), Some(Some(Compression::Gzip)));
        assert_eq!(kind("a.jsonl.zst"), Some(Some(Compression::Zstd)));
        assert_eq!(kind("a.ndjson.zst"), Some(Some(Compression::Zstd)));
        assert_eq!(kind("a.parquet"), None);
        assert_eq!(kind("a.gz"), None);
        assert_eq!(kind("a.json.gz"), None);
        assert_eq!(kind("jsonl.gz"), None);
    }

    /// A compressed file (gzip of two members, zstd of two frames) is one unit holding every
    /// row in order, and its SHA-256 is that of the decompressed lines.
    #[test]
    fn compressed_files_are_one_unit_of_every_row() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (
            "{\"a\":\"r1\"}\n\n{\"a\":\"r2\"}\n",
            "{\"a\":null}\n{\"a\":\"r4\"}",
        );
        let plain = dir.path().join("x.jsonl");
        std::fs::write(&plain, format!("{first}{second}")).unwrap();
        let gz = dir.path().join("x.jsonl.gz");
        let mut bytes = Vec::new();
        for part in [first, second] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part.as_bytes()).unwrap();
            bytes.extend(e.finish().unwrap());
        }
        std::fs::write(&gz, bytes).unwrap();
        let zst = dir.path().join("x.ndjson.zst");
        let mut bytes = Vec::new();
        for part in [first, second] {
            bytes.extend(zstd::encode_all(part.as_bytes(), 3).unwrap());
        }
        std::fs::write(&zst, bytes).unwrap();

        let want = open_in_units(&plain, &plain, None, 1).unwrap();
        assert_eq!(want.row_groups, [1, 1, 1, 1]);
        for (path, c) in [(&gz, Compression::Gzip), (&zst, Compression::Zstd)] {
            let f = open_in_units(path, path, Some(c), 1).unwrap();
            assert_eq!(f.compression, Some(c));
            assert_eq!(f.rows, 4);
            assert_eq!(f.row_groups, [4]);
            assert_eq!(f.footer_sha256, want.footer_sha256);
            assert_eq!(
                collect(&f, 0, 4),
                [
                    Some("r1".into()),
                    Some("r2".into()),
                    None,
                    Some("r4".into())
                ]
            );
        }
    }

    /// A damaged compressed file: an error naming the file and the line being read.
    #[test]
    fn damaged_compressed_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let zst = dir.path().join("x.jsonl.zst");
        let text: String = (0..1000)
            .map(|i| format!("{{\"a\":\"row {i}\"}}\n"))
            .collect();
        let bytes = zstd::encode_all(text.as_bytes(), 3).unwrap();
        std::fs::write(&zst, &bytes[..bytes.len() / 2]).unwrap();
        let err = open(&zst, &zst, Some(Compression::Zstd)).unwrap_err();
        // The line being read when the stream broke (read ahead, so an early one here).
        assert!(err.line.is_some(), "{err:?}");
        assert_eq!(err.message, "cannot read: incomplete frame");
        assert_eq!(
            err.hint.as_deref(),
            Some("the file is named as zstd JSON Lines; it may be damaged, truncated or not compressed that way")
        );
        let gz = dir.path().join("x.jsonl.gz");
        std::fs::write(&gz, text.as_bytes()).unwrap();
        let err = open(&gz, &gz, Some(Compression::Gzip)).unwrap_err();
        assert_eq!(err.line, Some(1));
        assert_eq!(err.path.as_deref(), Some(gz.as_path()));
    }

    #[test]
    fn an_empty_file_is_one_empty_unit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.jsonl");
        std::fs::write(&path, "\n\n").unwrap();
        let f = open_in_units(&path, &path, None, 3).unwrap();
        assert_eq!(f.rows, 0);
        assert_eq!(f.row_groups, [0]);
        assert_eq!(f.jsonl_spans, [(0, 2)]);
    }

    /// Lines whose types disagree: the error names the first line that breaks the schema.
    #[test]
    fn a_type_conflict_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            "{\"a\": \"x\"}\n\n{\"a\": \"y\"}\n{\"a\": {\"k\": 1}}\n{\"a\": \"z\"}\n",
        )
        .unwrap();
        let err = open(&path, &path, None).unwrap_err();
        assert_eq!(err.line, Some(4));
        assert_eq!(
            err.to_string(),
            format!(
                "{}, line 4: a value's type differs from the earlier lines': Schema error: Fail to merge schema field 'a' because the from data_type = Struct(\"k\": Int64) does not equal Utf8",
                path.display()
            )
        );
    }
}
