//! The copy across schemas and codecs: mixed nullability, unsafe names, pages v2, portable codecs.

use super::*;

/// Two files, one with `id` required and one with it nullable: the shared schema (so the
/// output) is nullable; the nullable file's chunk is copied, the required one's (other
/// definition levels) is decoded. Values exact either way.
#[test]
fn required_and_nullable_files_mix_copy_and_decode() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
    let ids = required_ids(2000);
    write_qa(&a, int64(&ids[..1000]), false, props(1000, 250));
    let b_ids: Vec<Option<i64>> = ids[1000..]
        .iter()
        .enumerate()
        .map(|(i, &v)| (i % 3 != 0).then_some(v))
        .collect();
    write_parquet(
        &b,
        &[qa_batch(
            1000,
            Arc::new(Int64Array::from(b_ids.clone())),
            true,
        )],
        props(1000, 250)
            .set_compression(Compression::SNAPPY)
            .build(),
    );

    let (scores_path, scores) = run_scores(dir.path(), QA_TASK, &[&a, &b], &["--threads", "1"]);
    let want: Vec<Option<i64>> = ids[..1000]
        .iter()
        .map(|&v| Some(v))
        .chain(b_ids.iter().copied())
        .collect();
    assert_eq!(opt_ints(&scores, "id"), want);
    assert_eq!(null_count(&scores, "id"), 334);
    assert_id_field(&scores, true);
    assert_exact(&scores, 2000);
    let fo = footer(&scores_path);
    assert_eq!(fo.num_row_groups(), 2);
    assert_decoded(&fo, 0, "id");
    assert_copied(&b, (0, "id"), &scores_path, (1, "id"));
}

/// `--keep id,answer` where a template reads `answer`: `id` is copied, `answer` decoded, in
/// the order asked for.
#[test]
fn copied_and_decoded_kept_columns_side_by_side() {
    let (dir, input) = workdir();
    let ids = required_ids(3000);
    write_qa(&input, int64(&ids), false, props(1000, 250));
    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1", "--keep", "answer,id"]);
    assert_eq!(column_names(&scores), ["answer", "id", "exact__is_correct"]);
    assert_eq!(ints(&scores, "id"), ids);
    assert_eq!(
        strings(&scores, "answer"),
        (0..3000).map(|i| Some(answer(i))).collect::<Vec<_>>()
    );
    assert_eq!(
        field(&scores, "answer"),
        Field::new("answer", DataType::Utf8, false)
    );
    assert_exact(&scores, 3000);
    let fo = footer(&scores_path);
    for rg in 0..3 {
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
        assert_decoded(&fo, rg, "answer");
    }
}

/// A string id under a name that is not warehouse-safe, on two threads: copied under its
/// safe name.
#[test]
fn string_id_with_an_unsafe_name_is_copied_under_its_safe_name() {
    let (dir, input) = workdir();
    let keys: Vec<Option<String>> = (0..2000)
        .map(|i| (i % 7 != 3).then(|| format!("item-{:05}", (i * 37) % 2000)))
        .collect();
    let batch = qa_batch(0, Arc::new(StringArray::from(keys.clone())), true);
    let schema = Schema::new(vec![
        Field::new("row-key", DataType::Utf8, true),
        batch.schema().field(1).clone(),
        batch.schema().field(2).clone(),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), batch.columns().to_vec()).unwrap();
    write_parquet(&input, &[batch], props(1000, 200).build());

    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "2", "--keep", "row-key"]);
    assert_eq!(column_names(&scores), ["row_key", "exact__is_correct"]);
    assert_eq!(strings(&scores, "row_key"), keys);
    assert_eq!(
        strings(&scores, "row_key")[..4],
        [
            Some("item-00000".to_owned()),
            Some("item-00037".to_owned()),
            Some("item-00074".to_owned()),
            None
        ]
    );
    assert_eq!(
        field(&scores, "row_key"),
        Field::new("row_key", DataType::Utf8, true)
    );
    assert_exact(&scores, 2000);
    for rg in 0..2 {
        assert_copied(&input, (rg, "row-key"), &scores_path, (rg, "row_key"));
    }
    // The copied chunk is described under the output's name.
    let fo = footer(&scores_path);
    assert_eq!(
        fo.file_metadata().schema_descr().column(0).name(),
        "row_key"
    );
}

/// Data pages v2 (levels outside the compressed data), gzip-compressed, with nulls: copied.
#[test]
fn data_page_v2_chunks_are_copied() {
    let (dir, input) = workdir();
    let ids = nullable_ids(2000);
    write_qa(
        &input,
        int64(&ids),
        true,
        props(1000, 128)
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(Compression::GZIP(Default::default())),
    );
    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1"]);
    assert_eq!(opt_ints(&scores, "id"), ids);
    assert_eq!(null_count(&scores, "id"), 401);
    assert_id_field(&scores, true);
    assert_exact(&scores, 2000);
    for rg in 0..2 {
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
    }
    for first_rows in first_rows_of_pages(&scores_path) {
        assert_eq!(first_rows, (0..1000).step_by(128).collect::<Vec<i64>>());
    }
}

/// Two kept columns that no template reads (`--keep tag,id`): both copied, in that order.
#[test]
fn two_kept_only_columns_are_both_copied() {
    let (dir, input) = workdir();
    let ids = required_ids(2000);
    let tags: Vec<Option<String>> = (0..2000)
        .map(|i| (i % 11 != 0).then(|| format!("tag{}", i % 4)))
        .collect();
    let batch = qa_batch(0, int64(&ids), false);
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("tag", DataType::Utf8, true));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(StringArray::from(tags.clone())));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    write_parquet(&input, &[batch], props(1000, 250).build());

    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1", "--keep", "tag,id"]);
    assert_eq!(column_names(&scores), ["tag", "id", "exact__is_correct"]);
    assert_eq!(strings(&scores, "tag"), tags);
    assert_eq!(ints(&scores, "id"), ids);
    assert_exact(&scores, 2000);
    for rg in 0..2 {
        assert_copied(&input, (rg, "tag"), &scores_path, (rg, "tag"));
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
    }
}

/// A kept column compressed with a codec not every reader has (brotli: Spark's parquet-mr
/// has none by default; LZ4 in either framing) is decoded and written zstd, never copied;
/// the portable codecs (none, snappy, gzip, zstd) are copied as stored.
#[test]
fn only_portable_codecs_are_copied() {
    let ids = required_ids(2000);
    let cases = [
        (Compression::BROTLI(Default::default()), false),
        (Compression::LZ4_RAW, false),
        (Compression::LZ4, false),
        (Compression::UNCOMPRESSED, true),
        (Compression::SNAPPY, true),
        (Compression::GZIP(Default::default()), true),
        (Compression::ZSTD(Default::default()), true),
    ];
    for (codec, copied) in cases {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.parquet");
        write_qa(
            &input,
            int64(&ids),
            false,
            props(1000, 300).set_compression(codec),
        );
        let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1"]);
        let want: Vec<Option<i64>> = ids.iter().copied().map(Some).collect();
        assert_eq!(opt_ints(&scores, "id"), want, "{codec:?}");
        assert_exact(&scores, 2000);
        let fo = footer(&scores_path);
        for rg in 0..2 {
            if copied {
                assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
                assert_eq!(column(&fo, rg, "id").compression(), codec);
            } else {
                assert_decoded(&fo, rg, "id");
            }
        }
    }
}
