//! One scorer over one batch: the value (after `extract:`), then one function per scorer
//! kind, each building the fields it produces.

use crate::row_error::internal;
use crate::row_error::{CellRef, RowError};
use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Scalar, StringArray};
use evalscore_kernels::{
    check_injection, exact, match_check, missing_count, parse_choice_list, pass_fail, regex_check,
    string_equals, string_equals_mcqa_with, string_equals_normalized, valid_json, Choices,
    Expected, KernelError, Needles,
};
use evalscore_task::{RowContext, ScorerKind, ScorerSpec, Template, TemplateKind, TemplateOutput};
use evalscore_text::{to_text, TextColumn};
use std::collections::BTreeMap;
use std::sync::Arc;

mod more;

/// One scorer's fields for one batch.
pub(crate) struct Scored {
    pub fields: BTreeMap<&'static str, ArrayRef>,
    pub missing: u64,
    /// Judge replies that could not be read (`judge_status = invalid`).
    pub invalid: u64,
}

/// A template's value as text: an array, or one scalar for every row.
pub(crate) enum Text {
    Array(ArrayRef),
    Scalar(String),
    /// No template: null on every row.
    Null,
}

impl Text {
    pub(crate) fn column(&self) -> Result<TextColumn<'_>, KernelError> {
        match self {
            Text::Array(a) => Ok(TextColumn::new(a.as_ref(), "value")?),
            Text::Scalar(s) => Ok(TextColumn::scalar(Some(s))),
            Text::Null => Ok(TextColumn::scalar(None)),
        }
    }

    fn datum(&self) -> Box<dyn arrow::array::Datum + '_> {
        match self {
            Text::Array(a) => Box::new(Arc::clone(a)),
            Text::Scalar(s) => Box::new(Scalar::new(StringArray::from(vec![s.as_str()]))),
            Text::Null => Box::new(Scalar::new(StringArray::new_null(1))),
        }
    }

    pub(crate) fn array(&self, rows: usize) -> ArrayRef {
        match self {
            Text::Array(a) => Arc::clone(a),
            Text::Scalar(s) => Arc::new(StringArray::from(vec![s.as_str(); rows])),
            Text::Null => Arc::new(StringArray::new_null(rows)),
        }
    }
}

fn describe(t: &Template) -> String {
    match &t.kind {
        TemplateKind::Column(c) => format!("column `{c}` (`{}`)", t.what),
        _ => format!("`{}`", t.what),
    }
}

fn row_err(t: Option<&Template>, e: impl Into<KernelError>) -> RowError {
    let e: KernelError = e.into();
    let what = t.map_or_else(|| "the model output".to_owned(), describe);
    match e {
        KernelError::Value {
            row,
            value,
            message,
            ..
        } => RowError {
            row,
            message: format!("{what} value {value:?} {message}"),
            per_row: true,
            cell: Some(Box::new(CellRef {
                column: Some(t.map_or_else(|| "model output".to_owned(), column_of)),
                value: Some(value),
            })),
            ..RowError::default()
        },
        KernelError::Type { data_type, .. } => RowError {
            row: 0,
            message: format!("{what} has type {data_type}, which cannot be read as text"),
            hint: Some("point the template at a text, number or boolean column, or convert it in the template (e.g. `{{ sample.col | tojson }}`)".to_owned()),
            ..RowError::default()
        },
        KernelError::Arrow(m) => RowError {
            row: 0,
            message: format!("{what}: {m}"),
            ..RowError::default()
        },
    }
}

/// The input column a template reads, or its scorer option when it computes a value.
fn column_of(t: &Template) -> String {
    match &t.kind {
        TemplateKind::Column(c) => c.clone(),
        _ => t.what.clone(),
    }
}

/// A template's failure as a row error (or a batch error, when it is not about one row).
fn template_err(t: &Template, e: evalscore_task::TemplateRowError) -> RowError {
    RowError {
        row: e.row,
        message: format!("template of `{}` failed: {}", t.what, e.message),
        per_row: e.per_row,
        cell: Some(Box::new(CellRef {
            column: Some(column_of(t)),
            value: None,
        })),
        ..RowError::default()
    }
}

/// Evaluates a text template (or the model output when `t` is `None`).
pub(crate) fn text(t: Option<&Template>, ctx: &RowContext<'_>) -> Result<Text, RowError> {
    let Some(t) = t else {
        let out = ctx.model_output.ok_or_else(|| RowError {
            row: 0,
            message: "no model output column".to_owned(),
            hint: None,
            ..RowError::default()
        })?;
        return Ok(Text::Array(Arc::clone(out)));
    };
    match t.evaluate(ctx).map_err(|e| template_err(t, e))? {
        TemplateOutput::Scalar(s) => Ok(Text::Scalar(s)),
        TemplateOutput::List(l) => Ok(Text::Scalar(serde_json::to_string(&l).unwrap_or_default())),
        TemplateOutput::Array(a) => Ok(Text::Array(
            to_text(&a, &t.what).map_err(|e| row_err(Some(t), e))?,
        )),
    }
}

/// Evaluates a template whose value may be a list (the `expected` of the match family):
/// list arrays stay lists, other arrays become text.
fn evaluate_any(t: &Template, ctx: &RowContext<'_>) -> Result<TemplateOutput, RowError> {
    let out = t.evaluate(ctx).map_err(|e| template_err(t, e))?;
    Ok(match out {
        TemplateOutput::Array(a)
            if !matches!(
                a.data_type(),
                arrow::datatypes::DataType::List(_) | arrow::datatypes::DataType::LargeList(_)
            ) =>
        {
            TemplateOutput::Array(to_text(&a, &t.what).map_err(|e| row_err(Some(t), e))?)
        }
        other => other,
    })
}

/// A list column as text (a JSON array per row), for the `expected` field.
fn list_as_text(a: &dyn Array) -> ArrayRef {
    let rows: Vec<Option<String>> = (0..a.len())
        .map(|r| {
            if a.is_null(r) {
                return None;
            }
            let v = evalscore_task::cell_to_value(a, r);
            Some(serde_json::to_string(&v).unwrap_or_default())
        })
        .collect();
    Arc::new(StringArray::from(rows))
}

/// A scorer's `is_correct` field: the kernel's pass mask, which the score writer writes as
/// Float64 0.0/1.0 and the metrics read as those scores.
fn score_array(scores: BooleanArray) -> ArrayRef {
    Arc::new(scores)
}

/// Scores one scorer over a batch. Only the fields in `needed` (written ones and those that
/// metrics read) are built, so an unused `value` or `expected` text costs nothing.
pub(crate) fn score_scorer(
    spec: &ScorerSpec,
    ctx: &RowContext<'_>,
    rows: usize,
    needed: &std::collections::BTreeSet<&'static str>,
    judge: Option<&crate::judging::JudgeCtx<'_>>,
    functions: Option<&dyn crate::functions::UserFunctions>,
) -> Result<Scored, RowError> {
    if let ScorerKind::Judge(j) = &spec.kind {
        return crate::judging::score_judge(j, ctx, rows, needed, judge);
    }
    let want = |f: &str| needed.contains(f);
    let mut fields: Fields = BTreeMap::new();
    let norm = spec.normalize.as_deref();
    // The value, after `extract:` when the scorer has one.
    let value_t = spec.kind.value();
    let mut v = text(value_t, ctx)?;
    let mut found: Option<Vec<bool>> = None;
    if let Some(x) = &spec.extract {
        let col = v.column().map_err(|e| row_err(value_t, e))?;
        let e = x.column(&col, rows);
        found = Some(e.found);
        v = Text::Array(e.values);
    }
    let vc = v.column().map_err(|e| row_err(value_t, e))?;
    let x = ScorerInput {
        ctx,
        rows,
        norm,
        v: &v,
        vc,
        found: found.as_deref(),
        needed,
        judge,
        functions,
    };
    let missing = match &spec.kind {
        ScorerKind::StringEquals { .. } => score_string_equals(&x, &spec.kind, &mut fields)?,
        ScorerKind::StringEqualsMcqa { .. } => {
            score_string_equals_mcqa(&x, &spec.kind, &mut fields)?
        }
        ScorerKind::Match { .. } => score_match(&x, &spec.kind, &mut fields)?,
        ScorerKind::ValidJson { .. } => score_valid_json(&x, &spec.kind, &mut fields)?,
        ScorerKind::CheckInjection { .. } => score_check_injection(&x, &spec.kind, &mut fields)?,
        ScorerKind::Custom { .. } => score_custom(&x, &spec.kind, &mut fields)?,
        ScorerKind::Exact { .. } => score_exact(&x, &spec.kind, &mut fields)?,
        ScorerKind::PassFail { .. } => score_pass_fail(&x, &spec.kind, &mut fields)?,
        ScorerKind::Regex { .. } => score_regex(&x, &spec.kind, &mut fields)?,
        ScorerKind::NumericMatch { .. } => more::score_numeric_match(&x, &spec.kind, &mut fields)?,
        ScorerKind::IncludesAll { .. } => more::score_includes_all(&x, &spec.kind, &mut fields)?,
        ScorerKind::NotRegex { .. } => more::score_not_regex(&x, &spec.kind, &mut fields)?,
        ScorerKind::ContainsJson { .. } => more::score_contains_json(&x, &spec.kind, &mut fields)?,
        ScorerKind::Graded { .. } => more::score_graded(&x, &spec.kind, &mut fields)?,
        ScorerKind::Judge(_) => return Err(internal(&"judge scorer")),
    };
    if want("value") {
        fields.insert("value", v.array(rows));
    }
    Ok(Scored {
        fields,
        missing: missing as u64,
        invalid: 0,
    })
}

/// A scorer's fields by name.
type Fields = BTreeMap<&'static str, ArrayRef>;

/// What every scorer kind reads: the rows, the value after `extract:`, the normalization.
struct ScorerInput<'a> {
    ctx: &'a RowContext<'a>,
    rows: usize,
    norm: Option<&'a evalscore_kernels::Normalizer>,
    v: &'a Text,
    vc: TextColumn<'a>,
    found: Option<&'a [bool]>,
    needed: &'a std::collections::BTreeSet<&'static str>,
    /// The model endpoints, for `similarity` by embedding.
    judge: Option<&'a crate::judging::JudgeCtx<'a>>,
    /// The user functions, for `custom` with `function:`.
    functions: Option<&'a dyn crate::functions::UserFunctions>,
}

impl ScorerInput<'_> {
    fn want(&self, field: &str) -> bool {
        self.needed.contains(field)
    }
}

/// `string_equals`: the value equals the ground truth (byte-exact, or after `normalize:`).
fn score_string_equals(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::StringEquals { ground_truth, .. } = kind else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, v, vc) = (x.ctx, x.rows, x.norm, x.v, x.vc);
    let g = text(Some(ground_truth), ctx)?;
    let gc = g.column().map_err(|e| row_err(Some(ground_truth), e))?;
    // A metrics-only scorer (`write_scores: false`) whose metrics read other fields
    // does not need the comparison at all.
    if x.want("is_correct") {
        let scores: ArrayRef = match norm {
            Some(n) => score_array(string_equals_normalized(vc, gc, n, rows)),
            None => {
                let scores = string_equals(v.datum().as_ref(), g.datum().as_ref())
                    .map_err(|e| row_err(None, e))?;
                if scores.len() == rows {
                    Arc::new(scores)
                } else {
                    let s = scores.len() == 1 && scores.value(0);
                    Arc::new(BooleanArray::from(vec![s; rows]))
                }
            }
        };
        fields.insert("is_correct", scores);
    }
    let missing = missing_count(&vc, &gc, rows);
    if x.want("ground_truth") {
        fields.insert("ground_truth", g.array(rows));
    }
    Ok(missing)
}

/// `string_equals_mcqa`: the output's first character against the ground-truth choice.
fn score_string_equals_mcqa(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::StringEqualsMcqa {
        ground_truth_choice,
        choices,
        ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, vc, found) = (x.ctx, x.rows, x.norm, x.vc, x.found);
    let g = text(Some(ground_truth_choice), ctx)?;
    let gc = g
        .column()
        .map_err(|e| row_err(Some(ground_truth_choice), e))?;
    let choice_out = match choices {
        Some(t) => Some(t.evaluate(ctx).map_err(|e| template_err(t, e))?),
        None => None,
    };
    let parsed;
    let choice_arg = match &choice_out {
        None => Choices::None,
        Some(TemplateOutput::List(l)) => Choices::Fixed(l),
        Some(TemplateOutput::Array(a)) => Choices::PerRow(a.as_ref()),
        Some(TemplateOutput::Scalar(s)) => {
            parsed = parse_choice_list(s).ok_or_else(|| RowError {
                row: 0,
                message: format!("`choices` gives {s:?}, which is not a list"),
                hint: Some("give choices as a list: `choices: [A, B, C]`, a list column, or a JSON array string".to_owned()), ..RowError::default()
            })?;
            Choices::Fixed(&parsed)
        }
    };
    let out = string_equals_mcqa_with(vc, gc, choice_arg, rows, norm, found).map_err(|e| {
        let t = match &e {
            KernelError::Value { input, .. } if input == "choices" => choices.as_ref(),
            _ => Some(ground_truth_choice),
        };
        row_err(t, e)
    })?;
    let missing = missing_count(&vc, &gc, rows);
    fields.insert("is_correct", Arc::new(out.is_correct) as ArrayRef);
    fields.insert(
        "completion_validity",
        Arc::new(out.completion_validity) as ArrayRef,
    );
    if x.want("ground_truth") {
        fields.insert("ground_truth", g.array(rows));
    }
    Ok(missing)
}

/// The match family (`match`, `includes`, `fuzzy_match` and their `not_` forms).
fn score_match(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::Match {
        mode,
        negate,
        expected,
        needles,
        ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, vc) = (x.ctx, x.rows, x.norm, x.vc);
    let e = evaluate_any(expected, ctx)?;
    let fallback;
    let (arg, expected_field): (Expected<'_>, Option<ArrayRef>) = match &e {
        TemplateOutput::Scalar(_) | TemplateOutput::List(_) => {
            let n = match needles {
                Some(n) => n.as_ref(),
                None => {
                    fallback = match &e {
                        TemplateOutput::List(l) => Needles::new(l, norm),
                        TemplateOutput::Scalar(s) => Needles::new(
                            evalscore_kernels::text_as_list(s).unwrap_or_else(|| vec![s.clone()]),
                            norm,
                        ),
                        TemplateOutput::Array(_) => Needles::new(Vec::<String>::new(), norm),
                    };
                    &fallback
                }
            };
            let field = x.want("expected").then(|| {
                let text = match &e {
                    TemplateOutput::Scalar(s) => s.clone(),
                    TemplateOutput::List(l) => serde_json::to_string(l).unwrap_or_default(),
                    TemplateOutput::Array(_) => String::new(),
                };
                Arc::new(StringArray::from(vec![text.as_str(); rows])) as ArrayRef
            });
            (Expected::Fixed(n), field)
        }
        TemplateOutput::Array(a) => {
            let field = x.want("expected").then(|| {
                if matches!(
                    a.data_type(),
                    arrow::datatypes::DataType::List(_) | arrow::datatypes::DataType::LargeList(_)
                ) {
                    list_as_text(a.as_ref())
                } else {
                    Arc::clone(a)
                }
            });
            (Expected::PerRow(a.as_ref()), field)
        }
    };
    let out =
        match_check(vc, arg, *mode, *negate, norm, rows).map_err(|e| row_err(Some(expected), e))?;
    let missing = out.missing;
    fields.insert("is_correct", score_array(out.is_correct));
    if let Some(f) = expected_field {
        fields.insert("expected", f);
    }
    Ok(missing)
}

/// `valid_json`: the value parses as JSON (and fits `schema:`).
fn score_valid_json(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::ValidJson { schema, .. } = kind else {
        return Err(internal(&"scorer kind"));
    };
    let (rows, norm, vc) = (x.rows, x.norm, x.vc);
    let normalized;
    let vc = match norm {
        Some(n) => {
            normalized = n.column(&vc, rows);
            TextColumn::new(normalized.as_ref(), "value").map_err(|e| row_err(None, e))?
        }
        None => vc,
    };
    let out = valid_json(vc, schema.as_deref(), rows);
    let missing = out.missing;
    fields.insert("is_correct", score_array(out.is_correct));
    fields.insert("details", Arc::new(out.details) as ArrayRef);
    Ok(missing)
}

/// `check_injection`: the value shows no sign of a prompt injection.
fn score_check_injection(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::CheckInjection { .. } = kind else {
        return Err(internal(&"scorer kind"));
    };
    let (rows, norm, vc) = (x.rows, x.norm, x.vc);
    let normalized;
    let vc = match norm {
        Some(n) => {
            normalized = n.column(&vc, rows);
            TextColumn::new(normalized.as_ref(), "value").map_err(|e| row_err(None, e))?
        }
        None => vc,
    };
    let out = check_injection(vc, rows);
    let missing = out.missing;
    fields.insert("is_correct", score_array(out.is_correct));
    fields.insert("details", Arc::new(out.details) as ArrayRef);
    Ok(missing)
}

/// `custom`: a Jinja `condition:` over the value, the ground truth and the row.
fn score_custom(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::Custom {
        condition,
        function,
        ground_truth,
        ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, v, vc) = (x.ctx, x.rows, x.norm, x.v, x.vc);
    let value_arr = match norm {
        Some(n) => n.column(&vc, rows),
        None => v.array(rows),
    };
    let g = ground_truth
        .as_ref()
        .map(|t| text(Some(t), ctx))
        .transpose()?;
    let g_arr = match (&g, norm) {
        (Some(g), Some(n)) => {
            let gc = g.column().map_err(|e| row_err(ground_truth.as_ref(), e))?;
            Some(n.column(&gc, rows))
        }
        (Some(g), None) => Some(g.array(rows)),
        (None, _) => None,
    };
    let condition = match (condition, function) {
        (Some(c), _) => c,
        (None, Some(f)) => {
            let functions = x
                .functions
                .ok_or_else(|| internal(&format!("function `{}` was not bound", f.name)))?;
            let out =
                crate::functions::score(functions, &f.name, &value_arr, g_arr.as_ref(), rows)?;
            // The null rule of `condition`: a null value (or ground truth), or a null
            // result, scores 0.0 and counts as missing.
            let absent = |r: usize| {
                value_arr.is_null(r)
                    || g_arr.as_ref().is_some_and(|g| g.is_null(r))
                    || out.is_null(r)
            };
            let missing = (0..rows).filter(|&r| absent(r)).count();
            let scores: ArrayRef = match out.as_boolean_opt() {
                Some(b) => Arc::new(BooleanArray::from(
                    (0..rows)
                        .map(|r| !absent(r) && b.value(r))
                        .collect::<Vec<_>>(),
                )),
                None => {
                    let f64s = out.as_primitive::<arrow::datatypes::Float64Type>();
                    Arc::new(arrow::array::Float64Array::from(
                        (0..rows)
                            .map(|r| if absent(r) { 0.0 } else { f64s.value(r) })
                            .collect::<Vec<_>>(),
                    ))
                }
            };
            fields.insert("is_correct", scores);
            if x.want("ground_truth") {
                let gt_field = g_arr.unwrap_or_else(|| Arc::new(StringArray::new_null(rows)));
                fields.insert("ground_truth", gt_field);
            }
            return Ok(missing);
        }
        (None, None) => return Err(internal(&"custom scorer without condition or function")),
    };
    let results = condition
        .evaluate_condition(ctx, value_arr.as_ref(), g_arr.as_deref())
        .map_err(|e| RowError {
            row: e.row,
            message: format!("`{}` failed: {}", condition.what, e.message),
            per_row: e.per_row,
            cell: Some(Box::new(CellRef {
                column: Some(condition.what.clone()),
                value: None,
            })),
            ..RowError::default()
        })?;
    let missing = results.iter().filter(|r| r.is_none()).count();
    let scores = BooleanArray::from(results.iter().map(|r| *r == Some(true)).collect::<Vec<_>>());
    fields.insert("is_correct", score_array(scores));
    if x.want("ground_truth") {
        let gt_field = g_arr.unwrap_or_else(|| Arc::new(StringArray::new_null(rows)));
        fields.insert("ground_truth", gt_field);
    }
    Ok(missing)
}

/// `exact`: the value is the expected output, character for character.
fn score_exact(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::Exact {
        expected_output, ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, vc) = (x.ctx, x.rows, x.norm, x.vc);
    let e = text(Some(expected_output), ctx)?;
    let ec = e.column().map_err(|x| row_err(Some(expected_output), x))?;
    let out = exact(vc, ec, norm, rows);
    let missing = out.missing;
    fields.insert("is_correct", score_array(out.is_correct));
    fields.insert("details", Arc::new(out.details) as ArrayRef);
    if x.want("expected") {
        fields.insert("expected", e.array(rows));
    }
    Ok(missing)
}

/// `pass_fail`: a non-empty output holding the expected output (or any non-empty output without one).
fn score_pass_fail(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::PassFail {
        expected_output, ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, vc) = (x.ctx, x.rows, x.norm, x.vc);
    let e = match expected_output {
        Some(t) => text(Some(t), ctx)?,
        None => Text::Null,
    };
    let ec = e
        .column()
        .map_err(|x| row_err(expected_output.as_ref(), x))?;
    let out = pass_fail(vc, ec, norm, rows);
    let missing = out.missing;
    fields.insert("is_correct", score_array(out.is_correct));
    if x.want("expected") {
        fields.insert("expected", e.array(rows));
    }
    Ok(missing)
}

/// `regex`: the pattern is found in the value (and its group equals the ground truth).
fn score_regex(
    x: &ScorerInput<'_>,
    kind: &ScorerKind,
    fields: &mut Fields,
) -> Result<usize, RowError> {
    let ScorerKind::Regex {
        pattern,
        ground_truth,
        ..
    } = kind
    else {
        return Err(internal(&"scorer kind"));
    };
    let (ctx, rows, norm, vc) = (x.ctx, x.rows, x.norm, x.vc);
    let g = ground_truth
        .as_ref()
        .map(|t| text(Some(t), ctx))
        .transpose()?;
    let gc = g
        .as_ref()
        .map(|g| g.column())
        .transpose()
        .map_err(|e| row_err(ground_truth.as_ref(), e))?;
    let out = regex_check(vc, pattern, gc, norm, rows);
    let missing = out.missing;
    fields.insert("is_correct", score_array(out.is_correct));
    if x.want("ground_truth") {
        let gt_field = g.map_or_else(
            || Arc::new(StringArray::new_null(rows)) as ArrayRef,
            |g| g.array(rows),
        );
        fields.insert("ground_truth", gt_field);
    }
    Ok(missing)
}
