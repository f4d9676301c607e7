//! What several scorers of one batch would each derive again from the same column: a suite
//! scores every batch with each of its tasks, and tasks over the same export read the same
//! `choices` list. The first scorer that needs a value makes it; the others wait for it and
//! share it. A memo lives for one batch.
//!
//! Columns are recognised by their buffers ([`evalscore_text::ByBuffers`]).

use arrow::array::{Array, DictionaryArray, GenericListArray, OffsetSizeTrait, StringViewArray};
use arrow::datatypes::Int8Type;
use evalscore_text::{nulls_key as nulls, ByBuffers};
use std::sync::Arc;

/// Values derived from one batch's columns, shared by the scorers that score it.
#[derive(Debug, Default)]
pub struct BatchMemo {
    choice_masks: ByBuffers<Masks>,
    validity: ByBuffers<Validity>,
}

/// The choice masks of one list (`None`: the list is not of the masks' shape). A `Vec`
/// behind the `Arc`, as made: an `Arc<[u128]>` would copy it.
type Masks = Option<Arc<Vec<u128>>>;

/// MCQA's `completion_validity` of one output column against one `choices` list.
type Validity = Option<DictionaryArray<Int8Type>>;

impl BatchMemo {
    pub fn new() -> Self {
        Self::default()
    }

    /// [`choice_masks`] of `list`, made once per list for all who ask.
    pub(crate) fn choice_masks<O: OffsetSizeTrait>(
        &self,
        list: &GenericListArray<O>,
        items: &StringViewArray,
    ) -> Masks {
        let key = [
            Some((list.offsets().inner().inner(), 0)),
            Some((items.views().inner(), 0)),
        ];
        // Outside the lock: other lists' masks are made meanwhile; a scorer asking for this
        // one waits for it.
        self.choice_masks
            .cell(&key, "")
            .get_or_init(|| choice_masks(list, items))
            .clone()
    }

    /// MCQA's `completion_validity` of `output` against `list` (with its `items`), which
    /// depends on them alone (not on the ground truth): `make()` once per pair of columns
    /// for all who ask.
    pub(crate) fn validity<O: OffsetSizeTrait>(
        &self,
        output: &StringViewArray,
        list: &GenericListArray<O>,
        items: &StringViewArray,
        make: impl FnOnce() -> Validity,
    ) -> Validity {
        let key = [
            Some((output.views().inner(), 0)),
            nulls(output.nulls()),
            Some((list.offsets().inner().inner(), 0)),
            nulls(list.nulls()),
            Some((items.views().inner(), 0)),
        ];
        self.validity.cell(&key, "").get_or_init(make).clone()
    }
}

/// Per row of `list`, the set of its items' bytes as a 128-bit mask (bit `b` for an item
/// that is the one ASCII character `b`), the items of null lists included. `None` when an
/// item in the rows' range is null or is not exactly one ASCII character: the scorer's
/// general path then reads (and reports) them.
pub(crate) fn choice_masks<O: OffsetSizeTrait>(
    list: &GenericListArray<O>,
    items: &StringViewArray,
) -> Masks {
    let firsts = first_bytes(list, items)?;
    let offsets = list.value_offsets();
    let base = offsets.first()?.as_usize();
    // A row of up to eight items (the common case) is one 64-bit load with the bytes past
    // its items set to 0x80: no branch on its length, which varies from row to row.
    const NONE: u64 = 0x8080_8080_8080_8080;
    let mask_of = |bytes: &[u8]| bytes.iter().fold(0u128, |m, &b| m | BIT[usize::from(b)]);
    let mut masks = Vec::with_capacity(list.len());
    for bounds in offsets.windows(2) {
        let (start, n) = (
            bounds[0].as_usize() - base,
            bounds[1].as_usize() - bounds[0].as_usize(),
        );
        let mask = if n <= 8 {
            let eight = u64::from_le_bytes(firsts.get(start..start + 8)?.try_into().ok()?);
            let keep = crate::LOW_BYTES[n];
            mask_of(&((eight & keep) | (NONE & !keep)).to_le_bytes())
        } else {
            mask_of(firsts.get(start..start + n)?)
        };
        masks.push(mask);
    }
    Some(Arc::new(masks))
}

/// The first bytes of the items of `list`'s rows (those of null lists too), with eight bytes
/// of padding that are no item (0x80) so that every row can load eight. `None` when an item
/// in the rows' range is null or is not exactly one ASCII character.
pub(crate) fn first_bytes<O: OffsetSizeTrait>(
    list: &GenericListArray<O>,
    items: &StringViewArray,
) -> Option<Vec<u8>> {
    let offsets = list.value_offsets();
    let base = offsets.first()?.as_usize();
    let end = offsets.last()?.as_usize();
    if items
        .nulls()
        .is_some_and(|n| n.slice(base, end - base).null_count() > 0)
    {
        return None;
    }
    let views = items.views().get(base..end)?;
    // Folded over the column with `|` and tested once at the end.
    let mut firsts = vec![0x80u8; views.len() + 8];
    let mut bad = 0u64;
    for (f, &v) in firsts.iter_mut().zip(views) {
        bad |= not_one_ascii(v as u64);
        *f = (v >> 32) as u8;
    }
    (bad == 0).then_some(firsts)
}

/// Non-zero when the view whose low 64 bits are `low` is not one ASCII character: its
/// length and first byte sit there, and one ASCII character is length 1 with the high bit
/// of the first byte clear.
pub(crate) fn not_one_ascii(low: u64) -> u64 {
    (low & 0x80_FFFF_FFFF) ^ 1
}

/// `BIT[b]` is the mask of the one-character item `b`: bit `b` for ASCII, none above.
static BIT: [u128; 256] = {
    let mut t = [0u128; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = 1 << b;
        b += 1;
    }
    t
};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use arrow::array::{ListArray, ListBuilder, StringViewBuilder};

    /// A list column of Utf8View items, `None` rows null.
    pub(crate) fn list(rows: &[Option<&[Option<&str>]>]) -> ListArray {
        let mut b = ListBuilder::new(StringViewBuilder::new());
        for row in rows {
            match row {
                Some(items) => {
                    for i in *items {
                        b.values().append_option(*i);
                    }
                    b.append(true);
                }
                None => b.append(false),
            }
        }
        b.finish()
    }

    fn masks_of(l: &ListArray) -> Masks {
        choice_masks(l, l.values().as_any().downcast_ref().unwrap())
    }

    fn bits(chars: &str) -> u128 {
        chars.bytes().fold(0, |m, b| m | 1u128 << b)
    }

    #[test]
    fn masks_hold_each_rows_items() {
        let l = list(&[
            Some(&[Some("A"), Some("B"), Some("C"), Some("D")]),
            Some(&[]),
            None,
            Some(&[Some(" "), Some("~"), Some("\0"), Some("a")]),
            Some(&["H", "G", "F", "E", "D", "C", "B", "A"].map(Some)),
            Some(&["A", "B", "C", "D", "E", "F", "G", "H", "I"].map(Some)),
            Some(&["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"].map(Some)),
            Some(&[Some("Z")]),
        ]);
        let m = masks_of(&l).unwrap();
        let want = [
            bits("ABCD"),
            0,
            0,
            bits(" ~\0a"),
            bits("ABCDEFGH"),
            bits("ABCDEFGHI"),
            bits("abcdefghijkl"),
            bits("Z"),
        ];
        assert_eq!(&m[..], &want);
        // A slice of the list: its own rows only, from its offsets.
        for k in 0..l.len() {
            let s = l.slice(k, l.len() - k);
            assert_eq!(&masks_of(&s).unwrap()[..], &want[k..]);
        }
    }

    #[test]
    fn items_of_another_shape_give_none() {
        for items in [
            &[Some("A"), Some("BC")][..],
            &[Some("A"), Some("")],
            &[Some("É")],
            &[Some("A"), None],
        ] {
            let l = list(&[Some(&[Some("A")]), Some(items)]);
            assert_eq!(masks_of(&l), None, "{items:?}");
            // Outside the rows' range they do not count.
            assert!(masks_of(&l.slice(0, 1)).is_some(), "{items:?}");
        }
    }

    #[test]
    fn a_memo_makes_each_lists_masks_once() {
        let memo = BatchMemo::new();
        let rows: &[Option<&[Option<&str>]>] = &[Some(&[Some("A"), Some("B")]), Some(&[Some("C")])];
        let (a, b) = (list(rows), list(rows));
        let items = |l: &ListArray| l.values().as_any().downcast_ref().cloned().unwrap();
        let first = memo.choice_masks(&a, &items(&a)).unwrap();
        let again = memo.choice_masks(&a.clone(), &items(&a)).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // Equal contents in other buffers are another list.
        let other = memo.choice_masks(&b, &items(&b)).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(first, other);
        // A slice starts elsewhere in the offsets: its own entry.
        let sliced = memo.choice_masks(&a.slice(1, 1), &items(&a)).unwrap();
        assert_eq!(&sliced[..], &[bits("C")]);
        assert_eq!(memo.choice_masks.len(), 3);
    }
}
