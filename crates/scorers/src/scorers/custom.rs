//! `custom`: a minijinja `condition:` over `value`, `ground_truth` and the row, or a
//! user `function:` (the Python package's `functions=`) over the value and ground-truth
//! columns.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::GROUND_TRUTH_FIELDS;
use crate::input::{row_err, score_array, text, TextInput};
use crate::row_error::RowError;
use crate::row_error::{internal, CellRef};
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array, StringArray};
use evalscore_task::{FunctionRef, ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `custom`.
#[derive(Debug)]
pub struct Custom;

impl Kind for Custom {
    const ABOUT: About = About::new(
        &["custom"],
        "`is_correct` is 1.0 on the rows where `condition` (a minijinja expression over `value`, `ground_truth` and `sample`) is true, or the score that `function` (a function of the Python package) gives.",
        &[
            OptionDoc::optional("condition", "a minijinja expression over `value`, `ground_truth`, `sample` and `solver_output`; this or `function`"),
            OptionDoc::optional("function", "the name of a function given to the Python package's `functions=`; this or `condition`"),
            OptionDoc::optional("ground_truth", "template of the ground truth the condition or function sees"),
            crate::scorer::VALUE_OPTION,
        ],
        r#"{type: custom, condition: "value | length <= 280 and 'sorry' not in value | lower"}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let condition = cx.condition("condition")?;
        let function = cx.function("function")?;
        let check = match (condition, function) {
            (Some(c), None) => Check::Condition(Box::new(c)),
            (None, Some(f)) => Check::Function(f),
            (None, None) => {
                return Err(cx
                    .err("scorer `custom` needs `condition` or `function`")
                    .with_hint(
                        "e.g. `condition: \"value | length <= 280 and 'sorry' not in value | lower\"`, or `function: my_check` with the Python package's `functions={\"my_check\": fn}`",
                    ))
            }
            (Some(_), Some(_)) => {
                return Err(cx
                    .err_at(
                        "function",
                        "scorer `custom` takes `condition` or `function`, not both",
                    )
                    .with_hint("keep one: a minijinja `condition`, or a Python `function`"))
            }
        };
        Ok(Box::new(CustomScorer {
            check,
            ground_truth: cx.template("ground_truth")?,
            input: cx.text_input()?,
        }))
    }
}

/// What decides a row: exactly one of `condition` and `function`.
#[derive(Debug)]
enum Check {
    Condition(Box<Template>),
    Function(FunctionRef),
}

/// A bound `custom`.
#[derive(Debug)]
struct CustomScorer {
    check: Check,
    ground_truth: Option<Template>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = GROUND_TRUTH_FIELDS;

impl Scorer for CustomScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        let condition = match &self.check {
            Check::Condition(c) => Some(c.as_ref()),
            Check::Function(_) => None,
        };
        condition
            .into_iter()
            .chain(self.ground_truth.as_ref())
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn function(&self) -> Option<&FunctionRef> {
        match &self.check {
            Check::Function(f) => Some(f),
            Check::Condition(_) => None,
        }
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let (ctx, rows) = (input.ctx, input.rows);
        self.input.score(input, |v, fields| {
            let value_arr = match v.normalize {
                Some(n) => n.column(&v.column, rows),
                None => v.text.array(rows),
            };
            let g = self
                .ground_truth
                .as_ref()
                .map(|t| text(Some(t), ctx))
                .transpose()?;
            let g_arr = match (&g, v.normalize) {
                (Some(g), Some(n)) => {
                    let gc = g
                        .column()
                        .map_err(|e| row_err(self.ground_truth.as_ref(), e))?;
                    Some(n.column(&gc, rows))
                }
                (Some(g), None) => Some(g.array(rows)),
                (None, _) => None,
            };
            let missing = match &self.check {
                Check::Function(f) => {
                    let functions = input
                        .functions
                        .ok_or_else(|| internal(&format!("function `{}` was not bound", f.name)))?;
                    let out = crate::functions::call(
                        functions,
                        &f.name,
                        &value_arr,
                        g_arr.as_ref(),
                        rows,
                    )?;
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
                            Arc::new(Float64Array::from(
                                (0..rows)
                                    .map(|r| if absent(r) { 0.0 } else { f64s.value(r) })
                                    .collect::<Vec<_>>(),
                            ))
                        }
                    };
                    fields.insert("is_correct", scores);
                    missing
                }
                Check::Condition(condition) => {
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
                    let scores = BooleanArray::from(
                        results.iter().map(|r| *r == Some(true)).collect::<Vec<_>>(),
                    );
                    fields.insert("is_correct", score_array(scores));
                    missing
                }
            };
            if input.want("ground_truth") {
                let gt_field = g_arr.unwrap_or_else(|| Arc::new(StringArray::new_null(rows)));
                fields.insert("ground_truth", gt_field);
            }
            Ok(missing)
        })
    }
}
