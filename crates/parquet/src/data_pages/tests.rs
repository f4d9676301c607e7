#![allow(clippy::unwrap_used)]
use super::*;
use crate::CheckedRowGroup;
use bytes::Bytes;
use std::sync::Arc;

/// An optional INT64 column's rules (levels 0 and 1), naming no column.
fn optional_int64() -> PageRules {
    PageRules {
        max_rep: 0,
        max_def: 1,
        continues: Vec::new(),
        physical: Type::INT64,
        type_length: 0,
        text: false,
        column: None,
    }
}

/// A data page v1 of `values` entries: `levels` (the definition level section, after its
/// 4-byte length), then `rest`.
fn v1(values: u32, levels: &[u8], rest: &[u8], encoding: Encoding) -> Page {
    let mut buf = (levels.len() as u32).to_le_bytes().to_vec();
    buf.extend_from_slice(levels);
    buf.extend_from_slice(rest);
    Page::DataPage {
        buf: Bytes::from(buf),
        num_values: values,
        encoding,
        def_level_encoding: Encoding::RLE,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    }
}

#[test]
fn sound_pages_pass() {
    let rules = optional_int64();
    // 1, null, 3: one bit-packed group; then a dictionary index run of two 0s at width 1.
    let page = v1(
        3,
        &[0x03, 0b101],
        &[1, 0x04, 0x00],
        Encoding::RLE_DICTIONARY,
    );
    assert_eq!(check_page(&page, &rules), Ok(()));
    // Three non-null values in one RLE run, PLAIN.
    let page = v1(3, &[0x06, 0x01], &[0; 24], Encoding::PLAIN);
    assert_eq!(check_page(&page, &rules), Ok(()));
}

#[test]
fn levels_are_checked_against_the_page() {
    let rules = optional_int64();
    let cases: [(&[u8], &str); 5] = [
        (
            &[0x04, 0x01],
            "definition levels end after 2 of the page's 3",
        ),
        (&[0x00, 0x01], "definition levels have a run of no values"),
        (
            &[0x06],
            "definition levels have a run whose value runs past their end",
        ),
        (
            &[0x06, 0x03],
            "definition levels have a run of the value 3, wider than their 1 bits",
        ),
        (
            &[0x05, 0x07],
            "definition levels have a bit-packed run of 2 bytes with 1 left",
        ),
    ];
    for (levels, want) in cases {
        let page = v1(3, levels, &[0; 24], Encoding::PLAIN);
        assert_eq!(
            check_page(&page, &rules),
            Err(format!("a data page's {want}")),
            "{levels:x?}"
        );
    }
    // A section longer than the page.
    let page = Page::DataPage {
        buf: Bytes::from_static(&[9, 0, 0, 0, 0x06, 0x01]),
        num_values: 3,
        encoding: Encoding::PLAIN,
        def_level_encoding: Encoding::RLE,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    };
    assert_eq!(
        check_page(&page, &rules),
        Err("a data page's definition levels take 9 bytes, 2 are left in the page".into())
    );
}

#[test]
fn a_v2_pages_level_lengths_are_its_headers() {
    let rules = optional_int64();
    let page = |def_len: u32| Page::DataPageV2 {
        buf: Bytes::from_static(&[0x06, 0x01, 1, 0x06, 0x00]),
        num_values: 3,
        encoding: Encoding::RLE_DICTIONARY,
        num_nulls: 0,
        num_rows: 3,
        def_levels_byte_len: def_len,
        rep_levels_byte_len: 0,
        is_compressed: false,
        statistics: None,
    };
    assert_eq!(check_page(&page(2), &rules), Ok(()));
    assert_eq!(
        check_page(&page(9), &rules),
        Err("a data page's definition levels take 9 bytes, 5 are left in the page".into())
    );
}

#[test]
fn dictionary_indices_are_checked() {
    let rules = optional_int64();
    let page = v1(
        3,
        &[0x06, 0x01],
        &[33, 0x06, 0x00],
        Encoding::RLE_DICTIONARY,
    );
    assert_eq!(
        check_page(&page, &rules),
        Err(
            "a data page's dictionary indices have a bit width of 33, where at most 32 is allowed"
                .into()
        )
    );
    let page = v1(3, &[0x06, 0x01], &[1, 0x04, 0x00], Encoding::RLE_DICTIONARY);
    assert_eq!(
        check_page(&page, &rules),
        Err("a data page's dictionary indices end after 2 of the page's 3".into())
    );
    // Only the non-null values need indices: 1, null, null.
    let page = v1(
        3,
        &[0x03, 0b001],
        &[1, 0x02, 0x00],
        Encoding::RLE_DICTIONARY,
    );
    assert_eq!(check_page(&page, &rules), Ok(()));
}

#[test]
fn a_fixed_width_dictionary_holds_its_entries() {
    let page = |n: u32| Page::DictionaryPage {
        buf: Bytes::from(vec![0u8; 16]),
        num_values: n,
        encoding: Encoding::PLAIN,
        is_sorted: false,
    };
    let rules = PageRules {
        column: Some("x".into()),
        ..optional_int64()
    };
    assert_eq!(check_page(&page(2), &rules), Ok(()));
    assert_eq!(
        check_page(&page(3), &rules),
        Err("column `x`: a dictionary page holds 2 of the 3 entries its header gives".into())
    );
}

/// A DELTA_BINARY_PACKED stream of `values` (small, at most 33): blocks of 128 values in 4
/// miniblocks, the deltas in the first miniblock at 8 bits each.
fn delta_stream(values: &[i64]) -> Vec<u8> {
    let zigzag = |v: i64| ((v << 1) ^ (v >> 63)) as u8;
    let mut out = vec![0x80, 0x01, 0x04, values.len() as u8, zigzag(values[0])];
    let deltas: Vec<i64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    if let Some(&min) = deltas.iter().min() {
        out.push(zigzag(min));
        out.extend_from_slice(&[8, 0, 0, 0]);
        let mut packed = [0u8; 32];
        for (p, d) in packed.iter_mut().zip(&deltas) {
            *p = (d - min) as u8;
        }
        out.extend_from_slice(&packed);
    }
    out
}

#[test]
fn delta_string_lengths_are_checked() {
    use crate::delta_lengths::check_delta_strings;
    let dba = Encoding::DELTA_BYTE_ARRAY;
    // `ab`, `ac`: prefixes 0, 1; suffixes `ab`, `c`.
    let page = [
        delta_stream(&[0, 1]),
        delta_stream(&[2, 1]),
        b"abc".to_vec(),
    ]
    .concat();
    assert_eq!(check_delta_strings(&page, 2, dba, true), Ok(()));
    let page = [
        delta_stream(&[0, 3]),
        delta_stream(&[2, 1]),
        b"abc".to_vec(),
    ]
    .concat();
    assert_eq!(
        check_delta_strings(&page, 2, dba, true),
        Err("value 1 takes a prefix of 3 bytes from a value of 2".into())
    );
    let page = [
        delta_stream(&[0, 1]),
        delta_stream(&[2, 9]),
        b"abc".to_vec(),
    ]
    .concat();
    assert_eq!(
        check_delta_strings(&page, 2, dba, true),
        Err("its values take 11 bytes, 3 are left in the page".into())
    );
    let page = [delta_stream(&[0]), delta_stream(&[2])].concat();
    assert_eq!(
        check_delta_strings(&page, 2, dba, true),
        Err("the prefix lengths stream holds 1 values for the page's 2".into())
    );
    let mut page = delta_stream(&[2, 3]);
    page[..2].copy_from_slice(&[0xc0, 0x00]); // blocks of 64 values
    assert_eq!(
        check_delta_strings(&page, 2, Encoding::DELTA_LENGTH_BYTE_ARRAY, true),
        Err("the value lengths stream has blocks of 64 values in 4 miniblocks".into())
    );
}

/// The checks' cost beside the decoding they guard, on one row group of 4,000,000 rows of
/// three optional columns (an int64 with nulls, dictionary strings with nulls, a list of
/// int64), snappy: run with `cargo test --release -p evalscore-parquet -- --ignored
/// --nocapture page_check_cost`.
#[test]
#[ignore]
fn page_check_cost() {
    use arrow::array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray};
    use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
    use parquet::arrow::{parquet_to_arrow_field_levels, ArrowWriter, ProjectionMask};
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    const ROWS: usize = 4_000_000;
    let ids: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..ROWS as i64).map(|i| (i % 17 != 3).then_some(i * 3)),
    ));
    let labels: ArrayRef =
        Arc::new(StringArray::from_iter((0..ROWS).map(|i| {
            (i % 13 != 5).then(|| format!("label-{}", (i * 7919) % 50))
        })));
    let lists: ArrayRef = Arc::new(ListArray::from_iter_primitive::<
        arrow::datatypes::Int64Type,
        _,
        _,
    >((0..ROWS as i64).map(|i| {
        (i % 11 != 4).then(|| {
            (0..i % 4)
                .map(|j| (j != 2).then_some(i + j))
                .collect::<Vec<_>>()
        })
    })));
    let batch =
        RecordBatch::try_from_iter([("id", ids), ("label", labels), ("list", lists)]).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROWS))
        .build();
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let bytes = Bytes::from(bytes);
    let rows =
        |reader: ParquetRecordBatchReader| -> usize { reader.map(|b| b.unwrap().num_rows()).sum() };
    for column in 0..3 {
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).unwrap();
        let meta = Arc::clone(builder.metadata());
        let schema = builder.parquet_schema();
        let fields = builder.schema().fields().clone();
        let mask = || ProjectionMask::roots(schema, [column]);
        let (mut plain, mut checked) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let started = std::time::Instant::now();
            let reader = ParquetRecordBatchReaderBuilder::try_new(bytes.clone())
                .unwrap()
                .with_projection(mask())
                .build()
                .unwrap();
            assert_eq!(rows(reader), ROWS);
            plain = plain.min(started.elapsed().as_secs_f64());
            let started = std::time::Instant::now();
            let levels = parquet_to_arrow_field_levels(schema, mask(), Some(&fields)).unwrap();
            let group = CheckedRowGroup::new(bytes.clone(), Arc::clone(&meta), 0);
            let reader =
                ParquetRecordBatchReader::try_new_with_row_groups(&levels, &group, 8192, None)
                    .unwrap();
            assert_eq!(rows(reader), ROWS);
            checked = checked.min(started.elapsed().as_secs_f64());
        }
        println!(
            "{}: decoded in {:.1} ms, with the page checks {:.1} ms (+{:.1}%)",
            batch.schema().field(column).name(),
            plain * 1e3,
            checked * 1e3,
            (checked / plain - 1.0) * 100.0
        );
    }
}

/// A list's definition levels (at most 3, two bits each) count the values that need an
/// index: 3, 3, 1, 3, 0, 2, 3, 3 holds five.
#[test]
fn a_lists_levels_count_its_values() {
    let rules = PageRules {
        max_rep: 1,
        max_def: 3,
        continues: Vec::new(),
        physical: Type::BYTE_ARRAY,
        type_length: 0,
        text: true,
        column: None,
    };
    let page = |indices: u8| {
        let reps = [0x03, 0b0000_0000];
        let defs = [0x03, 0b11_01_11_11, 0b11_11_10_00];
        let mut buf = Vec::new();
        for section in [&reps[..], &defs[..]] {
            buf.extend_from_slice(&(section.len() as u32).to_le_bytes());
            buf.extend_from_slice(section);
        }
        buf.extend_from_slice(&[1, indices << 1, 0]);
        Page::DataPage {
            buf: Bytes::from(buf),
            num_values: 8,
            encoding: Encoding::RLE_DICTIONARY,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        }
    };
    assert_eq!(check_page(&page(5), &rules), Ok(()));
    assert_eq!(
        check_page(&page(4), &rules),
        Err("a data page's dictionary indices end after 4 of the page's 5".into())
    );
}

#[test]
fn split_values_are_whole_values() {
    let rules = optional_int64();
    let page = |bytes: usize| {
        v1(
            3,
            &[0x06, 0x01],
            &vec![0; bytes],
            Encoding::BYTE_STREAM_SPLIT,
        )
    };
    assert_eq!(check_page(&page(24), &rules), Ok(()));
    assert_eq!(
        check_page(&page(23), &rules),
        Err("a data page's BYTE_STREAM_SPLIT values take 23 bytes, no whole number of 8-byte INT64 values".into())
    );
    assert_eq!(
        check_page(&page(16), &rules),
        Err("a data page's BYTE_STREAM_SPLIT values are 2 for the page's 3".into())
    );
}

#[test]
fn rle_booleans_are_checked() {
    let rules = PageRules {
        physical: Type::BOOLEAN,
        ..optional_int64()
    };
    // true, false, true: one bit-packed group behind its length of 2.
    let page = |header: u8| {
        v1(
            3,
            &[0x06, 0x01],
            &[2, 0, 0, 0, header, 0b101],
            Encoding::RLE,
        )
    };
    assert_eq!(check_page(&page(0x03), &rules), Ok(()));
    assert_eq!(
        check_page(&page(0x05), &rules),
        Err("a data page's RLE booleans have a bit-packed run of 2 bytes with 1 left".into())
    );
    // A run of three of the value 0b101: true to a reader that takes any bit, false to one
    // that takes the lowest.
    assert_eq!(
        check_page(&page(0x06), &rules),
        Err("a data page's RLE booleans have a run of the value 5, wider than their 1 bits".into())
    );
}

#[test]
fn v2_level_bytes_of_a_column_without_levels_are_an_error() {
    let page = Page::DataPageV2 {
        buf: Bytes::from_static(&[0x06, 0x01, 0, 0, 0]),
        num_values: 3,
        encoding: Encoding::PLAIN,
        num_nulls: 0,
        num_rows: 3,
        def_levels_byte_len: 2,
        rep_levels_byte_len: 1,
        is_compressed: false,
        statistics: None,
    };
    assert_eq!(
        check_page(&page, &optional_int64()),
        Err(
            "a data page's header gives 1 byte of repetition levels, in a column without them"
                .into()
        )
    );
}

/// Legacy bit-packed levels (most significant bit first, no length): 1, 0, 1 is `0xa0`, two
/// values that need an index.
#[test]
fn legacy_bit_packed_levels_are_read() {
    #[allow(deprecated)]
    let page = |indices: u8| Page::DataPage {
        buf: Bytes::from(vec![0xa0, 1, indices << 1, 0]),
        num_values: 3,
        encoding: Encoding::RLE_DICTIONARY,
        def_level_encoding: Encoding::BIT_PACKED,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    };
    assert_eq!(check_page(&page(2), &optional_int64()), Ok(()));
    assert_eq!(
        check_page(&page(1), &optional_int64()),
        Err("a data page's dictionary indices end after 1 of the page's 2".into())
    );
}

/// Delta-encoded text: each whole value must be UTF-8, a prefix and a suffix together.
#[test]
fn delta_encoded_text_is_utf8() {
    use crate::delta_lengths::check_delta_strings;
    // `é` is c3 a9; `éa` then a value sharing its first byte alone: `c3` + `41`.
    let dba = [
        delta_stream(&[0, 1]),
        delta_stream(&[3, 1]),
        vec![0xc3, 0xa9, b'a', 0x41],
    ]
    .concat();
    assert_eq!(
        check_delta_strings(&dba, 2, Encoding::DELTA_BYTE_ARRAY, true),
        Err("value 1 is not UTF-8 (invalid byte at 0)".into())
    );
    assert_eq!(
        check_delta_strings(&dba, 2, Encoding::DELTA_BYTE_ARRAY, false),
        Ok(())
    );
    let dlba = [delta_stream(&[2, 1]), vec![0xc3, 0xa9, 0xff]].concat();
    assert_eq!(
        check_delta_strings(&dlba, 2, Encoding::DELTA_LENGTH_BYTE_ARRAY, true),
        Err("value 1 is not UTF-8 (invalid byte at 0)".into())
    );
}

/// A level within its bit width but above the column's maximum (3 where 2 is the most).
#[test]
fn a_level_above_the_maximum_is_an_error() {
    let rules = PageRules {
        max_def: 2,
        ..optional_int64()
    };
    let page = |levels: &[u8]| v1(2, levels, &[0; 16], Encoding::PLAIN);
    assert_eq!(check_page(&page(&[0x04, 0x02]), &rules), Ok(()));
    assert_eq!(
        check_page(&page(&[0x04, 0x03]), &rules),
        Err("a data page's definition levels hold a 3, above the column's maximum of 2".into())
    );
    // Bit-packed: 2, 3 in one group at two bits.
    assert_eq!(
        check_page(&page(&[0x03, 0b1110, 0x00]), &rules),
        Err("a data page's definition levels hold a 3, above the column's maximum of 2".into())
    );
}
