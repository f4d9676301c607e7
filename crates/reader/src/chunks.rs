//! Column chunks handed out as stored ([`Inputs::stored_chunk`]): pages still encoded and
//! compressed, checked first, for a writer that copies a column instead of decoding it.

use crate::units::damaged_unit;
use crate::{pages, remote, InputFile, Inputs, ReadError, Unit};
use bytes::Bytes;
use evalscore_parquet::stored::{checked_pages, portable_codec, proven_sound, StoredChunk};
use std::io::{Read, Seek, SeekFrom};

impl Inputs {
    /// The stored chunk of top-level column `column` in a Parquet unit, for a writer that
    /// copies the column instead of decoding and re-encoding it. Its page headers are checked
    /// first, as before decoding (module `pages`), then its pages decompressed and a string
    /// column's values checked for UTF-8: a damaged chunk is an error, never copied.
    ///
    /// `None` when there is no such chunk to copy: a JSONL unit, a column that is not a
    /// top-level leaf (structs, lists), a chunk stored in another file or compressed with a
    /// codec not every reader has ([`portable_codec`]), or a file whose footer has no
    /// view-typed form. A footer dropped at open (module `opening`) is read again.
    pub fn stored_chunk(
        &self,
        unit: &Unit,
        column: &str,
    ) -> Result<Option<StoredChunk>, ReadError> {
        let file = &self.files[unit.file];
        // A remote file's tail too: a chunk it holds is not fetched again.
        let (reader_meta, tail) = match &file.remote {
            Some(remote) if remote.staged.is_none() => {
                let (footer, meta) =
                    remote::unit_footer(file, remote)?.map_err(|m| damaged_unit(file, unit, &m))?;
                (meta, Some((footer.tail_start, footer.tail)))
            }
            _ => (file.reader_meta(|m| damaged_unit(file, unit, m))?, None),
        };
        let Some(reader_meta) = reader_meta else {
            return Ok(None);
        };
        let meta = reader_meta.metadata();
        let Some(rg) = meta.row_groups().get(unit.row_group) else {
            return Ok(None);
        };
        let Some(chunk) = rg.columns().iter().find(|c| {
            let parts = c.column_path().parts();
            parts.len() == 1 && parts[0] == column && c.column_descr().max_rep_level() == 0
        }) else {
            return Ok(None);
        };
        if chunk.file_path().is_some() || !portable_codec(chunk.compression()) {
            return Ok(None);
        }
        let damaged = |m: &dyn std::fmt::Display| {
            damaged_unit(file, unit, &format!("column `{column}`: {m}"))
        };
        // Read once; the page headers are then checked from memory.
        let (start, len) = pages::checked_range(chunk).map_err(|m| damaged(&m))?;
        let held = tail.and_then(|(at, tail)| {
            let from = usize::try_from(start.checked_sub(at)?).ok()?;
            let to = from.checked_add(usize::try_from(len).ok()?)?;
            (to <= tail.len()).then(|| tail.slice(from..to))
        });
        let buf = match held {
            Some(b) => b,
            None => read_range(file, start, len, &damaged)?,
        };
        let pages = checked_pages(&buf, chunk).map_err(|m| damaged(&m))?;
        // A chunk whose values cannot be checked without decoding them is decoded instead.
        if !proven_sound(&buf, chunk).map_err(|m| damaged(&m))? {
            return Ok(None);
        }
        Ok(Some(StoredChunk {
            bytes: buf,
            meta: chunk.clone(),
            pages,
        }))
    }
}

/// `len` bytes of `file` from `start` (a column chunk to copy), read from disk or fetched.
fn read_range(
    file: &InputFile,
    start: u64,
    len: u64,
    damaged: &dyn Fn(&dyn std::fmt::Display) -> ReadError,
) -> Result<Bytes, ReadError> {
    if let Some(remote) = &file.remote {
        if start.saturating_add(len) > remote.object.size() {
            return Err(damaged(&format!(
                "the file ends before byte {}",
                start.saturating_add(len)
            )));
        }
        return remote
            .object
            .get_range(start..start + len)
            .map_err(remote::read_error);
    }
    let (mut handle, _) = crate::local::open_input(&file.path, &file.path, file.stamp.as_ref())?;
    // Into spare capacity: no zeroing pass over a buffer about to be overwritten.
    let mut buf = Vec::with_capacity(len as usize);
    handle
        .seek(SeekFrom::Start(start))
        .and_then(|_| handle.take(len).read_to_end(&mut buf))
        .map_err(|e| damaged(&format!("cannot read it: {e}")))?;
    if buf.len() as u64 != len {
        return Err(damaged(&format!(
            "the file ends {} bytes into it, before its {len} bytes",
            buf.len()
        )));
    }
    Ok(Bytes::from(buf))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{
        ArrayRef, Int64Array, ListBuilder, RecordBatch, StringArray, StringBuilder,
    };
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use std::fs::File;
    use std::path::Path;
    use std::sync::Arc;

    /// Two row groups (3 and 5 rows) of a required Int64 `id`, a string `output` and a list
    /// of strings `choices`; `id` is written in pages of at most 2 rows.
    fn two_row_groups(path: &Path) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("output", DataType::Utf8, true),
            Field::new(
                "choices",
                DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
                true,
            ),
        ]));
        let props = WriterProperties::builder()
            .set_write_batch_size(2)
            .set_data_page_row_count_limit(2)
            .build();
        let f = File::create(path).unwrap();
        let mut w = ArrowWriter::try_new(f, Arc::clone(&schema), Some(props)).unwrap();
        for ids in [vec![10i64, 11, 12], vec![20, 21, 22, 23, 24]] {
            let outputs: Vec<String> = ids.iter().map(|i| format!("out {i}")).collect();
            let mut choices = ListBuilder::new(StringBuilder::new());
            for i in &ids {
                choices.values().append_value(format!("a{i}"));
                choices.values().append_value(format!("b{i}"));
                choices.append(true);
            }
            let batch = RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(Int64Array::from(ids)) as ArrayRef,
                    Arc::new(StringArray::from(outputs)) as ArrayRef,
                    Arc::new(choices.finish()) as ArrayRef,
                ],
            )
            .unwrap();
            w.write(&batch).unwrap();
            w.flush().unwrap();
        }
        w.close().unwrap();
    }

    #[test]
    fn stored_chunk_is_the_column_chunk_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.parquet");
        two_row_groups(&path);
        let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
        let units = inputs.units();
        assert_eq!(
            units,
            [
                Unit {
                    file: 0,
                    row_group: 0,
                    first_row: 0,
                    rows: 3
                },
                Unit {
                    file: 0,
                    row_group: 1,
                    first_row: 3,
                    rows: 5
                },
            ]
        );

        // The footer, read independently of `Inputs`.
        let footer = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .metadata()
            .clone();
        let rg = footer.row_group(1);
        assert_eq!(rg.num_rows(), 5);
        let id = rg.column(0);
        assert_eq!(id.column_path().string(), "id");

        let chunk = inputs.stored_chunk(&units[1], "id").unwrap().unwrap();
        assert_eq!(chunk.bytes.len() as i64, id.compressed_size());
        assert_eq!(chunk.meta.compressed_size(), id.compressed_size());
        assert_eq!(chunk.meta.num_values(), 5);
        assert_eq!(chunk.meta.data_page_offset(), id.data_page_offset());
        assert_eq!(
            chunk.meta.dictionary_page_offset(),
            id.dictionary_page_offset()
        );
        // The bytes are the file's, from the chunk's first page to its end.
        let (start, len) = id.byte_range();
        let file = std::fs::read(&path).unwrap();
        assert_eq!(
            chunk.bytes.as_ref(),
            &file[start as usize..(start + len) as usize]
        );
        // Data pages of at most 2 rows: 2 + 2 + 1, the first at the data page offset,
        // each following the one before.
        let values: Vec<i64> = chunk.pages.iter().map(|p| p.values).collect();
        assert_eq!(values, [2, 2, 1]);
        assert_eq!(values.iter().sum::<i64>(), rg.num_rows());
        assert_eq!(chunk.pages[0].offset as i64, id.data_page_offset());
        for w in chunk.pages.windows(2) {
            assert_eq!(w[0].offset + w[0].size, w[1].offset);
        }
        let last = chunk.pages.last().unwrap();
        assert_eq!(last.offset + last.size, start + len);

        // The first row group's chunk is its own.
        let first = inputs.stored_chunk(&units[0], "id").unwrap().unwrap();
        assert_eq!(first.meta.num_values(), 3);
        assert_eq!(
            first.bytes.len() as i64,
            footer.row_group(0).column(0).compressed_size()
        );
        assert_eq!(
            first.pages.iter().map(|p| p.values).collect::<Vec<_>>(),
            [2, 1]
        );

        // A flat string column is a chunk too; a list column and a missing one are not.
        assert!(inputs.stored_chunk(&units[1], "output").unwrap().is_some());
        assert!(inputs.stored_chunk(&units[1], "choices").unwrap().is_none());
        assert!(inputs.stored_chunk(&units[1], "missing").unwrap().is_none());
    }
}
