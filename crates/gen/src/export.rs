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
use crate::synthetic::{append_words, mcqa_prompt, Builders, LETTERS, LOWER};

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

/// Appends at least `bytes` bytes of words after what `out` holds, ending the value.
fn explain(out: &mut StringBuilder, rng: &mut Rng, bytes: usize) {
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
            350..500 => {
                let _ = write!(o, "{l}. because ");
                explain(o, rng, 20);
            }
            500..580 => {
                let _ = write!(o, "{l}) ");
                explain(o, rng, 12);
            }
            580..660 => {
                let _ = write!(o, "The answer is {l}");
                o.append_value("");
            }
            660..700 => {
                let _ = write!(o, "Answer: {l}");
                o.append_value("");
            }
            700..730 => {
                let _ = write!(o, " {l}");
                o.append_value("");
            }
            730..760 => {
                let _ = write!(o, "\n  {l}. because ");
                explain(o, rng, 16);
            }
            760..800 => o.append_value(LOWER[letter]),
            800..820 => {
                let _ = write!(o, "{}. because ", LOWER[letter]);
                explain(o, rng, 16);
            }
            820..845 => o.append_value(FULLWIDTH[letter]),
            845..860 => {
                let _ = write!(o, "{}．", FULLWIDTH[letter]);
                explain(o, rng, 12);
            }
            860..900 => {
                let _ = write!(o, "{}{l}", rng.pick(&CJK_LEADS));
                o.append_value("");
            }
            900..925 => {
                let _ = write!(o, "{l}{}", rng.pick(&COMBINING));
                o.append_value("");
            }
            925..930 => {
                // A combining mark with nothing to combine with: it is the first character.
                let _ = write!(o, "{}{l}", rng.pick(&COMBINING));
                o.append_value("");
            }
            930..960 => {
                let _ = write!(o, "**{l}**");
                o.append_value("");
            }
            960..980 => {
                let _ = write!(o, "({l}) ");
                explain(o, rng, 12);
            }
            _ => o.append_value("I am not sure."),
        }
    }

    if answer_null {
        b.answer.append_null();
    } else {
        b.answer.append_value(LETTERS[answer]);
    }
    for letter in &LETTERS[..n_choices] {
        b.choices.values().append_value(letter);
    }
    b.choices.append(true);
    b.choices_json.append_value(match n_choices {
        3 => r#"["A","B","C"]"#,
        4 => r#"["A","B","C","D"]"#,
        _ => r#"["A","B","C","D","E"]"#,
    });
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
            550..750 => {
                let _ = write!(o, "{text}, because ");
                explain(o, rng, 20);
            }
            750..850 => {
                let _ = write!(o, "The answer is {text}.");
                o.append_value("");
            }
            850..900 => {
                let _ = write!(o, " {text}");
                o.append_value("");
            }
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
    use super::*;
}
