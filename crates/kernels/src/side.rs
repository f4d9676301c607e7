//! One side of a comparison read row by row: the other input of a kernel (nothing, a text
//! column, an optional one, the expected strings), after `normalize:`. The driver in
//! [`crate::contract`] pairs the value column with one side.

use crate::normalize::Normalizer;
use evalscore_text::TextColumn;
use std::borrow::Cow;

/// `s` after `norm`, if any.
pub(crate) fn normalize<'s>(norm: Option<&Normalizer>, s: &'s str) -> Cow<'s, str> {
    match norm {
        Some(n) => n.apply(s),
        None => Cow::Borrowed(s),
    }
}

/// The type of one row of a [`Side`], borrowed for `'s` from the side (its buffer of the
/// last row, when it has one). A trait of its own rather than a generic associated type with
/// `where Self: 's`, so that row functions can be generic over the borrow: the defaulted
/// second parameter limits `'s` to the lifetimes the side outlives.
pub(crate) trait SideItem<'s, Bound = &'s Self> {
    type Item;
}

/// One row of side `S`.
pub(crate) type Item<'s, S> = <S as SideItem<'s>>::Item;

/// A kernel's other input, row by row, already normalized.
pub(crate) trait Side: for<'s> SideItem<'s> {
    /// Row `r`'s input; `None` when it is null, which makes the row missing.
    fn get(&mut self, r: usize) -> Option<Item<'_, Self>>;
}

/// No other input.
impl SideItem<'_> for () {
    type Item = ();
}

impl Side for () {
    #[inline]
    fn get(&mut self, _: usize) -> Option<()> {
        Some(())
    }
}

/// Another text column. A scalar is normalized once; a row of a column is normalized into a
/// buffer that the row borrows.
pub(crate) struct TextSide<'a> {
    column: TextColumn<'a>,
    norm: Option<&'a Normalizer>,
    /// The normalized scalar, when the column is one.
    scalar: Option<Option<Cow<'a, str>>>,
    row: Cow<'a, str>,
}

impl<'a> TextSide<'a> {
    pub(crate) fn new(column: TextColumn<'a>, norm: Option<&'a Normalizer>) -> Self {
        let scalar = match column {
            TextColumn::Scalar(s) => Some(s.map(|s| normalize(norm, s))),
            _ => None,
        };
        TextSide {
            column,
            norm,
            scalar,
            row: Cow::Borrowed(""),
        }
    }
}

impl<'s> SideItem<'s> for TextSide<'_> {
    type Item = &'s str;
}

impl Side for TextSide<'_> {
    #[inline]
    fn get(&mut self, r: usize) -> Option<&str> {
        if let Some(s) = &self.scalar {
            return s.as_deref();
        }
        self.row = normalize(self.norm, self.column.get(r)?);
        Some(&self.row)
    }
}

/// Another text column, as it is.
pub(crate) struct RawText<'a>(pub(crate) TextColumn<'a>);

impl<'a> SideItem<'_> for RawText<'a> {
    type Item = &'a str;
}

impl Side for RawText<'_> {
    #[inline]
    fn get(&mut self, r: usize) -> Option<Item<'_, Self>> {
        self.0.get(r)
    }
}

/// A side whose null rows are not missing: the row function sees `None`.
pub(crate) struct Optional<S>(pub(crate) S);

impl<'s, S: Side> SideItem<'s> for Optional<S> {
    type Item = Option<Item<'s, S>>;
}

impl<S: Side> Side for Optional<S> {
    #[inline]
    fn get(&mut self, r: usize) -> Option<Item<'_, Self>> {
        Some(self.0.get(r))
    }
}
