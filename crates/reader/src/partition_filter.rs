//! Partition filters: `--where 'model = "m1" and day >= 3'` and a task's
//! `filter:`, a small expression language over the Hive partition columns (module `hive`),
//! evaluated on each listed file's partition values before the file is opened, so that only
//! the matching files are read (pruning).
//!
//! The language (docs/storage.md documents it for users):
//! - a comparison of a partition column with a literal, either side: `=`, `!=` (or `<>`),
//!   `<`, `<=`, `>`, `>=`; `column in (lit, ...)`, `column not in (...)`; `column is null`,
//!   `column is not null`;
//! - `not`, `and`, `or` (in that order of precedence, loosest last) and parentheses;
//! - literals: strings in `'...'` or `"..."` (the quote doubled inside: `'it''s'`) and
//!   integers (`-3`); a column is a name (`[A-Za-z_][A-Za-z0-9_]*`) or any text in backquotes;
//!   keywords are case-insensitive.
//!
//! A literal is read as the column's type (module `hive` infers it from every listed file, so
//! a filter never changes it): an Int64 column compares numerically (`"7"` and `7` alike), a
//! Date32 one as dates (the literal `YYYY-MM-DD`), a Utf8 one as text in byte order (the
//! literal a string). Nulls are SQL's: a comparison or `in` with a null value is unknown,
//! `not` of unknown is unknown, and a file is read only when the whole filter is true, so a
//! null partition matches `is null` and nothing else.

use crate::ReadError;
use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Date32Type, FieldRef, Int64Type};
use evalscore_error::did_you_mean;
use std::fmt;

mod rows;
mod syntax;

pub use rows::RowFilter;

/// A parsed filter, with where it came from for messages (`--where`, or the task file's
/// line and column of `filter`) and its text as written.
#[derive(Debug, Clone)]
pub struct PartitionFilter {
    origin: String,
    text: String,
    expr: Expr<Name, Lit>,
}

/// A column as written, and its 1-based character column in the expression.
#[derive(Debug, Clone)]
struct Name {
    text: String,
    at: usize,
}

/// A literal as written.
#[derive(Debug, Clone)]
struct Lit {
    kind: LitKind,
    at: usize,
}

#[derive(Debug, Clone)]
enum LitKind {
    Str(String),
    Int(i64),
}

/// A value of a partition column, or a literal read as one.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
enum Value {
    Int(i64),
    /// Days since 1970-01-01.
    Date(i32),
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// An expression over columns `C` and literals `V`: parsed (`Name`, `Lit`), then bound to
/// the partition columns (their index, and the literal as a value of the column's type).
#[derive(Debug, Clone)]
enum Expr<C, V> {
    Leaf(Leaf<C, V>),
    Not(Box<Expr<C, V>>),
    And(Box<Expr<C, V>>, Box<Expr<C, V>>),
    Or(Box<Expr<C, V>>, Box<Expr<C, V>>),
}

/// A test of one column: a comparison, `[not] in (...)`, `is [not] null` (`true`: negated).
#[derive(Debug, Clone)]
enum Leaf<C, V> {
    Cmp(C, Op, V),
    In(C, Vec<V>, bool),
    IsNull(C, bool),
}

impl PartitionFilter {
    /// Parses `text`; `origin` starts every message about it (`--where`). A syntax error
    /// names the 1-based character column where it is.
    pub fn parse(origin: impl Into<String>, text: &str) -> Result<PartitionFilter, ReadError> {
        let origin = origin.into();
        let expr = syntax::parse(text).map_err(|(message, hint)| {
            let e = ReadError::new(format!("{origin}: {message}"));
            match hint {
                Some(h) => e.with_hint(h),
                None => e,
            }
        })?;
        Ok(PartitionFilter {
            origin,
            text: text.to_owned(),
            expr,
        })
    }

    /// The expression as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the expression came from, as messages name it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The expression bound to the partition columns `fields`: an unknown column, or a
    /// literal that is not of its column's type, is an error naming its column in the text.
    pub(crate) fn bind(&self, fields: &[FieldRef]) -> Result<BoundFilter, ReadError> {
        self.bind_as(fields, "partition column")
    }

    /// The error of a column `n` that is not among `names`, with the closest as a hint.
    fn unknown(&self, n: &Name, names: &[&str], noun: &str) -> ReadError {
        let e = ReadError::new(format!(
            "{}: unknown {noun} `{}` at column {}; {noun}s: {}",
            self.origin,
            n.text,
            n.at,
            names.join(", ")
        ));
        match did_you_mean(&n.text, names) {
            Some(s) => e.with_hint(format!("did you mean `{s}`?")),
            None => e,
        }
    }

    /// [`PartitionFilter::bind`], naming the columns `noun` in messages.
    fn bind_as(&self, fields: &[FieldRef], noun: &str) -> Result<BoundFilter, ReadError> {
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        let column = |n: &Name| -> Result<(usize, &DataType), ReadError> {
            match names.iter().position(|c| *c == n.text) {
                Some(i) => Ok((i, fields[i].data_type())),
                None => Err(self.unknown(n, &names, noun)),
            }
        };
        let value = |n: &Name, ty: &DataType, lit: &Lit| {
            typed(ty, lit).map_err(|(what, hint)| {
                ReadError::new(format!(
                    "{}: {noun} `{}` is {what}: {} at column {} is not one",
                    self.origin, n.text, lit, lit.at
                ))
                .with_hint(hint)
            })
        };
        let expr = self.expr.try_map(&mut |leaf| {
            Ok(match leaf {
                Leaf::Cmp(n, op, lit) => {
                    let (i, ty) = column(n)?;
                    Leaf::Cmp(i, *op, value(n, ty, lit)?)
                }
                Leaf::In(n, lits, negated) => {
                    let (i, ty) = column(n)?;
                    let values = lits
                        .iter()
                        .map(|l| value(n, ty, l))
                        .collect::<Result<_, _>>()?;
                    Leaf::In(i, values, *negated)
                }
                Leaf::IsNull(n, negated) => Leaf::IsNull(column(n)?.0, *negated),
            })
        })?;
        Ok(BoundFilter { expr })
    }
}

impl<C, V> Expr<C, V> {
    /// The same tree with each leaf replaced by `leaf`'s.
    fn try_map<D, W, E>(
        &self,
        leaf: &mut impl FnMut(&Leaf<C, V>) -> Result<Leaf<D, W>, E>,
    ) -> Result<Expr<D, W>, E> {
        Ok(match self {
            Expr::Leaf(l) => Expr::Leaf(leaf(l)?),
            Expr::Not(a) => Expr::Not(Box::new(a.try_map(leaf)?)),
            Expr::And(a, b) => Expr::And(Box::new(a.try_map(leaf)?), Box::new(b.try_map(leaf)?)),
            Expr::Or(a, b) => Expr::Or(Box::new(a.try_map(leaf)?), Box::new(b.try_map(leaf)?)),
        })
    }
}

/// A filter bound to the partition columns, evaluated per listed file.
#[derive(Debug, Clone)]
pub(crate) struct BoundFilter {
    expr: Expr<usize, Value>,
}

impl BoundFilter {
    /// Whether the file at `row` of the partition `columns` (one row per listed file) is
    /// read: the filter is true there (unknown, from a null, is not).
    pub(crate) fn matches(&self, columns: &[ArrayRef], row: usize) -> bool {
        eval(&self.expr, &|i| value_at(&columns[i], row)) == Some(true)
    }
}

/// Three-valued logic, as SQL's: `None` is unknown.
fn eval(e: &Expr<usize, Value>, get: &dyn Fn(usize) -> Option<Value>) -> Option<bool> {
    match e {
        Expr::Leaf(Leaf::Cmp(c, op, lit)) => {
            let v = get(*c)?;
            let ord = v.partial_cmp(lit)?;
            Some(match op {
                Op::Eq => ord.is_eq(),
                Op::Ne => ord.is_ne(),
                Op::Lt => ord.is_lt(),
                Op::Le => ord.is_le(),
                Op::Gt => ord.is_gt(),
                Op::Ge => ord.is_ge(),
            })
        }
        Expr::Leaf(Leaf::In(c, values, negated)) => {
            let v = get(*c)?;
            Some(values.contains(&v) != *negated)
        }
        Expr::Leaf(Leaf::IsNull(c, negated)) => Some(get(*c).is_none() != *negated),
        Expr::Not(a) => eval(a, get).map(|b| !b),
        Expr::And(a, b) => match (eval(a, get), eval(b, get)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Expr::Or(a, b) => match (eval(a, get), eval(b, get)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
    }
}

/// The value at `row` of a partition column (Int64, Date32 or Utf8), `None` for null.
fn value_at(column: &ArrayRef, row: usize) -> Option<Value> {
    if column.is_null(row) {
        return None;
    }
    match column.data_type() {
        DataType::Int64 => Some(Value::Int(column.as_primitive::<Int64Type>().value(row))),
        DataType::Date32 => Some(Value::Date(column.as_primitive::<Date32Type>().value(row))),
        _ => column
            .as_string_opt::<i32>()
            .map(|s| Value::Text(s.value(row).to_owned())),
    }
}

/// `lit` read as a value of a column of type `ty`; else what the column is, and a hint.
fn typed(ty: &DataType, lit: &Lit) -> Result<Value, (&'static str, String)> {
    match (ty, &lit.kind) {
        (DataType::Int64, LitKind::Int(i)) => Ok(Value::Int(*i)),
        // Read as the folders' values are (`' 7'`, `'0x1F'`), or as any decimal (`'07'`).
        (DataType::Int64, LitKind::Str(s)) => crate::hive::integer(s)
            .or_else(|| s.trim().parse().ok())
            .map(Value::Int)
            .ok_or_else(|| {
                (
                    "an integer (Int64)",
                    "compare it with an integer such as `7`".to_owned(),
                )
            }),
        (DataType::Date32, LitKind::Str(s)) => {
            crate::hive::date(s).map(Value::Date).ok_or_else(|| {
                (
                    "a date (Date32)",
                    "compare it with a date written `'YYYY-MM-DD'`, such as `'2001-02-03'`"
                        .to_owned(),
                )
            })
        }
        (DataType::Date32, LitKind::Int(_)) => Err((
            "a date (Date32)",
            "compare it with a date written `'YYYY-MM-DD'`, such as `'2001-02-03'`".to_owned(),
        )),
        (_, LitKind::Str(s)) => Ok(Value::Text(s.clone())),
        (_, LitKind::Int(i)) => Err(("text (Utf8)", format!("quote the value: `'{i}'`"))),
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            LitKind::Str(s) => write!(f, "`'{}'`", s.replace('\'', "''")),
            LitKind::Int(i) => write!(f, "`{i}`"),
        }
    }
}

/// What pruning did: recorded in run.json.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruning {
    /// The filters' texts, ANDed: one as written, several as `(a) and (b)`.
    pub filter: String,
    pub files_listed: usize,
    pub files_matched: usize,
}

/// The filters' verdict on each listed file (one row each of `parts`), ANDed, and what it
/// did; `None` without filters. A filter without partition columns, and no file matching,
/// are errors.
pub(crate) fn prune(
    filters: &[PartitionFilter],
    parts: &crate::hive::Partitions,
    hive: crate::HivePartitioning,
) -> Result<Option<(Vec<bool>, Pruning)>, ReadError> {
    let Some(first) = filters.first() else {
        return Ok(None);
    };
    if parts.fields.is_empty() {
        let hint = if hive == crate::HivePartitioning::Off {
            "`--no-hive-partitioning` turns them off; leave it out to read `key=value` folders as columns"
        } else {
            "partition columns come from the `key=value` folders of a tree or glob (`--recursive DIR`, `'dir/**/*.parquet'`) when every file has the same keys; `--hive-partitioning` names two files whose keys differ"
        };
        return Err(ReadError::new(format!(
            "{}: the inputs have no partition columns to filter on",
            first.origin
        ))
        .with_hint(hint));
    }
    let bound = filters
        .iter()
        .map(|f| f.bind(&parts.fields))
        .collect::<Result<Vec<_>, _>>()?;
    let listed = parts.values.first().map_or(0, |v| v.len());
    let keep: Vec<bool> = (0..listed)
        .map(|row| bound.iter().all(|b| b.matches(&parts.values, row)))
        .collect();
    let filter = match filters {
        [one] => one.text.clone(),
        many => many
            .iter()
            .map(|f| format!("({})", f.text))
            .collect::<Vec<_>>()
            .join(" and "),
    };
    let matched = keep.iter().filter(|k| **k).count();
    if matched == 0 {
        return Err(ReadError::new(format!(
            "no input file matches the partition filter `{filter}` ({listed} file{} listed)",
            if listed == 1 { "" } else { "s" }
        ))
        .with_hint(format!(
            "the listed files' partition values: {}",
            values_seen(parts)
        )));
    }
    Ok(Some((
        keep,
        Pruning {
            filter,
            files_listed: listed,
            files_matched: matched,
        },
    )))
}

/// Each partition column's distinct values (the first few) as `name: a, b`, `; ` between.
fn values_seen(parts: &crate::hive::Partitions) -> String {
    const SHOWN: usize = 8;
    let options = arrow::util::display::FormatOptions::default().with_null("null");
    parts
        .fields
        .iter()
        .zip(&parts.values)
        .map(|(field, column)| {
            let mut seen: Vec<String> = Vec::new();
            let mut more = false;
            if let Ok(f) = arrow::util::display::ArrayFormatter::try_new(column, &options) {
                for row in 0..column.len() {
                    let v = f.value(row).to_string();
                    if !seen.contains(&v) {
                        if seen.len() == SHOWN {
                            more = true;
                            break;
                        }
                        seen.push(v);
                    }
                }
            }
            let more = if more { ", ..." } else { "" };
            format!("{}: {}{more}", field.name(), seen.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
