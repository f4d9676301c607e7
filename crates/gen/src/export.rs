//! The `export` profile of `synthetic`: rows shaped like a real evaluation export rather than
//! like a clean benchmark file, with the same columns as the default profile.
//!
//! - 30% free-text rows: a free-text prompt, a null `answer` (a free-text reference is not a
//!   choice letter, and the job's `string_equals_mcqa` would refuse it), null `choices` and
//!   `choices_json`, and outputs such as `São Paulo`, `6.022e23`, `x = 4`.
//! - Multiple-choice rows (3, 4 or 5 choices) whose outputs carry explanations (`B. because
//!   ...`, `C) ...`, `The answer is D`), leading whitespace, lower case, fullwidth and CJK first
//!   characters and combining marks.
//! - 1% null and 0.5% empty outputs over all rows.
//! - Labels mostly `yes`/`no`, with some `Yes`, `maybe` and nulls on both sides.

use std::fmt::Write as _;

use arrow::array::StringBuilder;

use crate::rng::Rng;
use crate::rows::{append_words, mcqa_answer_and_choices, mcqa_prompt, Builders, LETTERS, LOWER};

/// Fullwidth forms of [`LETTERS`]: look like a choice, are not one.
const FULLWIDTH: [&str; 5] = ["Ａ", "Ｂ", "Ｃ", "Ｄ", "Ｅ"];

/// Openings of answers written in Chinese or Japanese before the letter.
const CJK_LEADS: [&str; 4] = ["答案是 ", "答：", "选", "正解は"];

/// Combining marks that follow a letter (the first character stays the letter).
const COMBINING: [&str; 3] = ["\u{301}", "\u{308}", "\u{332}"];

/// Free-text answers: non-ASCII letters, precomposed and decomposed accents, numbers in
/// scientific notation, equations, scripts other than Latin, fullwidth text, and answers whose
/// first letter is a choice letter (`A`-`E`) although the row has no choices.
const FREE_ANSWERS: [&str; 32] = [
    "São Paulo",
    "6.022e23",
    "x = 4",
    "Paris",
    "42",
    "Zürich",
    "Zu\u{308}rich",
    "東京",
    "Москва",
    "H₂O",
    "Δ = b² − 4ac",
    "−273.15 °C",
    "1/2",
    "3.14159",
    "Napoléon Bonaparte",
    "photosynthesis",
    "mitochondria",
    "1945",
    "√2",
    "Ｔｏｋｙｏ",
    "Canberra",
    "Avogadro's number",
    "DNA polymerase",
    "Einstein",
    "Beyoncé",
    "Ångström",
    "e^(iπ) + 1 = 0",
    "F = ma",
    "2.998 × 10^8 m/s",
    "Kraków",
    "ß-carotene",
    "Ελλάδα",
];

/// Generates row `id` of the export profile into the builders. Pure function of
/// `(seed, id)`.
pub(crate) fn gen_row(b: &mut Builders, seed: u64, id: u64) {
    let mut rng = Rng::for_row(seed, id);
    let free_text = rng.chance(300);
    // The output's null (1%) and empty (0.5%) rows, the same over both kinds of row.
    let output_shape = rng.below(1000);
    b.id.append_value(id as i64);
    if free_text {
        free_text_row(b, &mut rng, id, output_shape);
    } else {
        mcqa_row(b, &mut rng, id, output_shape);
    }
    labels(b, &mut rng);
}

/// Appends null or empty when `shape` says so; true when it did.
fn null_or_empty(out: &mut StringBuilder, shape: u64) -> bool {
    match shape {
        0..10 => out.append_null(),
        10..15 => out.append_value(""),
        _ => return false,
    }
    true
}

/// Appends `lead` and then at least `bytes` bytes of words, ending the value.
fn explain(out: &mut StringBuilder, rng: &mut Rng, lead: std::fmt::Arguments<'_>, bytes: usize) {
    let _ = out.write_fmt(lead);
    let start = out.values_slice().len();
    append_words(out, rng, start, bytes);
    out.append_value("");
}

fn mcqa_row(b: &mut Builders, rng: &mut Rng, id: u64, output_shape: u64) {
    let n_choices: usize = match rng.below(100) {
        0..5 => 3,
        5..15 => 5,
        _ => 4,
    };
    let answer_null = rng.chance(10);
    let answer = rng.below(n_choices as u64) as usize;
    mcqa_prompt(&mut b.prompt, rng, id, n_choices);

    // The correct letter with p=0.66, otherwise another of the row's letters.
    let letter = if answer_null || rng.chance(660) {
        answer
    } else {
        (answer + 1 + rng.below(n_choices as u64 - 1) as usize) % n_choices
    };
    let (l, o) = (LETTERS[letter], &mut b.output);
    if !null_or_empty(o, output_shape) {
        match rng.below(1000) {
            0..350 => o.append_value(l),
            350..500 => explain(o, rng, format_args!("{l}. because "), 20),
            500..580 => explain(o, rng, format_args!("{l}) "), 12),
            580..660 => o.append_value(format!("The answer is {l}")),
            660..700 => o.append_value(format!("Answer: {l}")),
            700..730 => o.append_value(format!(" {l}")),
            730..760 => explain(o, rng, format_args!("\n  {l}. because "), 16),
            760..800 => o.append_value(LOWER[letter]),
            800..820 => explain(o, rng, format_args!("{}. because ", LOWER[letter]), 16),
            820..845 => o.append_value(FULLWIDTH[letter]),
            845..860 => explain(o, rng, format_args!("{}．", FULLWIDTH[letter]), 12),
            860..900 => o.append_value(format!("{}{l}", rng.pick(&CJK_LEADS))),
            900..925 => o.append_value(format!("{l}{}", rng.pick(&COMBINING))),
            // A combining mark with nothing to combine with: it is the first character.
            925..930 => o.append_value(format!("{}{l}", rng.pick(&COMBINING))),
            930..960 => o.append_value(format!("**{l}**")),
            960..980 => explain(o, rng, format_args!("({l}) "), 12),
            _ => o.append_value("I am not sure."),
        }
    }

    mcqa_answer_and_choices(b, (!answer_null).then_some(answer), n_choices);
}

fn free_text_row(b: &mut Builders, rng: &mut Rng, id: u64, output_shape: u64) {
    // "Question 17: <words>? Answer in a few words:", 200..=600 bytes: the words stop at
    // most 9 bytes past their goal (the longest word and its space), 10 are allowed for.
    let total = rng.range(210, 600) as usize;
    const SUFFIX: &str = "? Answer in a few words:";
    let p = &mut b.prompt;
    let row_start = p.values_slice().len();
    let _ = write!(p, "Question {id}: ");
    append_words(p, rng, row_start, total - SUFFIX.len() - 10);
    p.append_value(SUFFIX);

    let o = &mut b.output;
    if !null_or_empty(o, output_shape) {
        let text = rng.pick(&FREE_ANSWERS);
        match rng.below(1000) {
            0..550 => o.append_value(text),
            550..750 => explain(o, rng, format_args!("{text}, because "), 20),
            750..850 => o.append_value(format!("The answer is {text}.")),
            850..900 => o.append_value(format!(" {text}")),
            900..950 => o.append_value(text.to_lowercase()),
            _ => {
                let _ = write!(o, "{text} (");
                let start = o.values_slice().len();
                append_words(o, rng, start, 12);
                o.append_value(")");
            }
        }
    }
    b.answer.append_null();
    b.choices.append_null();
    b.choices_json.append_null();
}

fn labels(b: &mut Builders, rng: &mut Rng) {
    let gt = match rng.below(1000) {
        0..10 => None,
        10..20 => Some("Yes"),
        20..25 => Some("maybe"),
        x if x < 25 + 440 => Some("yes"),
        _ => Some("no"),
    };
    b.label_gt.append_option(gt);
    let positive = matches!(gt, Some("yes" | "Yes"));
    match rng.below(1000) {
        0..10 => b.label_pred.append_null(),
        10..30 => b.label_pred.append_value("Yes"),
        30..40 => b.label_pred.append_value("maybe"),
        x => {
            let agree = x < 40 + 820;
            b.label_pred
                .append_value(if positive == agree { "yes" } else { "no" });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use arrow::array::{Array, AsArray};
    use arrow::error::ArrowError;

    use crate::synthetic::{build_batch, schema, Profile};

    /// Counts of each spelling of a label column (null as `None`).
    fn spellings(col: &dyn Array) -> BTreeMap<Option<String>, usize> {
        let mut m = BTreeMap::new();
        for v in col.as_string::<i32>() {
            *m.entry(v.map(str::to_owned)).or_insert(0) += 1;
        }
        m
    }

    /// The shape of 20,000 rows of seed 42, as exact counts: a change to the profile shows
    /// here. The targets are in the comments.
    #[test]
    fn export_profile_shape() -> Result<(), ArrowError> {
        let b = build_batch(schema(), Profile::Export, 42, 0, 20_000)?;
        let col = |name: &str| b.column_by_name(name).expect(name);
        let prompt = col("prompt").as_string::<i32>();
        let output = col("output").as_string::<i32>();
        let answer = col("answer").as_string::<i32>();
        let choices = col("choices").as_list::<i32>();
        let choices_json = col("choices_json").as_string::<i32>();

        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut count = |k| *counts.entry(k).or_insert(0) += 1;
        for row in 0..b.num_rows() {
            let chars = prompt.value(row).chars().count();
            assert!((200..=600).contains(&chars), "row {row}: prompt of {chars}");
            let free = choices.is_null(row);
            assert_eq!(choices_json.is_null(row), free, "row {row}");
            if free {
                count("free-text");
                assert!(answer.is_null(row), "row {row}: a free-text answer");
            } else {
                count(
                    ["3 choices", "4 choices", "5 choices"][choices.value_length(row) as usize - 3],
                );
                if answer.is_null(row) {
                    count("mcqa null answer");
                }
            }
            if output.is_null(row) {
                count("null output");
                continue;
            }
            let text = output.value(row);
            let Some(first) = text.chars().next() else {
                count("empty output");
                continue;
            };
            if first.is_whitespace() {
                count("whitespace first");
            }
            if first.is_ascii_lowercase() && !free {
                count("mcqa lower-case first");
            }
            if ('\u{ff01}'..='\u{ff5e}').contains(&first) {
                count("fullwidth first");
            }
            if ('\u{4e00}'..='\u{9fff}').contains(&first) {
                count("CJK first");
            }
            let combining = |c: &char| ('\u{300}'..='\u{36f}').contains(c);
            if combining(&first) {
                count("combining first");
            }
            if text.chars().any(|c| combining(&c)) {
                count("combining mark");
            }
        }
        let expected = [
            ("free-text", 5952),            // 30%
            ("3 choices", 709),             // 5% of MCQA rows
            ("4 choices", 11981),           // 85%
            ("5 choices", 1358),            // 10%
            ("mcqa null answer", 156),      // 1%
            ("null output", 213),           // 1% of all rows
            ("empty output", 100),          // 0.5%
            ("whitespace first", 1133),     // " B", "\n  B. because", " São Paulo"
            ("mcqa lower-case first", 830), // "b", "b. because"
            ("fullwidth first", 700),       // "Ｂ", "Ｂ．...", "Ｔｏｋｙｏ"
            ("CJK first", 656),             // "答案是 B", "東京"
            ("combining first", 84),        // "\u{301}B"
            ("combining mark", 619),        // "B\u{301}", "Zu\u{308}rich"
        ];
        assert_eq!(counts, expected.into_iter().collect());

        // Spellings other than yes/no, and nulls, about 1-2% each (the metric excludes them).
        let labels = [
            ("label_gt", [179, 203, 106, 10754, 8758]),
            ("label_pred", [197, 368, 209, 10279, 8947]),
        ];
        let names = [None, Some("Yes"), Some("maybe"), Some("no"), Some("yes")];
        for (column, n) in labels {
            let want = names.iter().map(|k| k.map(str::to_owned)).zip(n).collect();
            assert_eq!(spellings(col(column)), want, "{column}");
        }
        Ok(())
    }

    /// The export shapes the profile promises (explanations, fullwidth, CJK, combining
    /// marks) appear verbatim.
    #[test]
    fn export_profile_has_named_outputs() -> Result<(), ArrowError> {
        let b = build_batch(schema(), Profile::Export, 42, 0, 5_000)?;
        let output = b
            .column_by_name("output")
            .expect("output")
            .as_string::<i32>();
        for want in [
            "São Paulo",
            "6.022e23",
            "x = 4",
            "The answer is D",
            "Ｂ",
            " C",
        ] {
            assert!(
                output.iter().flatten().any(|o| o == want),
                "no output {want:?}"
            );
        }
        for prefix in ["B. because ", "C) "] {
            assert!(
                output.iter().flatten().any(|o| o.starts_with(prefix)),
                "no output starting {prefix:?}"
            );
        }
        Ok(())
    }
}
