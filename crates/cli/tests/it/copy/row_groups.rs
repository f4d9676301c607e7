//! Row groups of scores.parquet from small input units: copied units stay apart, others join.

use super::*;

// ---------------------------------------------------------------------------------------------
// (d) Small row groups joined into one work item: decoded, same values

/// 40 row groups of 50 rows on 2 threads: work items of 2,000 / (4 * 2) = 250 rows, five row
/// groups each. A unit whose `id` is copied is a row group of scores of its own (the copied
/// chunk is exactly its rows), so scores.parquet keeps the input's 40 row groups.
#[test]
fn small_row_groups_with_copied_ids_stay_row_groups_of_their_own() {
    let (dir, input) = workdir();
    let ids = required_ids(2000);
    write_qa(&input, int64(&ids), false, props(50, 50));
    assert_eq!(footer(&input).num_row_groups(), 40);

    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "2"]);
    assert_eq!(ints(&scores, "id"), ids);
    assert_id_field(&scores, false);
    assert_exact(&scores, 2000);
    let fo = footer(&scores_path);
    assert_eq!(fo.num_row_groups(), 40);
    for rg in 0..40 {
        assert_eq!(fo.row_group(rg).num_rows(), 50);
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
    }
}

/// The same 40 small row groups with nothing to copy (`--keep answer`, a column the template
/// reads): joined into work items of 250 rows, 8 row groups of scores, `answer` decoded.
#[test]
fn small_row_groups_are_joined_when_nothing_is_copied() {
    let (dir, input) = workdir();
    write_qa(&input, int64(&required_ids(2000)), false, props(50, 50));
    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "2", "--keep", "answer"]);
    assert_eq!(column_names(&scores), ["answer", "exact__is_correct"]);
    assert_eq!(
        strings(&scores, "answer"),
        (0..2000).map(|i| Some(answer(i))).collect::<Vec<_>>()
    );
    assert_exact(&scores, 2000);
    assert_decoded_groups(&scores_path, 8, 250, "answer");
}

// ---------------------------------------------------------------------------------------------
// Many small units: encoded, and joined into row groups

/// More than 1,000 units (here row groups) of fewer than 65,536 rows: the kept `id` is
/// encoded with the scores instead of copied, so successive units share row groups of
/// scores.parquet (a file of thousands of tiny row groups otherwise, and past 32,767 one
/// Parquet cannot hold). At exactly 1,000 units every unit is still copied, a row group each.
#[test]
fn many_small_units_are_encoded_into_shared_row_groups() {
    let (dir, input) = workdir();
    let ids = required_ids(15_010);
    write_qa(&input, int64(&ids), false, props(10, 10));
    assert_eq!(footer(&input).num_row_groups(), 1_501);
    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1"]);
    assert_eq!(ints(&scores, "id"), ids);
    assert_exact(&scores, 15_010);
    // One thread: work items of at most 15,010 / 4 rows (whole units), each one row group.
    let fo = footer(&scores_path);
    let rows: Vec<i64> = (0..fo.num_row_groups())
        .map(|rg| fo.row_group(rg).num_rows())
        .collect();
    assert_eq!(rows, [3_750, 3_750, 3_750, 3_750, 10]);
    assert_all_decoded(&scores_path, "id");

    let (dir, input) = workdir();
    let ids = required_ids(10_000);
    write_qa(&input, int64(&ids), false, props(10, 10));
    let (scores_path, scores) = score_qa(&dir, &input, &["--threads", "1"]);
    assert_eq!(ints(&scores, "id"), ids);
    let fo = footer(&scores_path);
    assert_eq!(fo.num_row_groups(), 1_000);
    for rg in [0, 999] {
        assert_copied(&input, (rg, "id"), &scores_path, (rg, "id"));
    }
}
