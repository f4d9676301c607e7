//! `numeric_match`, `includes_all`, `not_regex`, `contains_json` and the graded scorers
//! (`f1`, `rouge`, `bleu`, `chrf`, `levenshtein`, `similarity`).

use super::{evaluate_any, list_as_text, row_err, score_array, text, Fields, ScorerInput};
use crate::row_error::{internal, RowError};
use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::DataType;
use evalscore_judge::cosine;
use evalscore_kernels::{
    contains_json, graded, graded_by, includes_all, not_regex, numeric_match, References,
};
use evalscore_task::{GradedMeasure, ScorerKind, Template, TemplateOutput};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The expected strings of `includes_all` and the graded scorers, and the `expected` field
/// when wanted: a literal text (a JSON or Python list text is several strings), a literal
/// list, or a column.
struct ExpectedList {
    out: TemplateOutput,
    fixed: Option<Vec<String>>,
}

impl ExpectedList {
    fn new(t: &Template, x: &ScorerInput<'_>) -> Result<Self, RowError> {
        let out = evaluate_any(t, x.ctx)?;
        let fixed = match &out {
            TemplateOutput::Scalar(s) => {
                Some(evalscore_kernels::text_as_list(s).unwrap_or_else(|| vec![s.clone()]))
            }
            TemplateOutput::List(l) => Some(l.clone()),
            TemplateOutput::Array(_) => None,
        };
        Ok(ExpectedList { out, fixed })
    }

    fn references(&self) -> References<'_> {
        match (&self.fixed, &self.out) {
            (Some(f), _) => References::Fixed(f),
            (None, TemplateOutput::Array(a)) => References::PerRow(a.as_ref()),
            (None, _) => References::Fixed(&[]),
        }
    }

    fn field(&self, rows: usize) -> ArrayRef {
        match &self.out {
            TemplateOutput::Scalar(s) => Arc::new(StringArray::from(vec![s.as_str(); rows])),
            TemplateOutput::List(l) => {
                let text = serde_json::to_string(l).unwrap_or_default();
                Arc::new(StringArray::from(vec![text.as_str(); rows]))
            }
            TemplateOutput::Array(a) => match a.data_type() {
                DataType::List(_) | DataType::LargeList(_) => list_as_text(a.as_ref()),
                _ => Arc::clone(a),
            },
        }
    }
}

/// `numeric_match`: the value's number against the expected number.
pub(super) fn score_numeric_match(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::NumericMatch {
        expected,
        tolerance,
        ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let e = text(Some(expected), x.ctx)?;
    let ec = e.column().map_err(|err| row_err(Some(expected), err))?;
    let out = numeric_match(x.vc, ec, *tolerance, x.norm, x.rows)
        .map_err(|err| row_err(Some(expected), err))?;
    fields.insert("is_correct", score_array(out.is_correct));
    if x.want("expected") {
        fields.insert("expected", e.array(x.rows));
    }
    Ok(out.missing)
}

/// `includes_all`: every expected string is in the value.
pub(super) fn score_includes_all(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::IncludesAll { expected, .. } = kind else {
        return Err(internal(&"scorer kind"));
    };
    let e = ExpectedList::new(expected, x)?;
    let out = includes_all(x.vc, e.references(), x.norm, x.rows)
        .map_err(|err| row_err(Some(expected), err))?;
    fields.insert("is_correct", score_array(out.is_correct));
    if x.want("expected") {
        fields.insert("expected", e.field(x.rows));
    }
    Ok(out.missing)
}

/// `not_regex`: the pattern is not in the value.
pub(super) fn score_not_regex(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::NotRegex { pattern, .. } = kind else {
        return Err(internal(&"scorer kind"));
    };
    let out = not_regex(x.vc, pattern, x.norm, x.rows);
    fields.insert("is_correct", score_array(out.is_correct));
    Ok(out.missing)
}

/// `contains_json`: some substring of the value is a JSON object or array.
pub(super) fn score_contains_json(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::ContainsJson { schema, .. } = kind else {
        return Err(internal(&"scorer kind"));
    };
    let out = contains_json(x.vc, schema.as_deref(), x.norm, x.rows);
    fields.insert("is_correct", score_array(out.is_correct));
    fields.insert("details", Arc::new(out.details) as ArrayRef);
    Ok(out.missing)
}

/// The graded scorers: `score` and `is_correct = score >= threshold`.
pub(super) fn score_graded(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::Graded {
        measure,
        expected,
        threshold,
        ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let e = ExpectedList::new(expected, x)?;
    let out = match measure {
        GradedMeasure::Lexical(l) => graded(x.vc, e.references(), *l, *threshold, x.norm, x.rows),
        GradedMeasure::Embedding { model_key, .. } => {
            let judge = x
                .judge
                .ok_or_else(|| internal(&"similarity without a judge runtime"))?;
            // The texts of the batch (values and expected strings, after `normalize:`), each
            // embedded once, then every row scored with their vectors.
            let mut first_row: BTreeMap<String, usize> = BTreeMap::new();
            let mut row = 0;
            graded_by(
                x.vc,
                e.references(),
                *threshold,
                x.norm,
                x.rows,
                |v, refs| {
                    for t in std::iter::once(v).chain(refs.iter().map(String::as_str)) {
                        first_row.entry(t.to_owned()).or_insert(row);
                    }
                    row += 1;
                    0.0
                },
            )
            .map_err(|err| row_err(Some(expected), err))?;
            let texts: Vec<String> = first_row.keys().cloned().collect();
            let vectors = crate::judging::embeddings(judge, model_key, &texts, &first_row)?;
            graded_by(
                x.vc,
                e.references(),
                *threshold,
                x.norm,
                x.rows,
                |v, refs| {
                    let Some(a) = vectors.get(v) else { return 0.0 };
                    refs.iter()
                        .filter_map(|r| vectors.get(r.as_str()).and_then(|b| cosine(a, b)))
                        .fold(0.0, f64::max)
                },
            )
        }
    }
    .map_err(|err| row_err(Some(expected), err))?;
    fields.insert("score", Arc::new(out.score) as ArrayRef);
    fields.insert("is_correct", score_array(out.is_correct));
    if x.want("expected") {
        fields.insert("expected", e.field(x.rows));
    }
    Ok(out.missing)
}
