//! What the task language knows of every scorer: its purpose, the fields it produces per
//! row, and the warehouse-safe names of its columns.

/// Whether a scorer scores the solver output or does QA over it (seed: `ScorerPurpose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Score,
    Qa,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Score => "score",
            Purpose::Qa => "qa",
        }
    }
}

/// Whether a scorer field holds numbers or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Number,
    Text,
}

/// A field a scorer produces per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScorerField {
    pub name: &'static str,
    pub kind: FieldKind,
    /// Written to `scores.parquet` as `<key>__<name>`; the others (the compared texts) are
    /// available to metrics only, so that scores.parquet does not copy the input's text columns.
    pub written: bool,
}

impl ScorerField {
    /// A number written to scores.parquet.
    pub const fn number(name: &'static str) -> ScorerField {
        ScorerField {
            name,
            kind: FieldKind::Number,
            written: true,
        }
    }

    /// A text written to scores.parquet.
    pub const fn text(name: &'static str) -> ScorerField {
        ScorerField {
            name,
            kind: FieldKind::Text,
            written: true,
        }
    }

    /// A text for metrics only (a compared text: `value`, `expected`, ...).
    pub const fn compared(name: &'static str) -> ScorerField {
        ScorerField {
            name,
            kind: FieldKind::Text,
            written: false,
        }
    }
}

/// Replaces characters outside `[A-Za-z0-9_]` with `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
