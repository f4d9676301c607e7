//! Evaluating a compiled template over a record batch: literals and columns as they are,
//! expressions and renders row by row under the fuel and byte budgets.

use super::*;

impl Template {
    /// Evaluates the template for every row of `ctx.batch`.
    ///
    /// Null rule: a column cell that is null, an expression that yields none, and a rendered
    /// template that prints a null value all give a null (missing) row, never the text "none".
    pub fn evaluate(&self, ctx: &RowContext<'_>) -> Result<TemplateOutput, TemplateRowError> {
        match &self.kind {
            TemplateKind::Literal(s) => Ok(TemplateOutput::Scalar(s.clone())),
            TemplateKind::LiteralList(l) => Ok(TemplateOutput::List(l.clone())),
            TemplateKind::Column(name) => ctx
                .batch
                .column_by_name(name)
                .map(|c| TemplateOutput::Array(Arc::clone(c)))
                .ok_or_else(|| TemplateRowError {
                    row: 0,
                    message: format!("the input has no column `{name}`"),
                    per_row: false,
                }),
            TemplateKind::ModelOutput => ctx
                .model_output
                .map(|c| TemplateOutput::Array(Arc::clone(c)))
                .ok_or_else(|| TemplateRowError {
                    row: 0,
                    message: "the task has no model output column".to_owned(),
                    per_row: false,
                }),
            TemplateKind::Expression(expr) => {
                if let Some((column, filters)) = &self.vector {
                    if let Some(out) = ctx
                        .batch
                        .column_by_name(column)
                        .and_then(|c| filter_column(c, filters))
                    {
                        return Ok(TemplateOutput::Array(out));
                    }
                }
                let env = self.env()?;
                let compiled = env
                    .compile_expression_owned(expr.clone())
                    .map_err(|e| batch_error(&e))?;
                self.per_row(ctx, |row, context| match compiled.eval(context) {
                    Ok(v) if v.is_none() => Ok(None),
                    Ok(v) if has_undefined(&v, 0) => Err(undefined_row_error(row)),
                    Ok(v) => Ok(Some(v)),
                    Err(e) => Err(row_error(row, &e)),
                })
            }
            TemplateKind::Condition(_) => Err(TemplateRowError {
                row: 0,
                message: "a condition is evaluated with its value".to_owned(),
                per_row: false,
            }),
            TemplateKind::Render => {
                if let Some(out) = self.concat.as_ref().and_then(|p| concat_column(p, ctx)) {
                    return Ok(TemplateOutput::Array(out));
                }
                let env = self.env()?;
                let tmpl = env.get_template(&self.name).map_err(|e| batch_error(&e))?;
                self.per_row(ctx, |row, context| match tmpl.render(context) {
                    Ok(s) => Ok(Some(Value::from(s))),
                    Err(e) if e.detail() == Some(NULL_MARKER) => Ok(None),
                    Err(e) => Err(row_error(row, &e)),
                })
            }
        }
    }

    /// Evaluates a `custom` condition for every row: the expression is compiled once per
    /// batch, then run per row with `value` (the row of `value`), `ground_truth` (the row of
    /// `ground_truth`, none without one), `sample` and `solver_output.output` in scope.
    ///
    /// Null rule: a row whose value is null, or whose ground truth is null when one is given,
    /// is not evaluated and gives `None`. Otherwise the result is the expression's truthiness.
    pub fn evaluate_condition(
        &self,
        ctx: &RowContext<'_>,
        value: &dyn arrow::array::Array,
        ground_truth: Option<&dyn arrow::array::Array>,
    ) -> Result<Vec<Option<bool>>, TemplateRowError> {
        let TemplateKind::Condition(expr) = &self.kind else {
            return Err(TemplateRowError {
                row: 0,
                message: "not a condition".to_owned(),
                per_row: false,
            });
        };
        let env = self.env()?;
        let compiled = env
            .compile_expression_owned(expr.clone())
            .map_err(|e| batch_error(&e))?;
        let shared = Arc::new(Shared {
            batch: ctx.batch.clone(),
            model_output: ctx.model_output.cloned(),
            model_output_raw: ctx.model_output_raw.cloned(),
        });
        let n = ctx.batch.num_rows();
        let mut out = Vec::with_capacity(n);
        for row in 0..n {
            if value.is_null(row) || ground_truth.is_some_and(|g| g.is_null(row)) {
                out.push(None);
                continue;
            }
            let v = cell_to_value(value, row);
            let g = ground_truth.map_or_else(|| Value::from(()), |g| cell_to_value(g, row));
            let context = minijinja::context! {
                value => v,
                ground_truth => g,
                ..self.row_context(&shared, row)
            };
            let (r, over) =
                minijinja::budget::with_byte_budget(TEMPLATE_BYTES, || compiled.eval(context));
            let r = match r {
                _ if over => Err(too_large_row_error(row)),
                Ok(r) if r.is_undefined() => Err(undefined_row_error(row)),
                Ok(r) => Ok(r),
                Err(e) => Err(row_error(row, &e)),
            };
            match r {
                Ok(r) => out.push(Some(r.is_true())),
                Err(e) if e.is_undefined() && self.reads_null(&shared, row) => out.push(None),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn env(&self) -> Result<&Environment<'static>, TemplateRowError> {
        self.env.get().ok_or_else(|| TemplateRowError {
            row: 0,
            message: "template used before its task was compiled".to_owned(),
            per_row: false,
        })
    }

    /// What every row sees: `sample`, and `solver_output.output` when the template uses it.
    fn row_context(&self, shared: &Arc<Shared>, row: usize) -> Value {
        let sample = Value::from_object(RowObject {
            shared: Arc::clone(shared),
            row,
        });
        if self.model_output {
            let out = shared
                .model_output
                .as_ref()
                .map(|a| cell_to_value(a.as_ref(), row))
                .unwrap_or_default();
            let object = shared
                .model_output_raw
                .as_ref()
                .map(|a| model_output_object(a.as_ref(), row))
                .unwrap_or_default();
            minijinja::context! {
                sample => sample,
                solver_output => minijinja::context! { output => out },
                model_output => object,
            }
        } else {
            minijinja::context! { sample => sample }
        }
    }

    fn per_row(
        &self,
        ctx: &RowContext<'_>,
        mut f: impl FnMut(usize, Value) -> Result<Option<Value>, TemplateRowError>,
    ) -> Result<TemplateOutput, TemplateRowError> {
        let shared = Arc::new(Shared {
            batch: ctx.batch.clone(),
            model_output: ctx.model_output.cloned(),
            model_output_raw: ctx.model_output_raw.cloned(),
        });
        let n = ctx.batch.num_rows();
        let mut values = Vec::with_capacity(n);
        let mut total = 0usize;
        for row in 0..n {
            let (r, over) = minijinja::budget::with_byte_budget(TEMPLATE_BYTES, || {
                f(row, self.row_context(&shared, row))
            });
            let v = match r {
                _ if over => return Err(too_large_row_error(row)),
                Err(e) if e.is_undefined() && self.reads_null(&shared, row) => None,
                other => other?,
            };
            if let Some(v) = &v {
                let bytes = value_bytes(v, TEMPLATE_BYTES);
                if bytes > TEMPLATE_BYTES {
                    return Err(too_large_row_error(row));
                }
                total += bytes;
                if total > BATCH_TEMPLATE_BYTES {
                    return Err(TemplateRowError {
                        row,
                        message: format!(
                            "its values for the {} rows of one batch add up to more than {} MiB",
                            n,
                            BATCH_TEMPLATE_BYTES >> 20
                        ),
                        per_row: false,
                    });
                }
            }
            values.push(v);
        }
        Ok(TemplateOutput::Array(values_to_array(&values)))
    }

    /// Whether a cell this template reads holds a null at some depth on `row`: reaching
    /// into a null struct (`sample.meta.n` where `meta` is null) gives undefined, and that
    /// row is missing, as a null column cell is, rather than an error.
    fn reads_null(&self, shared: &Shared, row: usize) -> bool {
        let batch = &shared.batch;
        let columns: Vec<&ArrayRef> = if self.all_columns {
            batch.columns().iter().collect()
        } else {
            self.columns
                .iter()
                .filter_map(|c| batch.column_by_name(c))
                .collect()
        };
        let output = self
            .model_output
            .then_some(shared.model_output_raw.as_ref())
            .flatten();
        columns
            .into_iter()
            .chain(output)
            .any(|c| cell_has_null(c.as_ref(), row, 0))
    }
}

/// A row whose template built more than [`TEMPLATE_BYTES`].
fn too_large_row_error(row: usize) -> TemplateRowError {
    TemplateRowError {
        row,
        message: format!(
            "the template builds more than {} MiB for one row (the per-row limit)",
            TEMPLATE_BYTES >> 20
        ),
        per_row: true,
    }
}

/// The bytes a value takes as a text cell, or as a list of text cells (each item's text and
/// its offset), counted up to a little past `limit`.
fn value_bytes(v: &Value, limit: usize) -> usize {
    if let Some(s) = v.as_str() {
        return s.len();
    }
    if v.kind() == minijinja::value::ValueKind::Seq {
        if let Ok(items) = v.try_iter() {
            let mut n = 0usize;
            for item in items {
                n += 8 + item
                    .as_str()
                    .map_or_else(|| item.to_string().len(), str::len);
                if n > limit {
                    break;
                }
            }
            return n;
        }
    }
    v.to_string().len()
}

fn row_error(row: usize, e: &minijinja::Error) -> TemplateRowError {
    let message = if e.kind() == ErrorKind::OutOfFuel {
        format!("the template ran out of fuel ({TEMPLATE_FUEL} steps per row); it probably loops without end")
    } else if e.kind() == ErrorKind::UndefinedError {
        match e.line() {
            Some(line) if line > 1 => format!("{UNDEFINED_MESSAGE} (template line {line})"),
            _ => UNDEFINED_MESSAGE.to_owned(),
        }
    } else {
        let mut m = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            m.push_str(&format!(": {s}"));
            source = s.source();
        }
        m
    };
    TemplateRowError {
        row,
        message,
        per_row: true,
    }
}

/// A template error that is not about one row (compiling it for the batch).
fn batch_error(e: &minijinja::Error) -> TemplateRowError {
    TemplateRowError {
        per_row: false,
        ..row_error(0, e)
    }
}
