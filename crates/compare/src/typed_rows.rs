//! A unit of a run's scores.parquet decoded for the aligned comparison ([`crate::aligned`]):
//! its keys as typed values (integers, or text), its compared score columns as `f64` (null
//! as NaN, cast as the partitioned join casts them; 0/1 scores in a byte each, [`Packed`]), and its group and cluster values as ids
//! of the unit's own distinct texts. Keys of these types are equal exactly when the texts
//! the partitioned join compares are.

use crate::packed::Packed;
use crate::spill::NONE;
use arrow::array::{Array, ArrayRef, AsArray, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Int64Type, UInt64Type};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The kinds of key column the aligned comparison reads; any other type is left to the
/// partitioned join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Signed,
    Unsigned,
    Text,
}

impl KeyKind {
    pub fn of(t: &DataType) -> Option<KeyKind> {
        match t {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                Some(KeyKind::Signed)
            }
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                Some(KeyKind::Unsigned)
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(KeyKind::Text),
            _ => None,
        }
    }
}

/// One key column of a unit.
#[derive(Debug)]
pub(crate) enum KeyCol {
    Signed(Vec<i64>),
    Unsigned(Vec<u64>),
    /// Row `i` is `bytes[offsets[i]..offsets[i + 1]]`.
    Text {
        offsets: Vec<u32>,
        bytes: Vec<u8>,
    },
}

impl KeyCol {
    /// An empty column with room for `rows` rows.
    fn new(kind: KeyKind, rows: usize) -> KeyCol {
        match kind {
            KeyKind::Signed => KeyCol::Signed(Vec::with_capacity(rows)),
            KeyKind::Unsigned => KeyCol::Unsigned(Vec::with_capacity(rows)),
            KeyKind::Text => {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0);
                KeyCol::Text {
                    offsets,
                    bytes: Vec::new(),
                }
            }
        }
    }

    fn text<'a>(offsets: &[u32], bytes: &'a [u8], i: usize) -> &'a [u8] {
        &bytes[offsets[i] as usize..offsets[i + 1] as usize]
    }

    /// Appends the non-null column `a`.
    fn extend(&mut self, a: &ArrayRef) -> Result<(), arrow::error::ArrowError> {
        match self {
            KeyCol::Signed(v) => {
                let cast = arrow::compute::cast(a, &DataType::Int64)?;
                v.extend_from_slice(cast.as_primitive::<Int64Type>().values());
            }
            KeyCol::Unsigned(v) => {
                let cast = arrow::compute::cast(a, &DataType::UInt64)?;
                v.extend_from_slice(cast.as_primitive::<UInt64Type>().values());
            }
            KeyCol::Text { offsets, bytes } => {
                let mut push = |s: &str| {
                    bytes.extend_from_slice(s.as_bytes());
                    offsets.push(bytes.len() as u32);
                };
                match a.data_type() {
                    DataType::Utf8 => a.as_string::<i32>().iter().flatten().for_each(&mut push),
                    DataType::LargeUtf8 => {
                        a.as_string::<i64>().iter().flatten().for_each(&mut push)
                    }
                    _ => a.as_string_view().iter().flatten().for_each(&mut push),
                }
                if u32::try_from(bytes.len()).is_err() {
                    return Err(arrow::error::ArrowError::ComputeError(
                        "a unit's keys hold more than 4 GiB".to_owned(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Appends `other`, a column of the same kind; false when the texts would pass 4 GiB.
    pub fn append(&mut self, other: &KeyCol) -> bool {
        match (self, other) {
            (KeyCol::Signed(a), KeyCol::Signed(b)) => a.extend_from_slice(b),
            (KeyCol::Unsigned(a), KeyCol::Unsigned(b)) => a.extend_from_slice(b),
            (
                KeyCol::Text { offsets, bytes },
                KeyCol::Text {
                    offsets: o2,
                    bytes: b2,
                },
            ) => {
                let start = bytes.len();
                if u32::try_from(start + b2.len()).is_err() {
                    return false;
                }
                bytes.extend_from_slice(b2);
                offsets.extend(o2.iter().skip(1).map(|o| o + start as u32));
            }
            _ => return false,
        }
        true
    }

    /// The bytes the column holds.
    pub fn bytes(&self) -> usize {
        match self {
            KeyCol::Signed(v) => v.len() * 8,
            KeyCol::Unsigned(v) => v.len() * 8,
            KeyCol::Text { offsets, bytes } => offsets.len() * 4 + bytes.len(),
        }
    }

    /// An empty column of the same kind.
    pub fn empty_like(&self) -> KeyCol {
        match self {
            KeyCol::Signed(_) => KeyCol::new(KeyKind::Signed, 0),
            KeyCol::Unsigned(_) => KeyCol::new(KeyKind::Unsigned, 0),
            KeyCol::Text { .. } => KeyCol::new(KeyKind::Text, 0),
        }
    }

    /// The first row of `len` from `i` whose value differs from `other`'s from `j`.
    pub fn first_difference(
        &self,
        i: usize,
        other: &KeyCol,
        j: usize,
        len: usize,
    ) -> Option<usize> {
        match (self, other) {
            (KeyCol::Signed(a), KeyCol::Signed(b)) => {
                first_difference(&a[i..i + len], &b[j..j + len])
            }
            (KeyCol::Unsigned(a), KeyCol::Unsigned(b)) => {
                first_difference(&a[i..i + len], &b[j..j + len])
            }
            (
                KeyCol::Text { offsets, bytes },
                KeyCol::Text {
                    offsets: o2,
                    bytes: b2,
                },
            ) => (0..len)
                .find(|k| KeyCol::text(offsets, bytes, i + k) != KeyCol::text(o2, b2, j + k)),
            _ => Some(0),
        }
    }

    /// Row `i` against row `j` of `other`, a column of the same kind.
    pub fn cmp(&self, i: usize, other: &KeyCol, j: usize) -> Ordering {
        match (self, other) {
            (KeyCol::Signed(a), KeyCol::Signed(b)) => a[i].cmp(&b[j]),
            (KeyCol::Unsigned(a), KeyCol::Unsigned(b)) => a[i].cmp(&b[j]),
            (
                KeyCol::Text { offsets, bytes },
                KeyCol::Text {
                    offsets: o2,
                    bytes: b2,
                },
            ) => KeyCol::text(offsets, bytes, i).cmp(KeyCol::text(o2, b2, j)),
            _ => Ordering::Equal,
        }
    }

    /// Row `i` as compare.json writes a key's part: a number for integers, else text.
    pub fn json(&self, i: usize) -> Value {
        match self {
            KeyCol::Signed(v) => Value::from(v[i]),
            KeyCol::Unsigned(v) => Value::from(v[i]),
            KeyCol::Text { offsets, bytes } => {
                Value::String(String::from_utf8_lossy(KeyCol::text(offsets, bytes, i)).into_owned())
            }
        }
    }

    /// A 64-bit hash of row `i`, mixed into `h`. For one integer column it is a bijection of
    /// the value, so two rows have one hash only when they have one key.
    pub fn hash(&self, i: usize, h: u64) -> u64 {
        match self {
            KeyCol::Signed(v) => mix(h ^ v[i] as u64),
            KeyCol::Unsigned(v) => mix(h ^ v[i]),
            KeyCol::Text { offsets, bytes } => {
                let s = KeyCol::text(offsets, bytes, i);
                let mut x = h ^ (s.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                for w in s.chunks(8) {
                    let mut b = [0u8; 8];
                    b[..w.len()].copy_from_slice(w);
                    x = mix(x ^ u64::from_le_bytes(b));
                }
                mix(x)
            }
        }
    }
}

/// The first index where `a` and `b` differ: compared in blocks, which the compiler turns
/// into wide compares.
fn first_difference<T: PartialEq + Copy>(a: &[T], b: &[T]) -> Option<usize> {
    const BLOCK: usize = 64;
    let mut start = 0;
    for (x, y) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
        if x != y {
            return x.iter().zip(y).position(|(p, q)| p != q).map(|k| start + k);
        }
        start += x.len();
    }
    None
}

/// SplitMix64's finalizer: a bijection of 64-bit values that spreads every input bit.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hasher for maps whose keys come from the runs' own files: the multiply-mix of
/// [`mix`] over 8 bytes at a time, many times faster than the default SipHash on short
/// texts and small integers.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for w in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..w.len()].copy_from_slice(w);
            self.0 = mix(self.0 ^ u64::from_le_bytes(b));
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.0 = mix(self.0 ^ u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = mix(self.0 ^ x);
    }

    fn write_usize(&mut self, x: usize) {
        self.0 = mix(self.0 ^ x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// A group or cluster column of a unit: per row an id among the unit's distinct texts
/// ([`NONE`] for null), and those texts.
#[derive(Debug, Default)]
pub(crate) struct Labels {
    pub ids: Vec<u32>,
    pub texts: Vec<String>,
    index: FastMap<String, u32>,
    /// Texts of up to 7 bytes, by their bytes and length in one word: found without
    /// hashing or comparing bytes (subjects, labels, letters).
    short: FastMap<u64, u32>,
}

impl Labels {
    fn id(&mut self, text: &str) -> u32 {
        let b = text.as_bytes();
        if b.len() < 8 {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            w[7] = b.len() as u8;
            let word = u64::from_le_bytes(w);
            if let Some(id) = self.short.get(&word) {
                return *id;
            }
            let id = self.texts.len() as u32;
            self.short.insert(word, id);
            self.texts.push(text.to_owned());
            return id;
        }
        if let Some(id) = self.index.get(text) {
            return *id;
        }
        let id = self.texts.len() as u32;
        self.index.insert(text.to_owned(), id);
        self.texts.push(text.to_owned());
        id
    }

    /// Appends column `a`, each value as its text (a string as it is).
    fn extend(&mut self, a: &ArrayRef) -> Result<(), arrow::error::ArrowError> {
        let valid = |i: usize| a.is_valid(i);
        match a.data_type() {
            DataType::Utf8 => {
                let s = a.as_string::<i32>();
                for i in 0..a.len() {
                    let id = if valid(i) { self.id(s.value(i)) } else { NONE };
                    self.ids.push(id);
                }
            }
            DataType::LargeUtf8 => {
                let s = a.as_string::<i64>();
                for i in 0..a.len() {
                    let id = if valid(i) { self.id(s.value(i)) } else { NONE };
                    self.ids.push(id);
                }
            }
            DataType::Utf8View => {
                let s = a.as_string_view();
                for i in 0..a.len() {
                    let id = if valid(i) { self.id(s.value(i)) } else { NONE };
                    self.ids.push(id);
                }
            }
            _ => {
                let f = ArrayFormatter::try_new(a.as_ref(), &FormatOptions::default())?;
                let mut text = String::new();
                for i in 0..a.len() {
                    let id = if valid(i) {
                        text.clear();
                        let _ = write!(text, "{}", f.value(i));
                        self.id(&text)
                    } else {
                        NONE
                    };
                    self.ids.push(id);
                }
            }
        }
        Ok(())
    }
}

/// What to read of one run, by column name.
#[derive(Debug, Clone)]
pub(crate) struct Wanted {
    pub key: Vec<(String, KeyKind)>,
    /// The compared score columns, in the comparison's order.
    pub scores: Vec<String>,
    pub group: Option<String>,
    pub cluster: Option<String>,
}

/// One unit's rows.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub rows: usize,
    pub keys: Vec<KeyCol>,
    /// Some key is null (the partitioned join reports it).
    pub null_key: bool,
    /// Per compared column, its values (NaN for null).
    pub values: Vec<Packed>,
    /// Some compared value is +inf or -inf (the partitioned join reports it).
    pub infinite: bool,
    pub group: Option<Labels>,
    pub cluster: Option<Labels>,
}

impl Chunk {
    /// An empty chunk with room for `rows` rows.
    pub fn new(w: &Wanted, rows: usize) -> Chunk {
        Chunk {
            rows: 0,
            keys: w.key.iter().map(|(_, k)| KeyCol::new(*k, rows)).collect(),
            null_key: false,
            values: (0..w.scores.len())
                .map(|_| Packed::Units(Vec::with_capacity(rows)))
                .collect(),
            infinite: false,
            group: w.group.as_ref().map(|_| Labels::default()),
            cluster: w.cluster.as_ref().map(|_| Labels::default()),
        }
    }

    /// Appends a batch holding the wanted columns. `None` when a column is missing.
    pub fn extend(
        &mut self,
        w: &Wanted,
        batch: &RecordBatch,
    ) -> Result<Option<()>, arrow::error::ArrowError> {
        let Some(keys) = w
            .key
            .iter()
            .map(|(k, _)| batch.column_by_name(k))
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(None);
        };
        if keys.iter().any(|a| a.null_count() > 0) {
            self.null_key = true;
            return Ok(Some(()));
        }
        for (col, a) in self.keys.iter_mut().zip(keys) {
            col.extend(a)?;
        }
        for (name, out) in w.scores.iter().zip(&mut self.values) {
            let Some(a) = batch.column_by_name(name) else {
                return Ok(None);
            };
            let cast = arrow::compute::cast(a.as_ref(), &DataType::Float64)?;
            let Some(f) = cast.as_any().downcast_ref::<Float64Array>() else {
                return Ok(None);
            };
            let nan: Vec<f64>;
            let values = if f.null_count() == 0 {
                f.values().as_ref()
            } else {
                nan = (0..f.len())
                    .map(|i| if f.is_valid(i) { f.value(i) } else { f64::NAN })
                    .collect();
                &nan
            };
            self.infinite |= values.iter().any(|x| x.is_infinite());
            out.extend(values);
        }
        for (name, labels) in [(&w.group, &mut self.group), (&w.cluster, &mut self.cluster)] {
            if let (Some(name), Some(labels)) = (name, labels) {
                let Some(a) = batch.column_by_name(name) else {
                    return Ok(None);
                };
                labels.extend(a)?;
            }
        }
        self.rows += batch.num_rows();
        Ok(Some(()))
    }

    /// The key of row `i` as compare.json writes it (`key_int` per key column).
    pub fn key_json(&self, i: usize) -> Value {
        if self.keys.len() == 1 {
            return self.keys[0].json(i);
        }
        Value::Array(self.keys.iter().map(|k| k.json(i)).collect())
    }

    /// Row `i`'s key against row `j`'s of `other`, column by column.
    pub fn cmp_key(&self, i: usize, other: &Chunk, j: usize) -> Ordering {
        for (a, b) in self.keys.iter().zip(&other.keys) {
            match a.cmp(i, b, j) {
                Ordering::Equal => continue,
                o => return o,
            }
        }
        Ordering::Equal
    }

    /// Whether the keys of rows `i` to `i + len` rise strictly, each above the one before.
    pub fn rising(&self, i: usize, len: usize) -> bool {
        if let [KeyCol::Signed(v)] = self.keys.as_slice() {
            return v[i..i + len].windows(2).all(|w| w[0] < w[1]);
        }
        (i + 1..i + len).all(|r| self.cmp_key(r - 1, self, r) == Ordering::Less)
    }

    /// A 64-bit hash of row `i`'s key.
    pub fn key_hash(&self, i: usize) -> u64 {
        self.keys.iter().fold(0, |h, k| k.hash(i, h))
    }
}
