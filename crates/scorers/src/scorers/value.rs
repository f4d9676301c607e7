//! `value`: a template or column exposed as the field `value`, a number or a text, so that
//! scores already in the data (a judge's score, a latency, a label) feed metrics and
//! scores.parquet.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, template_err, ScoredValue, TextInput};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use arrow::array::{Array, ArrayRef, Float64Array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Schema};
use evalscore_kernels::KernelError;
use evalscore_task::{ScorerField, TaskError, Template, TemplateKind, TemplateOutput};
use evalscore_text::TextColumn;
use std::sync::Arc;

/// The kind `value`.
#[derive(Debug)]
pub struct Value;

impl Kind for Value {
    const ABOUT: About = About::new(
        &["value"],
        "The field `value` is the template `value` itself (after `extract:` and `normalize:`): a number when `value` is one column of numbers (`{{ sample.judge_score }}`, read as it is stored) or with `parse: number` (the text read as a number; a text that is not a number is a row error), else the text. A null stays null and counts as missing. It feeds metrics (`mean`, `std_dev`, `frequency`, `group_by`, classification) and is written to `scores.parquet`.",
        &[
            OptionDoc::required("value", "template (or one column) exposed as the field `value`"),
            OptionDoc::optional(
                "parse",
                "`number` or `text`; default `number` when `value` is one column of numbers (without `extract:` or `normalize:`), else `text`",
            ),
        ],
        r#"{type: value, value: "{{ sample.judge_score }}", parse: number}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        const EXAMPLE: &str = r#""{{ sample.judge_score }}""#;
        if cx.given("value").is_none() {
            return Err(cx.needs("value", EXAMPLE));
        }
        let input = cx.text_input()?;
        let plain = !input.extracts() && input.normalize().is_none();
        let one_column = input
            .value()
            .is_some_and(|t| matches!(t.kind, TemplateKind::Column(_)));
        let parse = match cx.given("parse") {
            None if one_column && plain => Parse::ByColumn,
            None => Parse::Text,
            Some(n) => match n.scalar_string("parse")?.as_str() {
                "number" => Parse::Number,
                "text" => Parse::Text,
                other => {
                    return Err(n
                        .err(format!("unknown parse `{other}`"))
                        .with_hint("parse is `number` or `text`"))
                }
            },
        };
        Ok(Box::new(ValueScorer { input, parse }))
    }
}

/// How the field `value` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parse {
    /// `parse: number`: a column of numbers or booleans as stored, any other text parsed.
    Number,
    /// `parse: text`, or the default for a computed template: the text.
    Text,
    /// The default for one column: a number when the column holds numbers, else its text.
    ByColumn,
}

/// A bound `value`.
#[derive(Debug)]
struct ValueScorer {
    /// `value:` (always given), `extract:`, `normalize:`.
    input: TextInput,
    parse: Parse,
}

const NUMBER: &[ScorerField] = &[ScorerField::number("value")];
const TEXT: &[ScorerField] = &[ScorerField::text("value")];

/// Whether a column of type `t` is read as numbers without rendering it: numbers always (and
/// a column of nulls only, which JSON Lines gives no other type), booleans (1.0 / 0.0) only
/// under `parse: number`.
fn stored_number(t: &DataType, parse: Parse) -> bool {
    t.is_numeric() || *t == DataType::Null || (parse == Parse::Number && *t == DataType::Boolean)
}

impl ValueScorer {
    /// The one column of numbers that `value:` names, as stored, when it is read so.
    fn stored(&self, input: &BatchInput<'_>) -> Result<Option<ArrayRef>, RowError> {
        let Some(t) = self.input.value() else {
            return Ok(None);
        };
        let plain = !self.input.extracts() && self.input.normalize().is_none();
        if !matches!(t.kind, TemplateKind::Column(_)) || self.parse == Parse::Text || !plain {
            return Ok(None);
        }
        Ok(
            match t.evaluate(input.ctx).map_err(|e| template_err(t, e))? {
                TemplateOutput::Array(a) if stored_number(a.data_type(), self.parse) => Some(a),
                _ => None,
            },
        )
    }
}

impl Scorer for ValueScorer {
    fn fields(&self) -> &'static [ScorerField] {
        // One column's type is known once the input is bound (`fields_for`): until then
        // numeric metrics may read it.
        match self.parse {
            Parse::Number | Parse::ByColumn => NUMBER,
            Parse::Text => TEXT,
        }
    }

    fn fields_for(&self, schema: &Schema) -> &'static [ScorerField] {
        let column = self.input.value().and_then(|t| match &t.kind {
            TemplateKind::Column(c) => schema.column_with_name(c),
            _ => None,
        });
        match (self.parse, column) {
            (Parse::ByColumn, Some((_, f))) if !stored_number(f.data_type(), self.parse) => TEXT,
            _ => self.fields(),
        }
    }

    fn templates(&self) -> Vec<&Template> {
        self.input.value().into_iter().collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let t = self.input.value();
        if let Some(a) = self.stored(input)? {
            let out = cast(&a, &DataType::Float64).map_err(|e| row_err(t, e))?;
            let missing = out.null_count() as u64;
            let mut fields = crate::batch::Fields::new();
            fields.insert("value", out);
            return Ok(ScoreColumns {
                fields,
                missing,
                invalid: 0,
            });
        }
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let out: ArrayRef = match self.parse {
                Parse::Number => Arc::new(numbers(t, &normalized(v, rows), rows)?),
                Parse::Text | Parse::ByColumn => normalized(v, rows),
            };
            let missing = out.null_count();
            fields.insert("value", out);
            Ok(missing)
        })
    }
}

/// The value after `extract:` and `normalize:`.
fn normalized(v: &ScoredValue<'_>, rows: usize) -> ArrayRef {
    match v.normalize {
        Some(n) => n.column(&v.column, rows),
        None => v.text.array(rows),
    }
}

/// `parse: number` over a text: each row's text, spaces around it ignored, as a finite
/// number (`7`, `-0.5`, `1e3`); a null stays null; any other text is a row error.
fn numbers(t: Option<&Template>, text: &ArrayRef, rows: usize) -> Result<Float64Array, RowError> {
    let col = TextColumn::new(text.as_ref(), "value").map_err(|e| row_err(t, e))?;
    (0..rows)
        .map(|row| {
            let Some(s) = col.get(row) else {
                return Ok(None);
            };
            match s.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => Ok(Some(n)),
                _ => Err(row_err(
                    t,
                    KernelError::Value {
                        row,
                        input: "value".to_owned(),
                        value: s.to_owned(),
                        message: "is not a number (`parse: number`)".to_owned(),
                    },
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Parse, ValueScorer, NUMBER, TEXT};
    use crate::Task;
    use arrow::datatypes::{DataType, Field, Schema};

    fn parse_of(scorer: &str) -> (Parse, Task) {
        let text = format!("definition:\n  scorers:\n    - {scorer}\n");
        let task = Task::from_yaml(&text, &[]).unwrap();
        let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
        let parse = any.downcast_ref::<ValueScorer>().unwrap().parse;
        (parse, task)
    }

    #[test]
    fn parse_is_typed_and_defaults_by_template() {
        let column = r#"{type: value, value: "{{ sample.s }}"}"#;
        assert_eq!(parse_of(column).0, Parse::ByColumn);
        let rendered = r#"{type: value, value: "{{ sample.s }}ms"}"#;
        assert_eq!(parse_of(rendered).0, Parse::Text);
        let number = r#"{type: value, value: "{{ sample.s }}ms", parse: number}"#;
        assert_eq!(parse_of(number).0, Parse::Number);
        let text = r#"{type: value, value: "{{ sample.s }}", parse: text}"#;
        assert_eq!(parse_of(text).0, Parse::Text);
        // A transformed column is a text unless `parse: number` says otherwise.
        let extracted = r#"{type: value, value: "{{ sample.s }}", extract: last_number}"#;
        assert_eq!(parse_of(extracted).0, Parse::Text);
        let normalized = r#"{type: value, value: "{{ sample.s }}", normalize: [ignore_case]}"#;
        assert_eq!(parse_of(normalized).0, Parse::Text);
    }

    #[test]
    fn one_column_is_typed_by_the_schema() {
        let schema = |t: DataType| Schema::new(vec![Field::new("s", t, true)]);
        let (_, task) = parse_of(r#"{type: value, value: "{{ sample.s }}"}"#);
        let s = &task.scorers[0].scorer;
        assert_eq!(s.fields(), NUMBER);
        assert_eq!(s.fields_for(&schema(DataType::Int64)), NUMBER);
        assert_eq!(s.fields_for(&schema(DataType::Float32)), NUMBER);
        assert_eq!(s.fields_for(&schema(DataType::Utf8)), TEXT);
        assert_eq!(s.fields_for(&schema(DataType::Boolean)), TEXT);
        assert_eq!(s.fields_for(&schema(DataType::Null)), NUMBER);
        let (_, task) = parse_of(r#"{type: value, value: "{{ sample.s }}", parse: number}"#);
        assert_eq!(
            task.scorers[0].scorer.fields_for(&schema(DataType::Utf8)),
            NUMBER
        );
        let (_, task) = parse_of(r#"{type: value, value: "{{ sample.s }}", parse: text}"#);
        assert_eq!(
            task.scorers[0].scorer.fields_for(&schema(DataType::Int64)),
            TEXT
        );
    }
}
