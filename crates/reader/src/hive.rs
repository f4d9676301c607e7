//! Hive partitions: the `key=value` folders of a tree or glob (below the folder or prefix it
//! walks) read as columns, as Spark, Hive and DuckDB read them.
//!
//! A value is URL-decoded as Spark escapes it (`%3D` is `=`), and `__HIVE_DEFAULT_PARTITION__`
//! (Spark's null) is null. A key's type is inferred from its values in every file listed,
//! as DuckDB infers it: Int64 when every value is an integer ([`integer`]: not `01` or `+5`),
//! else Date32 when every value is a date ([`date`]: `YYYY-MM-DD`, `YYYY-M-D`), else Utf8 (nulls aside; a key whose values are all null is Utf8). The
//! columns follow the files' own, in the order of the first file's folders. A key repeated in
//! one path takes its deepest value.
//!
//! Keys, values and types come from the listed paths alone ([`partitions`]), before any file
//! is opened, so that a partition filter (module `partition_filter`) prunes the list first
//! ([`Partitions::retain`]) and only the files kept are opened and given their values
//! ([`Partitions::assign`]); types stay those of every file listed.
//!
//! [`HivePartitioning::Auto`] reads the keys when every file has the same set of them (none
//! for a file read as given), and reads none otherwise; [`HivePartitioning::On`] makes files
//! whose keys differ an error naming two of them. A key that is also a column of the files is
//! an error either way. A partition's values are constant per file: each batch gets them as
//! columns of its length (`with_partitions`).

use crate::{InputFile, ReadError};
use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Int64Array, RecordBatch, RecordBatchOptions,
    StringArray, UInt32Array,
};
use arrow::datatypes::{Field, FieldRef, Schema};
use chrono::{Datelike, NaiveDate};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether `key=value` folders are read as columns (`--hive-partitioning`,
/// `--no-hive-partitioning`; neither is `Auto`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HivePartitioning {
    /// When every file has the same keys; otherwise no partition columns.
    #[default]
    Auto,
    /// Always: files whose keys differ are an error.
    On,
    /// Never.
    Off,
}

/// The value Spark and Hive write for a null partition value.
const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// The partition keys of a file at `rel` (its path below the walked folder or prefix, `/`
/// between folders): every folder holding `=`, split at its first `=`, key and value
/// URL-decoded; a null value for `__HIVE_DEFAULT_PARTITION__`. In path order; a key repeated
/// keeps its first place and its deepest value. Escapes that decode to bytes that are not
/// UTF-8 decode lossily (`\u{FFFD}`); [`partitions`] refuses such a path.
pub(crate) fn path_keys(rel: &str) -> Vec<(String, Option<String>)> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    let folders = rel.rsplit_once('/').map_or("", |(folders, _)| folders);
    for segment in folders.split('/') {
        let Some((key, value)) = segment.split_once('=') else {
            continue;
        };
        let key = decode(key);
        let value = (value != DEFAULT_PARTITION).then(|| decode(value));
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => keys.push((key, value)),
        }
    }
    keys
}

/// The partition columns of a list of files, typed from their paths before any is opened.
#[derive(Debug, Default)]
pub(crate) struct Partitions {
    pub fields: Vec<FieldRef>,
    /// Per field, its value for each file (one row per file, in list order).
    pub values: Vec<ArrayRef>,
}

/// The partition columns of the files whose paths below their tree's base are `rels` (`None`
/// for a file read as given); `path(i)` names file `i` in messages. Types are inferred over
/// every file listed, so that pruning some (module `partition_filter`) never changes them.
pub(crate) fn partitions(
    rels: &[Option<String>],
    path: impl Fn(usize) -> PathBuf,
    mode: HivePartitioning,
) -> Result<Partitions, ReadError> {
    if mode == HivePartitioning::Off || rels.is_empty() {
        return Ok(Partitions::default());
    }
    let keys: Vec<Vec<(String, Option<String>)>> = rels
        .iter()
        .map(|rel| rel.as_deref().map(path_keys).unwrap_or_default())
        .collect();
    fn names(k: &[(String, Option<String>)]) -> Vec<&str> {
        let mut n: Vec<&str> = k.iter().map(|(k, _)| k.as_str()).collect();
        n.sort_unstable();
        n
    }
    let first = names(&keys[0]);
    if let Some(i) = (1..keys.len()).find(|&i| names(&keys[i]) != first) {
        if mode == HivePartitioning::Auto {
            return Ok(Partitions::default());
        }
        return Err(different_keys(&path(0), &keys[0], &path(i), &keys[i]));
    }
    // A folder name that is not UTF-8, or whose escapes (`%FF`) decode to bytes that are
    // not, was read lossily (`\u{FFFD}` for its odd bytes): two such values could read as
    // one, so the file's rows would join another partition. A `\u{FFFD}` written as such in
    // a UTF-8 name is the name's own.
    let lossy = |i: usize| {
        let raw = keys[i].iter().any(|(k, v)| {
            k.contains('\u{FFFD}') || v.as_deref().is_some_and(|v| v.contains('\u{FFFD}'))
        }) && path(i).to_str().is_none();
        let escaped = rels[i].as_deref().is_some_and(|rel| {
            let folders = rel.rsplit_once('/').map_or("", |(folders, _)| folders);
            folders.split('/').any(|segment| {
                segment.contains('=')
                    && percent_encoding::percent_decode_str(segment)
                        .decode_utf8()
                        .is_err()
            })
        });
        raw || escaped
    };
    if let Some(i) = (0..keys.len()).find(|&i| lossy(i)) {
        return Err(ReadError::at(
            &path(i),
            "a `key=value` folder of its path is not UTF-8 text, so it cannot be a partition value",
        )
        .with_hint("rename the folder, or pass `--no-hive-partitioning` to read the files without partition columns"));
    }
    // An empty key (`=v/`) would name a column with no name.
    if let Some(i) = (0..keys.len()).find(|&i| keys[i].iter().any(|(k, _)| k.is_empty())) {
        return Err(ReadError::at(
            &path(i),
            "a `key=value` folder of its path has an empty key, so it cannot name a partition column",
        )
        .with_hint("rename the folder, or pass `--no-hive-partitioning` to read the files without partition columns"));
    }
    let mut out = Partitions::default();
    for (key, _) in &keys[0] {
        let values: Vec<Option<&str>> = keys
            .iter()
            .map(|k| {
                k.iter()
                    .find(|(name, _)| name == key)
                    .and_then(|(_, v)| v.as_deref())
            })
            .collect();
        let column = typed(&values);
        out.fields
            .push(Arc::new(Field::new(key, column.data_type().clone(), true)));
        out.values.push(column);
    }
    Ok(out)
}

impl Partitions {
    /// Keeps the rows of the files `keep` says (those read after pruning).
    pub(crate) fn retain(&mut self, keep: &[bool]) -> Result<(), ReadError> {
        let mask = BooleanArray::from(keep.to_vec());
        for v in &mut self.values {
            *v = arrow::compute::filter(v.as_ref(), &mask)
                .map_err(|e| ReadError::new(format!("cannot prune partitions: {e}")))?;
        }
        Ok(())
    }

    /// Sets each of `files` (one per row) its values in `InputFile::partitions`; gives the
    /// columns. A key that is also a column of the files' shared schema `columns` is an
    /// error naming the first file.
    pub(crate) fn assign(
        self,
        files: &mut [InputFile],
        columns: &Schema,
    ) -> Result<Vec<FieldRef>, ReadError> {
        let Some(first) = files.first() else {
            return Ok(Vec::new());
        };
        if let Some(f) = self
            .fields
            .iter()
            .find(|f| columns.field_with_name(f.name()).is_ok())
        {
            let key = f.name();
            // With union by name, the first file may lack the column: name one that has it.
            let holder = files
                .iter()
                .find(|f| f.schema.field_with_name(key).is_ok())
                .unwrap_or(first);
            return Err(ReadError::at(
                &holder.path,
                format!("column `{key}` is in the file and also a Hive partition key of its path (`{key}=...`)"),
            )
            .with_hint(format!(
                "rename the column or the `{key}=` folders, or pass `--no-hive-partitioning` to read the file's column and ignore the folders"
            )));
        }
        for (field, column) in self.fields.iter().zip(&self.values) {
            for (file, row) in files.iter_mut().zip(0u32..) {
                let one = arrow::compute::take(column, &UInt32Array::from(vec![row]), None)
                    .map_err(|e| {
                        ReadError::at(&file.path, format!("partition `{}`: {e}", field.name()))
                    })?;
                file.partitions.push(one);
            }
        }
        Ok(self.fields)
    }
}

impl InputFile {
    /// The file's Hive partition values as JSON, in the order of the partition columns: an
    /// integer (Int64), a date `YYYY-MM-DD` (Date32), a string (Utf8), or null.
    pub fn partition_values(&self) -> Vec<serde_json::Value> {
        use arrow::array::AsArray;
        use arrow::datatypes::{DataType, Int64Type};
        let options = arrow::util::display::FormatOptions::default();
        self.partitions
            .iter()
            .map(|v| match v.data_type() {
                _ if v.is_null(0) => serde_json::Value::Null,
                DataType::Int64 => v.as_primitive::<Int64Type>().value(0).into(),
                _ => arrow::util::display::ArrayFormatter::try_new(v.as_ref(), &options)
                    .map_or(serde_json::Value::Null, |f| f.value(0).to_string().into()),
            })
            .collect()
    }
}

/// The error of two files whose partition keys differ under `--hive-partitioning`.
fn different_keys(
    a: &Path,
    a_keys: &[(String, Option<String>)],
    b: &Path,
    b_keys: &[(String, Option<String>)],
) -> ReadError {
    let list = |k: &[(String, Option<String>)]| {
        if k.is_empty() {
            "none".to_owned()
        } else {
            k.iter()
                .map(|(k, _)| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    ReadError::new(format!(
        "inputs `{}` and `{}` have different Hive partition keys: {} in the first, {} in the second",
        a.display(),
        b.display(),
        list(a_keys),
        list(b_keys)
    ))
    .with_hint("with `--hive-partitioning` every file's path must hold the same `key=value` folders; without it, files whose keys differ are read without partition columns")
}

/// One key's values (one per file) as a column of the type DuckDB infers: Int64 when every
/// value reads as one ([`integer`]), else Date32 when every value is a date ([`date`]), else
/// Utf8.
fn typed(values: &[Option<&str>]) -> ArrayRef {
    let present = || values.iter().flatten();
    let any = present().next().is_some();
    if any && present().all(|v| integer(v).is_some()) {
        let ints: Int64Array = values.iter().map(|v| v.and_then(integer)).collect();
        return Arc::new(ints);
    }
    if any && present().all(|v| date(v).is_some()) {
        let days: Date32Array = values.iter().map(|v| v.and_then(date)).collect();
        return Arc::new(days);
    }
    Arc::new(values.iter().copied().collect::<StringArray>())
}

/// A partition value read as an integer as DuckDB (2.0) reads one: blanks around it ignored,
/// decimal digits with an optional `-`, or `0x`/`0b` digits; a leading `+`, or a `0` before
/// more digits (`01`, `007`), is text, since the integer would not give the folder's name
/// back. Out of the Int64 range is text.
pub(crate) fn integer(v: &str) -> Option<i64> {
    let v = v.trim_ascii();
    let b = v.as_bytes();
    match b {
        [b'0', b'x' | b'X', digits @ ..] if !digits.is_empty() => {
            i64::from_str_radix(&v[2..], 16).ok()
        }
        [b'0', b'b' | b'B', digits @ ..] if !digits.is_empty() => {
            i64::from_str_radix(&v[2..], 2).ok()
        }
        [b'0', _, ..] | [b'+', ..] => None,
        [b'-', digits @ ..] | digits if digits.iter().all(u8::is_ascii_digit) => v.parse().ok(),
        _ => None,
    }
}

/// Days since 1970-01-01 of a date as DuckDB reads one from a folder's name: blanks around it
/// ignored, a year of one to six digits, a month and a day of one or two digits, separated by
/// two `-` or two spaces (`YYYY-MM-DD`, `YYYY-M-D`, `YYYY MM DD`), a real day of the calendar.
pub(crate) fn date(v: &str) -> Option<i32> {
    let v = v.trim_ascii();
    let sep = if v.contains('-') { '-' } else { ' ' };
    let mut parts = v.split(sep);
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    let digits =
        |p: &str, max: usize| (1..=max).contains(&p.len()) && p.bytes().all(|c| c.is_ascii_digit());
    if parts.next().is_some() || !digits(year, 6) || !digits(month, 2) || !digits(day, 2) {
        return None;
    }
    let d = NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?)?;
    Some(d.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE)
}

/// `NaiveDate::num_days_from_ce` of 1970-01-01.
const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// `batch` (the file's own columns, projected) with the file's partition columns that are
/// among `wanted` appended, each its one value repeated to the batch's length.
pub(crate) fn with_partitions(
    batch: RecordBatch,
    file: &InputFile,
    wanted: &[(FieldRef, usize)],
) -> Result<RecordBatch, ReadError> {
    if wanted.is_empty() {
        return Ok(batch);
    }
    let rows = batch.num_rows();
    let mut fields: Vec<FieldRef> = batch.schema().fields().iter().cloned().collect();
    let mut columns = batch.columns().to_vec();
    let zeros = UInt32Array::from(vec![0u32; rows]);
    for (field, i) in wanted {
        let value = &file.partitions[*i];
        let repeated = arrow::compute::take(value.as_ref(), &zeros, None)
            .map_err(|e| ReadError::at(&file.path, format!("partition `{}`: {e}", field.name())))?;
        fields.push(field.clone());
        columns.push(repeated);
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new_with_metadata(
            fields,
            batch.schema().metadata().clone(),
        )),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| ReadError::at(&file.path, format!("cannot add partition columns: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_folders_only_decoded() {
        assert_eq!(
            path_keys("model=m%3D1/x/date=2001-02-03/k=v=w/part=0.parquet"),
            [
                ("model".to_owned(), Some("m=1".to_owned())),
                ("date".to_owned(), Some("2001-02-03".to_owned())),
                ("k".to_owned(), Some("v=w".to_owned())),
            ]
        );
        assert_eq!(
            path_keys("a=1/b=__HIVE_DEFAULT_PARTITION__/a=2/f.parquet"),
            [
                ("a".to_owned(), Some("2".to_owned())),
                ("b".to_owned(), None)
            ]
        );
        assert_eq!(
            path_keys("p=100%/q=%zz%41/f.parquet"),
            [
                ("p".to_owned(), Some("100%".to_owned())),
                ("q".to_owned(), Some("%zzA".to_owned())),
            ]
        );
        assert!(path_keys("f.parquet").is_empty());
    }

    #[test]
    fn dates_read_as_duckdb_reads_them() {
        assert_eq!(date("1970-01-02"), Some(1));
        assert_eq!(date("2001-02-03"), Some(11_356));
        assert_eq!(date("2001-2-3"), Some(11_356));
        assert_eq!(date(" 2001 02 03 "), Some(11_356));
        for bad in [
            "2001-02-30",
            "20010203",
            "2001-02-03T00",
            "2001.02.03",
            "2001-002-03",
            "2001-02 03",
            "",
        ] {
            assert_eq!(date(bad), None, "{bad}");
        }
    }

    /// What DuckDB 2.0 read each value of a `k=VALUE` folder as (`typeof(k)` with
    /// `hive_partitioning=true`): BIGINT for these ...
    #[test]
    fn integers_read_as_duckdb_reads_them() {
        let ints = [
            ("1", 1),
            ("0", 0),
            ("-5", -5),
            ("-0", 0),
            ("-05", -5),
            (" 5", 5),
            ("5 ", 5),
            ("0x1F", 31),
            ("0X1F", 31),
            ("0b101", 5),
            ("20261125", 20_261_125),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ];
        for (v, i) in ints {
            assert_eq!(integer(v), Some(i), "{v:?}");
        }
        // ... and VARCHAR for these.
        for v in [
            "01",
            "007",
            "00",
            "+5",
            "+0",
            "1e3",
            "1.5",
            "1_000",
            "0x",
            "0o7",
            "- 5",
            "abc",
            "",
            "9223372036854775808",
        ] {
            assert_eq!(integer(v), None, "{v:?}");
        }
    }
}
