//! Templates evaluated a column at a time: text with `{{ sample.COL }}` and
//! `{{ solver_output.output }}` in it, such as a judge's prompt.

use super::*;

/// A part of an interpolation template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text written as it is.
    Text(String),
    /// `{{ sample.COL }}`.
    Column(String),
    /// `{{ solver_output.output }}`.
    ModelOutput,
}

/// The pieces of `source` when it is only text and plain `{{ sample.COL }}` /
/// `{{ solver_output.output }}` tags: no statement, comment, filter or whitespace control,
/// no `}}` in the text, and no newline at the end (minijinja drops one there).
pub fn concat_plan(source: &str) -> Option<Vec<Piece>> {
    if source.ends_with(['\n', '\r']) {
        return None;
    }
    let text = |t: &str| -> Option<Piece> {
        (!t.contains("}}") && !t.contains("{%") && !t.contains("{#"))
            .then(|| Piece::Text(t.to_owned()))
    };
    let mut pieces = Vec::new();
    let mut rest = source;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            pieces.push(text(&rest[..open])?);
        }
        let after = &rest[open + 2..];
        let close = after.find("}}")?;
        let inner = &after[..close];
        if inner.starts_with(['-', '+']) || inner.ends_with(['-', '+']) {
            return None;
        }
        let inner = inner.trim();
        pieces.push(match column_ref(inner) {
            Some(col) => Piece::Column(col),
            None if inner == "solver_output.output" || inner == "solver_output[\"output\"]" => {
                Piece::ModelOutput
            }
            None => return None,
        });
        rest = &after[close + 2..];
    }
    if !rest.is_empty() {
        pieces.push(text(rest)?);
    }
    pieces
        .iter()
        .any(|p| !matches!(p, Piece::Text(_)))
        .then_some(pieces)
}

/// The template of `pieces` over every row of `ctx`, as text; `None` when a piece's column is
/// not text or an integer, or a row is large (the caller then renders row by row, as
/// minijinja would, which also raises the size errors). Null rule: a row with a null cell is
/// null (missing), as minijinja printing a null value makes it.
pub(super) fn concat_column(pieces: &[Piece], ctx: &RowContext<'_>) -> Option<ArrayRef> {
    use arrow::datatypes::DataType;
    // Integers are written as minijinja writes them (decimal digits, a `-` when negative),
    // which is Arrow's cast to text.
    let mut owned: Vec<Option<ArrayRef>> = Vec::with_capacity(pieces.len());
    for p in pieces {
        let col = match p {
            Piece::Text(_) => None,
            Piece::Column(name) => Some(ctx.batch.column_by_name(name)?),
            Piece::ModelOutput => Some(ctx.model_output?),
        };
        owned.push(match col {
            None => None,
            Some(c) => Some(match c.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Arc::clone(c),
                DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32
                | DataType::UInt64 => arrow::compute::cast(c, &DataType::Utf8).ok()?,
                _ => return None,
            }),
        });
    }
    enum Source<'a> {
        Text(&'a str),
        Column(evalscore_text::TextColumn<'a>),
    }
    let sources: Vec<Source<'_>> = pieces
        .iter()
        .zip(&owned)
        .map(|(p, c)| match (p, c) {
            (Piece::Text(t), _) => Some(Source::Text(t)),
            (_, Some(c)) => evalscore_text::TextColumn::new(c.as_ref(), "")
                .ok()
                .map(Source::Column),
            (_, None) => None,
        })
        .collect::<Option<_>>()?;
    let n = ctx.batch.num_rows();
    let mut out = StringBuilder::with_capacity(n, 0);
    let mut row_text = String::new();
    let mut total = 0usize;
    'rows: for row in 0..n {
        row_text.clear();
        for s in &sources {
            match s {
                Source::Text(t) => row_text.push_str(t),
                Source::Column(c) => match c.get(row) {
                    Some(v) => row_text.push_str(v),
                    None => {
                        out.append_null();
                        continue 'rows;
                    }
                },
            }
        }
        // Far from the limits only: near them, minijinja's path decides (and says why).
        total += row_text.len();
        if row_text.len() > TEMPLATE_BYTES / 2 || total > BATCH_TEMPLATE_BYTES / 2 {
            return None;
        }
        out.append_value(&row_text);
    }
    Some(Arc::new(out.finish()))
}
