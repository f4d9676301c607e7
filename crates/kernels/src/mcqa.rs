use crate::batch_memo::{self, BatchMemo};
use crate::choices::{single_char, ChoiceReader, RowChoices};
use crate::normalize::Normalizer;
use crate::{Choices, KernelError};
use arrow::array::{
    Array, AsArray, BooleanArray, BooleanBufferBuilder, DictionaryArray, GenericListArray,
    Int8Array, OffsetSizeTrait, StringArray, StringViewArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::datatypes::{DataType, Int8Type};
use evalscore_text::{pack_bytes, TextColumn};
use std::sync::Arc;

/// `completion_validity` of an output whose first character is one of the row's choices.
pub const VALID: &str = "VALID";
/// `completion_validity` of any other output.
pub const INVALID: &str = "INVALID";

/// The fields of the `string_equals_mcqa` scorer for one batch.
#[derive(Debug, Clone, PartialEq)]
pub struct McqaOutput {
    /// The pass mask: true scores 1.0, false 0.0; no nulls.
    pub is_correct: BooleanArray,
    /// [`VALID`] or [`INVALID`], never null; dictionary-encoded (key 0 = `INVALID`,
    /// 1 = `VALID`) so it costs a byte per row and metrics count keys, not strings.
    pub completion_validity: DictionaryArray<Int8Type>,
}

/// `string_equals_mcqa`: the first Unicode character of `output` against the
/// single-character `ground_truth` choice.
///
/// `completion_validity` is `VALID` when the output is non-empty and its first character is
/// one of the row's `choices` (any first character when `choices` is [`Choices::None`]), else
/// `INVALID`. `is_correct` is 1.0 only when `VALID` and the first character equals the ground
/// truth; case and whitespace count, so `" C"` starts with a space and `"b"` is not `"B"`.
///
/// Null rule: a null output is `INVALID` and scores 0.0; a null ground truth scores 0.0 (the
/// caller counts both as missing); null choices for a row make it `INVALID`.
///
/// Errors: a ground truth or choice that is not exactly one character, with its row.
pub fn string_equals_mcqa(
    output: TextColumn<'_>,
    ground_truth: TextColumn<'_>,
    choices: Choices<'_>,
    len: usize,
) -> Result<McqaOutput, KernelError> {
    string_equals_mcqa_with(output, ground_truth, choices, len, None, None, None)
}

/// [`string_equals_mcqa`] with the scorer's `normalize:` (applied to the output, the ground
/// truth and every choice before the first character is taken), the `found` mask of an
/// `extract:` (a row whose extraction found nothing is `INVALID`), and the batch's memo,
/// where other scorers of the batch share what is derived from a `choices` list column.
pub fn string_equals_mcqa_with(
    output: TextColumn<'_>,
    ground_truth: TextColumn<'_>,
    choices: Choices<'_>,
    len: usize,
    norm: Option<&Normalizer>,
    found: Option<&[bool]>,
    memo: Option<&BatchMemo>,
) -> Result<McqaOutput, KernelError> {
    let apply = |s: &str| -> Option<char> {
        match norm {
            Some(n) => n.apply(s).chars().next(),
            None => s.chars().next(),
        }
    };
    let truth_of = |s: &str, row: usize| -> Result<char, KernelError> {
        match norm {
            Some(n) => truth_char(&n.apply(s), row),
            None => truth_char(s, row),
        }
    };
    if let (None, None, TextColumn::Utf8View(o), TextColumn::Utf8View(t), Choices::PerRow(l)) =
        (norm, found, output, ground_truth, choices)
    {
        if let Some(out) = mcqa_views(o, t, l, len, memo) {
            return Ok(out);
        }
    }
    let mut reader = ChoiceReader::new(choices, norm)?;
    // Bit-packed as they are decided: no `Vec<bool>` to pack afterwards.
    let mut scores = BooleanBufferBuilder::new(len);
    let mut valid = BooleanBufferBuilder::new(len);
    // A scalar ground truth is checked once, not per row.
    let scalar_truth = match ground_truth {
        TextColumn::Scalar(Some(s)) => Some(Some(truth_of(s, 0)?)),
        TextColumn::Scalar(None) => Some(None),
        _ => None,
    };
    for row in 0..len {
        let first = output.get(row).and_then(apply);
        let extracted = found.is_none_or(|f| f.get(row).copied().unwrap_or(false));
        let is_valid = extracted
            && match (first, reader.row(row)?) {
                (None, _) | (_, RowChoices::Missing) => false,
                (Some(_), RowChoices::Any) => true,
                (Some(c), RowChoices::Set(set)) => set.contains(&c),
            };
        let truth = match scalar_truth {
            Some(t) => t,
            None => ground_truth
                .get(row)
                .map(|s| truth_of(s, row))
                .transpose()?,
        };
        let correct = is_valid && first.is_some() && first == truth;
        scores.append(correct);
        valid.append(is_valid);
    }
    Ok(McqaOutput {
        is_correct: BooleanArray::new(scores.finish(), None),
        completion_validity: validity_labels(&valid.finish())?,
    })
}

/// [`string_equals_mcqa`] for the common shape, decided from the 16-byte views alone:
/// output and ground truth Utf8View, choices a list column of Utf8View items, every ground
/// truth one ASCII character, every choice item one ASCII character. `None` (the caller
/// takes the general path, which also reports any bad value) when the batch is not of that
/// shape. Outputs may start with anything: a first character that is not ASCII begins with
/// a byte >= 0x80, which equals no item and no ground truth, as its whole character does on
/// the general path (fullwidth letters, CJK, a leading combining mark: `INVALID`).
fn mcqa_views(
    output: &StringViewArray,
    truth: &StringViewArray,
    list: &dyn Array,
    len: usize,
    memo: Option<&BatchMemo>,
) -> Option<McqaOutput> {
    if output.len() != len || truth.len() != len || list.len() != len {
        return None;
    }
    match list.data_type() {
        DataType::List(_) => views_with_list(output, truth, list.as_list::<i32>(), memo),
        DataType::LargeList(_) => views_with_list(output, truth, list.as_list::<i64>(), memo),
        _ => None,
    }
}

/// How a row's choices are searched for the output's first byte. With a memo (a suite's
/// tasks), each row's items are one 128-bit mask ([`BatchMemo`]), made once for every
/// scorer of the batch, and a row's test is one bit. Alone, a scorer searches the items'
/// first bytes instead: a row's first eight items are one 64-bit load, searched with
/// [`crate::bytes_equal`] under a mask of the row's item count, which costs less than
/// making the masks for one use.
fn views_with_list<O: OffsetSizeTrait>(
    output: &StringViewArray,
    truth: &StringViewArray,
    list: &GenericListArray<O>,
    memo: Option<&BatchMemo>,
) -> Option<McqaOutput> {
    let items = list.values().as_string_view_opt()?;
    let nulls = list.nulls();
    if let Some(memo) = memo {
        let masks = memo.choice_masks(list, items)?;
        let found = |row: usize, first: u8| {
            // The items are ASCII: a byte >= 0x80 is none of them.
            (masks[row] >> (first & 127)) as u8 & u8::from(first < 0x80)
        };
        // The labels depend on the output and the choices only: made once for the tasks
        // that score the same two columns.
        let labels = |valid: &BooleanBuffer| {
            memo.validity(output, list, items, || validity_labels(valid).ok())
        };
        return score_views(output, truth, nulls, found, labels);
    }
    let firsts = batch_memo::first_bytes(list, items)?;
    let offsets = list.value_offsets();
    let base = offsets[0].as_usize();
    let found = |row: usize, first: u8| {
        let (start, end) = (
            offsets[row].as_usize() - base,
            offsets[row + 1].as_usize() - base,
        );
        let n = end - start;
        let found = if n <= 8 {
            let eight = firsts.get(start..start + 8).and_then(|b| b.try_into().ok());
            eight.is_some_and(|e| {
                crate::bytes_equal(u64::from_le_bytes(e), first) & crate::LOW_BYTES[n] != 0
            })
        } else {
            firsts.get(start..end).is_some_and(|f| f.contains(&first))
        };
        u8::from(found)
    };
    score_views(output, truth, nulls, found, |valid| {
        validity_labels(valid).ok()
    })
}

/// Scores the rows 64 at a time, `found(row, first)` telling whether the output's first byte
/// is one of the row's choices (in its low bit), `labels(valid)` giving
/// `completion_validity` from the valid rows.
fn score_views(
    output: &StringViewArray,
    truth: &StringViewArray,
    list_nulls: Option<&NullBuffer>,
    found: impl Fn(usize, u8) -> u8,
    labels: impl FnOnce(&BooleanBuffer) -> Option<DictionaryArray<Int8Type>>,
) -> Option<McqaOutput> {
    let len = output.len();
    let (o_valid, t_valid, l_valid) = (
        crate::valid_words(output.nulls(), len),
        crate::valid_words(truth.nulls(), len),
        crate::valid_words(list_nulls, len),
    );
    let words = len.div_ceil(64);
    let (mut valid, mut correct) = (Vec::with_capacity(words), Vec::with_capacity(words));
    // Per row: whether the output is non-empty and its first byte is one of the row's items
    // (`hit`), whether that byte is the ground truth's (`same`), and whether the row breaks
    // the shape (a ground truth that is not one ASCII character). Nulls are applied to the
    // words afterwards.
    let (ov, tv) = (output.views().get(..len)?, truth.views().get(..len)?);
    for (w, (ow, tw)) in ov.chunks(64).zip(tv.chunks(64)).enumerate() {
        let (mut hit, mut same, mut t_bad) = ([0u8; 64], [0u8; 64], [0u8; 64]);
        for (j, (&o, &t)) in ow.iter().zip(tw).enumerate() {
            let (o, t) = (o as u64, t as u64);
            let first = (o >> 32) as u8;
            hit[j] = u8::from(o as u32 > 0) & found(w * 64 + j, first);
            same[j] = u8::from(first == (t >> 32) as u8);
            t_bad[j] = u8::from(batch_memo::not_one_ascii(t) != 0);
        }
        let (hit, same, t_bad) = (pack_bytes(&hit), pack_bytes(&same), pack_bytes(&t_bad));
        if t_bad & t_valid[w] != 0 {
            return None;
        }
        let v = hit & o_valid[w] & l_valid[w];
        valid.push(v);
        correct.push(v & same & t_valid[w]);
    }
    let bits = |w: Vec<u64>| BooleanBuffer::new(Buffer::from_vec(w), 0, len);
    let valid = bits(valid);
    Some(McqaOutput {
        is_correct: BooleanArray::new(bits(correct), None),
        // Keys 0 and 1 over two labels: always a valid dictionary.
        completion_validity: labels(&valid)?,
    })
}

/// `completion_validity` from the valid rows' bits: key 1 (`VALID`) where set, else 0.
fn validity_labels(
    valid: &BooleanBuffer,
) -> Result<DictionaryArray<Int8Type>, arrow::error::ArrowError> {
    let keys = crate::bits_as(valid, |b| b as i8);
    let labels = Arc::new(StringArray::from(vec![INVALID, VALID]));
    DictionaryArray::try_new(Int8Array::from(keys), labels)
}

fn truth_char(s: &str, row: usize) -> Result<char, KernelError> {
    single_char(s).ok_or_else(|| KernelError::Value {
        row,
        input: "ground_truth_choice".to_owned(),
        value: s.to_owned(),
        message:
            "is not a single character (string_equals_mcqa needs one choice letter such as \"B\")"
                .to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::missing_count;
    use arrow::array::{Array, LargeStringArray, ListBuilder, StringBuilder, StringViewArray};

    const OUTPUTS: [Option<&str>; 9] = [
        Some("B"),
        Some("B. because"),
        Some(" C"),
        Some("b"),
        None,
        Some(""),
        Some("É"),
        Some("日本"),
        Some("D"),
    ];
    const TRUTH: [Option<&str>; 9] = [
        Some("B"),
        Some("B"),
        Some("C"),
        Some("B"),
        Some("A"),
        Some("A"),
        Some("É"),
        Some("日"),
        None,
    ];

    fn run(out: &dyn Array, choices: Choices<'_>) -> (Vec<f64>, Vec<String>) {
        let truth = StringArray::from(TRUTH.to_vec());
        let r = string_equals_mcqa(
            TextColumn::new(out, "output").unwrap(),
            TextColumn::new(&truth, "truth").unwrap(),
            choices,
            out.len(),
        )
        .unwrap();
        (
            crate::score_vec(&r.is_correct),
            validity_strings(&r.completion_validity),
        )
    }

    fn validity_strings(d: &DictionaryArray<Int8Type>) -> Vec<String> {
        let t = arrow::compute::cast(d, &arrow::datatypes::DataType::Utf8).unwrap();
        let t = t.as_any().downcast_ref::<StringArray>().unwrap();
        t.iter().map(|v| v.unwrap().to_owned()).collect()
    }

    #[test]
    fn without_choices_any_nonempty_output_is_valid() {
        let out = StringArray::from(OUTPUTS.to_vec());
        let (s, v) = run(&out, Choices::None);
        assert_eq!(s, [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
        assert_eq!(
            v,
            ["VALID", "VALID", "VALID", "VALID", "INVALID", "INVALID", "VALID", "VALID", "VALID"]
        );
    }

    #[test]
    fn fixed_choices_over_every_layout() {
        let fixed: Vec<String> = ["A", "B", "C", "É"].iter().map(|s| s.to_string()).collect();
        let utf8 = StringArray::from(OUTPUTS.to_vec());
        let large = LargeStringArray::from(OUTPUTS.to_vec());
        let view = StringViewArray::from(OUTPUTS.to_vec());
        for out in [&utf8 as &dyn Array, &large, &view] {
            let (s, v) = run(out, Choices::Fixed(&fixed));
            assert_eq!(s, [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
            assert_eq!(
                v,
                [
                    "VALID", "VALID", "INVALID", "INVALID", "INVALID", "INVALID", "VALID",
                    "INVALID", "INVALID"
                ]
            );
        }
    }

    #[test]
    fn per_row_list_and_json_choices() {
        let out = StringArray::from(vec![Some("C"), Some("C"), Some("A")]);
        let truth = StringArray::from(vec!["C", "C", "A"]);
        let mut lb = ListBuilder::new(StringBuilder::new());
        lb.append_value([Some("A"), Some("B"), Some("C")]);
        lb.append_value([Some("A"), Some("B")]);
        lb.append_null();
        let lists = lb.finish();
        let json = StringArray::from(vec![Some(r#"["A","B","C"]"#), Some("['A', 'B']"), None]);
        for choices in [&lists as &dyn Array, &json] {
            let r = string_equals_mcqa(
                TextColumn::new(&out, "o").unwrap(),
                TextColumn::new(&truth, "t").unwrap(),
                Choices::PerRow(choices),
                3,
            )
            .unwrap();
            assert_eq!(crate::score_vec(&r.is_correct), [1.0, 0.0, 0.0]);
            assert_eq!(
                validity_strings(&r.completion_validity),
                ["VALID", "INVALID", "INVALID"]
            );
        }
    }

    /// The per-row list caches (byte compare for Utf8 items, view compare for Utf8View items)
    /// never reuse a list they should not: repeated rows, a shorter list with the same prefix,
    /// a null item, an empty list and a switch back all score as if each row were fresh.
    #[test]
    fn list_choice_caches_agree_across_item_layouts() {
        use arrow::array::{GenericListBuilder, LargeStringBuilder, StringViewBuilder};
        let rows: Vec<Option<Vec<Option<&str>>>> = vec![
            Some(vec![Some("A"), Some("B"), Some("C")]),
            Some(vec![Some("A"), Some("B"), Some("C")]),
            Some(vec![Some("A"), Some("B")]),
            Some(vec![Some("A"), None, Some("C")]),
            Some(vec![Some("A"), None, Some("C")]),
            Some(vec![]),
            None,
            Some(vec![Some("A"), Some("B"), Some("C")]),
            Some(vec![Some("A"), Some("B")]),
        ];
        let outputs = ["C", "C", "C", "C", "B", "A", "A", "C", "B"];
        let truth = ["C", "B", "C", "C", "B", "A", "A", "C", "B"];
        let expect_valid = [
            "VALID", "VALID", "INVALID", "VALID", "INVALID", "INVALID", "INVALID", "VALID", "VALID",
        ];
        let expect_score = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0];
        let mut utf8 = ListBuilder::new(StringBuilder::new());
        let mut large = GenericListBuilder::<i32, _>::new(LargeStringBuilder::new());
        let mut view = ListBuilder::new(StringViewBuilder::new());
        for r in &rows {
            match r {
                Some(items) => {
                    utf8.append_value(items.clone());
                    large.append_value(items.clone());
                    view.append_value(items.clone());
                }
                None => {
                    utf8.append_null();
                    large.append_null();
                    view.append_null();
                }
            }
        }
        let (utf8, large, view) = (utf8.finish(), large.finish(), view.finish());
        let out = StringArray::from(outputs.to_vec());
        let gt = StringArray::from(truth.to_vec());
        for choices in [&utf8 as &dyn Array, &large, &view] {
            let r = string_equals_mcqa(
                TextColumn::new(&out, "o").unwrap(),
                TextColumn::new(&gt, "t").unwrap(),
                Choices::PerRow(choices),
                rows.len(),
            )
            .unwrap();
            assert_eq!(
                validity_strings(&r.completion_validity),
                expect_valid,
                "{}",
                choices.data_type()
            );
            assert_eq!(crate::score_vec(&r.is_correct), expect_score);
            // A slice of the lists (whose `values()` are the whole column's) scores its own
            // rows, as a batch cut from a larger one does.
            for k in 1..rows.len() {
                let n = rows.len() - k;
                let (c, o, g) = (choices.slice(k, n), out.slice(k, n), gt.slice(k, n));
                let r = string_equals_mcqa(
                    TextColumn::new(&o, "o").unwrap(),
                    TextColumn::new(&g, "t").unwrap(),
                    Choices::PerRow(c.as_ref()),
                    n,
                )
                .unwrap();
                assert_eq!(validity_strings(&r.completion_validity), expect_valid[k..]);
                assert_eq!(crate::score_vec(&r.is_correct), expect_score[k..]);
            }
        }
    }

    /// More distinct lists than the view cache holds, cycled: evicted lists are rebuilt, and
    /// every row is judged against its own list.
    #[test]
    fn view_cache_eviction_keeps_every_row_exact() {
        use arrow::array::StringViewBuilder;
        let letters = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L"];
        let mut lists = ListBuilder::new(StringViewBuilder::new());
        let (mut outs, mut expect) = (Vec::new(), Vec::new());
        for row in 0..60usize {
            // list k holds letters[k..k + 2]; 11 distinct lists, cycled with a stride
            let k = (row * 7) % 11;
            lists.append_value([Some(letters[k]), Some(letters[k + 1])]);
            let out = letters[row % 12];
            outs.push(out);
            expect.push(if out == letters[k] || out == letters[k + 1] {
                "VALID"
            } else {
                "INVALID"
            });
        }
        let lists = lists.finish();
        let out = StringArray::from(outs.clone());
        let r = string_equals_mcqa(
            TextColumn::new(&out, "o").unwrap(),
            TextColumn::new(&out, "t").unwrap(),
            Choices::PerRow(&lists),
            outs.len(),
        )
        .unwrap();
        assert_eq!(validity_strings(&r.completion_validity), expect);
    }

    /// Tasks of a suite scoring one output column against one `choices` list share its
    /// `completion_validity` (it does not depend on the ground truth), and each still gets
    /// what it gets alone; another output column gets its own.
    #[test]
    fn a_memo_shares_the_validity_of_one_output_and_list() {
        let rows: Vec<Option<&[Option<&str>]>> = vec![
            Some(&[Some("A"), Some("B")]),
            Some(&[Some("C"), Some("D")]),
            None,
            Some(&[Some("A"), Some("C")]),
        ];
        let lists = crate::batch_memo::tests::list(&rows);
        let output = StringViewArray::from(vec![Some("B"), Some("x"), Some("A"), None]);
        let other = StringViewArray::from(vec![Some("A"), Some("C"), Some("A"), Some("C")]);
        let truths = [
            StringViewArray::from(vec!["B", "C", "A", "A"]),
            StringViewArray::from(vec!["A", "D", "B", "C"]),
        ];
        let memo = BatchMemo::new();
        let score = |o: &StringViewArray, t: &StringViewArray, memo| {
            string_equals_mcqa_with(
                TextColumn::new(o, "o").unwrap(),
                TextColumn::new(t, "t").unwrap(),
                Choices::PerRow(&lists),
                4,
                None,
                None,
                memo,
            )
            .unwrap()
        };
        let keys = |d: &DictionaryArray<Int8Type>| d.keys().values().inner().as_ptr();
        let first = score(&output, &truths[0], Some(&memo));
        let second = score(&output, &truths[1], Some(&memo));
        assert_eq!(
            keys(&first.completion_validity),
            keys(&second.completion_validity)
        );
        for (got, t) in [(&first, &truths[0]), (&second, &truths[1])] {
            assert_eq!(*got, score(&output, t, None));
        }
        assert_eq!(
            validity_strings(&first.completion_validity),
            ["VALID", "INVALID", "INVALID", "INVALID"]
        );
        let theirs = score(&other, &truths[0], Some(&memo));
        assert_ne!(
            keys(&theirs.completion_validity),
            keys(&first.completion_validity)
        );
        assert_eq!(theirs, score(&other, &truths[0], None));
    }

    #[test]
    fn multi_character_truth_or_choice_is_an_error_with_its_row() {
        let out = StringArray::from(vec!["A", "B"]);
        let truth = StringArray::from(vec!["A", "yes"]);
        let e = string_equals_mcqa(
            TextColumn::new(&out, "o").unwrap(),
            TextColumn::new(&truth, "t").unwrap(),
            Choices::None,
            2,
        )
        .unwrap_err();
        assert_eq!(
            e,
            KernelError::Value {
                row: 1,
                input: "ground_truth_choice".into(),
                value: "yes".into(),
                message: "is not a single character (string_equals_mcqa needs one choice letter such as \"B\")".into()
            }
        );
        let json = StringArray::from(vec![r#"["A","B"]"#, r#"["yes","no"]"#]);
        let truth = StringArray::from(vec!["A", "B"]);
        let e = string_equals_mcqa(
            TextColumn::new(&out, "o").unwrap(),
            TextColumn::new(&truth, "t").unwrap(),
            Choices::PerRow(&json),
            2,
        )
        .unwrap_err();
        assert!(matches!(e, KernelError::Value { row: 1, ref value, .. } if value == "yes"));
    }

    #[test]
    fn missing_counts_null_output_or_truth() {
        let out = StringArray::from(OUTPUTS.to_vec());
        let truth = StringArray::from(TRUTH.to_vec());
        let n = missing_count(
            &TextColumn::new(&out, "o").unwrap(),
            &TextColumn::new(&truth, "t").unwrap(),
            9,
        );
        assert_eq!(n, 2);
    }
}
