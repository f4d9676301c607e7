//! The output folder of a run and its five files: `scores.parquet` encoded by the workers
//! ([`scores`]), `metrics.parquet`, `confusion.parquet` and `metrics.json` ([`tables`]), and
//! `run.json` ([`run_json`]), all through one [`OutDir`] (temporary names, commit with
//! `run.json` last).

pub(crate) mod delta;
pub(crate) mod remote;
pub(crate) mod run_json;
mod scores;
pub(crate) mod tables;

pub(crate) use run_json::RunInfo;
pub use scores::MAX_ROW_GROUP_ROWS;
pub(crate) use scores::{EncodedRowGroup, Encoders, ScoreEncoder, ScoresWriter, STRICT};
pub use tables::{ConfusionRow, MetricRow};

use crate::outdir::{io_error, parquet_error, OutDir};
use crate::{EngineError, Error};
use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use evalscore_storage::Location;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// The files a run writes, in the order they are put in place (`run.json` last, so its
/// presence means the run finished).
pub const OUTPUT_FILES: [&str; 5] = [
    PARQUET[0],
    PARQUET[1],
    PARQUET[2],
    "metrics.json",
    "run.json",
];

/// The Parquet outputs, as the reader knows them (it leaves a run's own outputs out of its
/// inputs).
const PARQUET: [&str; 3] = evalscore_reader::OUTPUT_PARQUET;

/// The column `--run-columns` adds to scores.parquet.
pub(crate) const RUN_ID_COLUMN: &str = "run_id";

/// `--run-columns` adds [`RUN_ID_COLUMN`] to scores.parquet: refused when the scores
/// already have a column of that name (a kept input column).
pub(crate) fn check_run_column(schema: &SchemaRef) -> Result<(), Error> {
    if schema.field_with_name(RUN_ID_COLUMN).is_ok() {
        return Err(EngineError::RunColumnPresent(RUN_ID_COLUMN).into());
    }
    Ok(())
}

/// How a run's outputs are laid out (`--format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// Five files in the `--out` folder or prefix.
    #[default]
    Folder,
    /// Rows appended to the Delta tables under the `--out` root (docs/output-format.md).
    Delta,
}

/// Where [`Outputs`] go besides the local folder.
pub(crate) struct Target<'a> {
    pub format: OutputFormat,
    pub run_id: &'a str,
    /// The task's name in a Delta table's `task` column.
    pub task: &'a str,
}

/// The output folder of a run: its five files through an [`OutDir`], and for an object
/// storage `--out` the upload of the finished set ([`remote::RemoteOut`]), for a Delta root
/// their publication ([`delta::DeltaOut`]).
pub(crate) struct Outputs {
    dir: OutDir,
    /// Dropped after `dir`: its temporary folder holds `dir`.
    remote: Option<remote::RemoteOut>,
    /// Dropped after `dir`, as `remote`.
    delta: Option<delta::DeltaOut>,
}

impl Outputs {
    /// Creates `dir` if needed and refuses to replace existing outputs unless `overwrite`.
    /// A URL `dir` (`s3://`, `gs://`, `az://`, `abfss://`) is written to a local temporary
    /// folder first and uploaded at commit.
    pub fn prepare(
        dir: &Path,
        overwrite: bool,
        storage_options: &[(String, String)],
        target: &Target<'_>,
    ) -> Result<Outputs, Error> {
        if target.format == OutputFormat::Delta {
            let d = delta::DeltaOut::prepare(
                dir,
                target.run_id,
                target.task,
                overwrite,
                storage_options,
            )?;
            return Ok(Outputs {
                dir: OutDir::prepare(d.staging(), &OUTPUT_FILES, false)?,
                remote: None,
                delta: Some(d),
            });
        }
        match Location::from_path(dir) {
            Location::Remote(url) => {
                let remote = remote::RemoteOut::prepare(&url, overwrite, storage_options)?;
                Ok(Outputs {
                    dir: OutDir::prepare(remote.staging(), &OUTPUT_FILES, false)?,
                    remote: Some(remote),
                    delta: None,
                })
            }
            Location::Local(dir) => Ok(Outputs {
                dir: OutDir::prepare(&dir, &OUTPUT_FILES, overwrite)?,
                remote: None,
                delta: None,
            }),
        }
    }

    /// The name errors give: the file the user will look for, not its hidden temporary name.
    fn shown(&self, i: usize) -> &Path {
        self.dir.shown(i)
    }

    /// Opens scores.parquet. Workers encode their units with [`ScoresWriter::encoder`]; the
    /// caller appends the encoded row groups in input order.
    /// With `run_id` (`--run-columns`), the file ends in a `run_id` column holding it (the
    /// caller checks first that `schema` has no such column: [`check_run_column`]).
    pub fn scores_writer(
        &self,
        schema: SchemaRef,
        run_id: Option<&str>,
    ) -> Result<ScoresWriter, Error> {
        let path = self.shown(0).to_path_buf();
        let schema = match run_id {
            None => schema,
            Some(_) => {
                // Dictionary-encoded: one value, so each row costs a key, not a string. The
                // file embeds no Arrow schema, so readers see a plain Utf8 column.
                let mut fields: Vec<_> = schema.fields().iter().cloned().collect();
                fields.push(Arc::new(Field::new(
                    RUN_ID_COLUMN,
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    false,
                )));
                Arc::new(Schema::new(fields))
            }
        };
        let file = self.dir.create(0)?;
        let mut writer = ScoresWriter::new(file, path, schema)?;
        writer.shared.run_id =
            run_id.map(|id| Arc::new(arrow::array::StringArray::from(vec![id])) as _);
        Ok(writer)
    }

    /// Writes metrics.parquet and confusion.parquet (the run identity columns as one-value
    /// dictionaries: the same files, without a copy of the labels per row).
    pub fn write_tables(
        &self,
        metrics: &[MetricRow],
        confusion: &[ConfusionRow],
        groups: &[String],
        run: &crate::RunIdentity,
    ) -> Result<(), Error> {
        let metrics =
            tables::metrics_batch(metrics, groups, run, true).map_err(EngineError::Arrow)?;
        self.write_parquet(1, &metrics, tables::metrics_schema(groups))?;
        let confusion =
            tables::confusion_batch(confusion, groups, run, true).map_err(EngineError::Arrow)?;
        self.write_parquet(2, &confusion, tables::confusion_schema(groups))
    }

    /// Writes `batch` as file `i` whose Arrow schema is `schema` (the batch may hold
    /// dictionary arrays where `schema` says Utf8: the file is the same).
    fn write_parquet(&self, i: usize, batch: &RecordBatch, schema: SchemaRef) -> Result<(), Error> {
        let path = self.shown(i);
        let file = self.dir.create(i)?;
        let mut w = ArrowWriter::try_new(file, schema, Some(props()))
            .map_err(|e| parquet_error(path, e))?;
        w.write(batch).map_err(|e| parquet_error(path, e))?;
        let f = w.into_inner().map_err(|e| parquet_error(path, e))?;
        f.sync_all().map_err(|e| io_error("write", path, e))
    }

    /// Writes metrics.json (made by [`tables::metrics_json`]).
    pub fn write_metrics_json(&self, v: &Value) -> Result<(), Error> {
        self.write_json(3, v)
    }

    pub fn write_run_json(&self, info: &RunInfo<'_>) -> Result<(), Error> {
        self.write_json(4, &run_json::run_json(info))
    }

    fn write_json(&self, i: usize, v: &Value) -> Result<(), Error> {
        let mut text = serde_json::to_string_pretty(v).map_err(EngineError::Json)?;
        text.push('\n');
        self.dir.write_bytes(i, text.as_bytes())
    }

    /// What [`Outputs::commit`] checks first, without committing ([`OutDir::check_commit`]).
    pub fn check_commit(&self) -> Result<(), Error> {
        self.dir.check_commit()
    }

    /// Puts every file in place; `run.json` goes last. For a Delta root: publishes them.
    pub fn commit(self) -> Result<(), Error> {
        match self.stage()? {
            Some(d) => d.publish(),
            None => Ok(()),
        }
    }

    /// For a Delta root: the files in the staging folder, not yet published (a suite
    /// publishes its tasks together); `None` for other outputs, which are committed.
    pub fn stage(self) -> Result<Option<delta::DeltaOut>, Error> {
        let Outputs { dir, remote, delta } = self;
        let staged = dir.dir().to_path_buf();
        dir.commit()?;
        match (remote, delta) {
            (Some(r), _) => r.upload(&staged).map(|()| None),
            (None, d) => Ok(d),
        }
    }
}

fn props_builder() -> WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(format!("evalscore {}", env!("CARGO_PKG_VERSION")))
}

fn props() -> WriterProperties {
    props_builder().build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const FOLDER: Target<'static> = Target {
        format: OutputFormat::Folder,
        run_id: "r",
        task: "t",
    };
    use arrow::array::AsArray;
    use arrow::array::Int64Array;
    use arrow::array::{ArrayRef, Float64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::basic::Encoding;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    use std::fs::File;
    use std::sync::Arc;

    /// Units are encoded on their own, split at the row limit, and appended in order: the
    /// file holds every row once, in order, in row groups that follow the units, with the
    /// documented encodings (delta ids, dictionary scores).
    #[test]
    fn units_become_ordered_row_groups_split_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::prepare(dir.path(), false, &[], &FOLDER).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("x__is_correct", DataType::Float64, true),
        ]));
        let mut writer = outputs.scores_writer(Arc::clone(&schema), None).unwrap();
        writer.shared.max_rows = 4;
        let batch = |from: i64, n: i64| {
            RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(Int64Array::from_iter_values(from..from + n)),
                    Arc::new(Float64Array::from_iter_values(
                        (from..from + n).map(|i| (i % 2) as f64),
                    )),
                ],
            )
            .unwrap()
        };
        let encoders = writer.encoders();
        let mut first = encoders.encoder();
        first.write(batch(0, 5).columns(), 5).unwrap();
        first.write(batch(5, 5).columns(), 5).unwrap();
        let mut second = encoders.encoder();
        second.write(batch(10, 3).columns(), 3).unwrap();
        let empty = encoders.encoder();
        writer.append(first.finish().unwrap()).unwrap();
        writer.append(empty.finish().unwrap()).unwrap();
        writer.append(second.finish().unwrap()).unwrap();
        assert_eq!(writer.finish().unwrap(), 13);

        let reader = SerializedFileReader::new(File::open(outputs.dir.temp(0)).unwrap()).unwrap();
        let meta = reader.metadata();
        let sizes: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(sizes, [4, 4, 2, 3]);
        let rg = meta.row_group(0);
        assert!(rg
            .column(0)
            .encodings()
            .any(|e| e == Encoding::DELTA_BINARY_PACKED));
        assert!(rg
            .column(1)
            .encodings()
            .any(|e| e == Encoding::RLE_DICTIONARY));
        let ids: Vec<i64> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_long(0).unwrap())
            .collect();
        assert_eq!(ids, (0..13).collect::<Vec<i64>>());
    }

    /// An Int64 column given as another integer type is cast, as the generic writer did,
    /// and its nulls kept: the ids read back as given, with their null count.
    #[test]
    fn ids_of_another_integer_type_are_cast() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::prepare(dir.path(), false, &[], &FOLDER).unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let writer = outputs.scores_writer(Arc::clone(&schema), None).unwrap();
        let ids: ArrayRef = Arc::new(arrow::array::Int32Array::from(vec![
            Some(7),
            None,
            Some(-3),
        ]));
        let mut encoder = writer.encoders().encoder();
        encoder.write(&[ids], 3).unwrap();
        let mut writer = writer;
        writer.append(encoder.finish().unwrap()).unwrap();
        assert_eq!(writer.finish().unwrap(), 3);
        let reader = SerializedFileReader::new(File::open(outputs.dir.temp(0)).unwrap()).unwrap();
        let column = reader.metadata().row_group(0).column(0);
        assert_eq!(column.statistics().unwrap().null_count_opt(), Some(1));
        let ids: Vec<Option<i64>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_long(0).ok())
            .collect();
        assert_eq!(ids, [Some(7), None, Some(-3)]);
    }

    /// Float64 columns of 0/1 scores, given as Float64 or as pass masks (Boolean), are
    /// written as bits ([`BitScores`]); a column that turns out to hold other values (0.5,
    /// −0.0, NaN) part-way through a row group moves to the generic writer with the rows so
    /// far, and later pass masks are cast for it. Every value, null, bit pattern and the
    /// chunk statistics read back exactly, whichever writer took the column.
    #[test]
    fn score_bits_read_back_exactly_and_fall_back_on_other_values() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::file::statistics::Statistics;
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::prepare(dir.path(), false, &[], &FOLDER).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("binary", DataType::Float64, true),
            Field::new("turns", DataType::Float64, true),
            Field::new("required", DataType::Float64, false),
            Field::new("all_null", DataType::Float64, true),
            Field::new("labels", label_type(), true),
            Field::new("relabel", label_type(), true),
            Field::new("mask", DataType::Float64, true),
            Field::new("mask_turns", DataType::Float64, true),
        ]));
        let mut writer = outputs.scores_writer(Arc::clone(&schema), None).unwrap();
        writer.shared.max_rows = 1000;
        let mask = |i: usize| (i % 6 != 2).then_some(i.is_multiple_of(3));
        // Pass masks, except the batch of rows 650..780, which is Float64 with a 0.5.
        let mask_turns = |i: usize| match i {
            777 => Some(0.5),
            i => (i % 4 != 1).then(|| f64::from(u8::from(i % 3 == 1))),
        };
        let as_mask = |from: usize, to: usize, f: &dyn Fn(usize) -> Option<bool>| -> ArrayRef {
            Arc::new(arrow::array::BooleanArray::from(
                (from..to).map(f).collect::<Vec<_>>(),
            ))
        };
        // 1,000 rows in batches of 130 (crossing byte and run edges), one row group.
        let binary = |i: usize| (i % 7 != 3).then(|| ((i * 31) % 5 < 2) as u8 as f64);
        let turns = |i: usize| match i {
            777 => Some(0.5),
            901 => Some(-0.0),
            950 => Some(f64::NAN),
            i if i % 5 == 0 => None,
            i => Some((i % 2) as f64),
        };
        let required = |i: usize| f64::from(u8::from(i.is_multiple_of(3)));
        let labels =
            |i: usize| (i % 9 != 4).then_some(if i % 4 == 1 { "VALID" } else { "INVALID" });
        // From row 650 on, the batches' dictionary is another pair: the column falls back.
        let relabel = |i: usize| match (i < 650, i % 2) {
            (true, 0) => "INVALID",
            (true, _) => "VALID",
            (false, 0) => "no",
            (false, _) => "yes",
        };
        let dict =
            |from: usize, to: usize, f: &dyn Fn(usize) -> Option<&'static str>| -> ArrayRef {
                let pair = if f(from) == Some("no") || f(from) == Some("yes") {
                    ["no", "yes"]
                } else {
                    ["INVALID", "VALID"]
                };
                let keys: Vec<Option<i8>> = (from..to)
                    .map(|i| f(i).map(|v| i8::from(v == pair[1])))
                    .collect();
                Arc::new(
                    arrow::array::DictionaryArray::<arrow::datatypes::Int8Type>::try_new(
                        arrow::array::Int8Array::from(keys),
                        Arc::new(StringArray::from(pair.to_vec())),
                    )
                    .unwrap(),
                )
            };
        let rows = 1000;
        let mut enc = writer.encoders().encoder();
        for from in (0..rows).step_by(130) {
            let to = (from + 130).min(rows);
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Float64Array::from(
                    (from..to).map(binary).collect::<Vec<_>>(),
                )),
                Arc::new(Float64Array::from(
                    (from..to).map(turns).collect::<Vec<_>>(),
                )),
                Arc::new(Float64Array::from(
                    (from..to).map(required).collect::<Vec<_>>(),
                )),
                Arc::new(Float64Array::from(vec![None; to - from])),
                dict(from, to, &labels),
                dict(from, to, &|i| Some(relabel(i))),
                as_mask(from, to, &mask),
                if from == 650 {
                    Arc::new(Float64Array::from(
                        (from..to).map(mask_turns).collect::<Vec<_>>(),
                    ))
                } else {
                    as_mask(from, to, &|i| mask_turns(i).map(|v| v == 1.0))
                },
            ];
            enc.write(&columns, to - from).unwrap();
        }
        writer.append(enc.finish().unwrap()).unwrap();
        assert_eq!(writer.finish().unwrap(), 1000);

        let file = File::open(outputs.dir.temp(0)).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let meta = reader.metadata().clone();
        let read: Vec<RecordBatch> = reader.build().unwrap().map(Result::unwrap).collect();
        let read = arrow::compute::concat_batches(&read[0].schema(), &read).unwrap();
        let bits = |c: usize| -> Vec<Option<u64>> {
            let a = read
                .column(c)
                .as_primitive::<arrow::datatypes::Float64Type>();
            a.iter().map(|v| v.map(f64::to_bits)).collect()
        };
        let want = |f: &dyn Fn(usize) -> Option<f64>| -> Vec<Option<u64>> {
            (0..rows).map(|i| f(i).map(f64::to_bits)).collect()
        };
        assert_eq!(bits(0), want(&binary));
        assert_eq!(bits(1), want(&turns));
        assert_eq!(bits(2), want(&|i| Some(required(i))));
        assert_eq!(bits(3), vec![None; rows]);
        let mask_scores = |i: usize| mask(i).map(|b| f64::from(u8::from(b)));
        assert_eq!(bits(6), want(&mask_scores));
        assert_eq!(bits(7), want(&mask_turns));
        let text = |c: usize| -> Vec<Option<String>> {
            read.column(c)
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(str::to_owned))
                .collect()
        };
        let want_text = |f: &dyn Fn(usize) -> Option<&'static str>| -> Vec<Option<String>> {
            (0..rows).map(|i| f(i).map(str::to_owned)).collect()
        };
        assert_eq!(text(4), want_text(&labels));
        assert_eq!(text(5), want_text(&|i| Some(relabel(i))));
        // Label columns carry no statistics, whichever writer took them.
        assert!(meta.row_group(0).column(4).statistics().is_none());
        assert!(meta.row_group(0).column(5).statistics().is_none());

        let rg = meta.row_group(0);
        let stats = |c: usize| match rg.column(c).statistics().unwrap() {
            Statistics::Double(s) => (
                s.min_opt().copied(),
                s.max_opt().copied(),
                s.null_count_opt(),
            ),
            other => panic!("{other:?}"),
        };
        let nulls = (0..rows).filter(|i| binary(*i).is_none()).count() as u64;
        assert_eq!(stats(0), (Some(0.0), Some(1.0), Some(nulls)));
        assert_eq!(stats(2), (Some(0.0), Some(1.0), Some(0)));
        assert_eq!(stats(3), (None, None, Some(1000)));
        let nulls = (0..rows).filter(|i| mask(*i).is_none()).count() as u64;
        assert_eq!(stats(6), (Some(0.0), Some(1.0), Some(nulls)));
        for c in 0..8 {
            assert!(rg
                .column(c)
                .encodings()
                .any(|e| e == Encoding::RLE_DICTIONARY));
            assert_eq!(rg.column(c).num_values(), 1000);
        }
        // The bit-written columns carry an offset index but no column index; the column
        // that fell back to the generic writer has both.
        let index = |c: usize| rg.column(c).column_index_offset().is_some();
        assert_eq!(
            (index(0), index(1), index(2), index(3)),
            (false, true, false, false)
        );
        assert_eq!((index(6), index(7)), (false, true));
    }

    /// A kept struct of two members (two Parquet leaves) beside flat columns: each leaf goes
    /// to its own writer, so the file reads back as written (the second leaf once took the
    /// next field's writer: `Cannot coerce Utf8 to I64`, or a panic in parquet's writer).
    #[test]
    fn a_struct_of_several_members_reads_back_as_written() {
        use arrow::array::StructArray;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::prepare(dir.path(), false, &[], &FOLDER).unwrap();
        let members = arrow::datatypes::Fields::from(vec![
            Field::new("v", DataType::Utf8, true),
            Field::new("u", DataType::Int64, true),
        ]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("meta", DataType::Struct(members.clone()), true),
            Field::new("x__is_correct", DataType::Float64, true),
        ]));
        let meta: ArrayRef = Arc::new(StructArray::new(
            members,
            vec![
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
                Arc::new(Int64Array::from(vec![Some(1), Some(2), None])),
            ],
            Some(vec![true, true, false].into()),
        ));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from(vec![7, 8, 9])),
                meta,
                Arc::new(Float64Array::from(vec![1.0, 0.5, 0.0])),
            ],
        )
        .unwrap();
        let mut writer = outputs.scores_writer(Arc::clone(&schema), None).unwrap();
        let mut enc = writer.encoders().encoder();
        enc.write(batch.columns(), 3).unwrap();
        writer.append(enc.finish().unwrap()).unwrap();
        assert_eq!(writer.finish().unwrap(), 3);
        let file = File::open(outputs.dir.temp(0)).unwrap();
        let read: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, [batch]);
    }

    fn label_type() -> DataType {
        DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
    }
}
