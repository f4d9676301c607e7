//! Every lexical scorer against the golden file of `scripts/golden/lexical.py` (sacrebleu,
//! rouge-score, rapidfuzz and the SQuAD v1.1 functions), to 1e-9: the pure functions, and
//! the Arrow kernel over Utf8, LargeUtf8 and Utf8View values with the references as a list
//! column (nulls included).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use arrow::array::{
    Array, LargeStringArray, ListBuilder, StringArray, StringBuilder, StringViewArray,
};
use evalscore_kernels::{graded, Batch, Expected, Lexical, RougeVariant, TextColumn};
use serde_json::Value;

struct Case {
    prediction: Option<String>,
    references: Option<Vec<String>>,
    want: Value,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/lexical.jsonl");
    let text = std::fs::read_to_string(path).expect("golden file");
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("json line");
            Case {
                prediction: v["prediction"].as_str().map(str::to_owned),
                references: v["references"].as_array().map(|a| {
                    a.iter()
                        .map(|x| x.as_str().expect("string").to_owned())
                        .collect()
                }),
                want: v,
            }
        })
        .collect()
}

const MEASURES: [(&str, Lexical); 7] = [
    ("f1", Lexical::F1),
    ("rouge1", Lexical::Rouge(RougeVariant::Rouge1)),
    ("rouge2", Lexical::Rouge(RougeVariant::Rouge2)),
    ("rougeL", Lexical::Rouge(RougeVariant::RougeL)),
    ("bleu", Lexical::Bleu),
    ("chrf", Lexical::Chrf),
    ("levenshtein", Lexical::Levenshtein),
];

#[test]
fn golden_file_is_large_enough() {
    let cases = cases();
    assert!(cases.len() >= 200, "{} cases", cases.len());
    assert!(cases.iter().any(|c| c.prediction.is_none()));
    assert!(cases.iter().any(|c| c.references.is_none()));
    assert!(cases.iter().any(|c| c.prediction.as_deref() == Some("")));
    assert!(cases
        .iter()
        .any(|c| c.prediction.as_deref().is_some_and(|p| !p.is_ascii())));
}

#[test]
fn pure_functions_match_the_references() {
    let mut failures = Vec::new();
    for (i, c) in cases().iter().enumerate() {
        let (Some(p), Some(refs)) = (&c.prediction, &c.references) else {
            continue;
        };
        for (name, m) in MEASURES {
            let want = c.want[name].as_f64().expect("score");
            let got = m.score(p, refs);
            if (got - want).abs() > 1e-9 {
                failures.push(format!(
                    "line {}: {name}({p:?}, {refs:?}) = {got}, want {want}",
                    i + 1
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn arrow_kernel_matches_over_every_layout() {
    let cases = cases();
    let preds: Vec<Option<&str>> = cases.iter().map(|c| c.prediction.as_deref()).collect();
    let mut lists = ListBuilder::new(StringBuilder::new());
    for c in &cases {
        match &c.references {
            Some(r) => {
                for s in r {
                    lists.values().append_value(s);
                }
                lists.append(true);
            }
            None => lists.append(false),
        }
    }
    let refs = lists.finish();
    let layouts: [Box<dyn Array>; 3] = [
        Box::new(StringArray::from(preds.clone())),
        Box::new(LargeStringArray::from(preds.clone())),
        Box::new(StringViewArray::from(preds.clone())),
    ];
    let nulls = cases
        .iter()
        .filter(|c| c.prediction.is_none() || c.references.is_none())
        .count();
    for a in &layouts {
        let col = TextColumn::new(a.as_ref(), "value").unwrap();
        for (name, m) in MEASURES {
            let out = graded(
                Batch::new(col, None, cases.len()),
                Expected::PerRow(&refs),
                m,
                0.5,
            )
            .unwrap();
            let score = out.score.as_ref().expect("a graded score");
            assert_eq!(out.missing, nulls);
            assert_eq!(score.null_count(), 0);
            for (i, c) in cases.iter().enumerate() {
                let want = c.want[name].as_f64().expect("score");
                let got = score.value(i);
                assert!(
                    (got - want).abs() <= 1e-9,
                    "line {}: {name} = {got}, want {want}",
                    i + 1
                );
                assert_eq!(out.is_correct.value(i), got >= 0.5);
            }
        }
    }
}
