//! Values derived from one batch's columns, made once for every scorer or metric of a suite's
//! tasks that asks for them: the kernels' `BatchMemo` and the metrics' `FoldMemo` hold their
//! entries here.
//!
//! Columns are recognised by their buffers: an entry holds clones of the buffers it was made
//! from, so while it exists their memory can be neither freed nor written (an Arrow buffer
//! is immutable while shared), and the same address and length mean the same bytes. A `tag`
//! names what else the value depends on (options, labels, an array's offset and length).

use arrow::array::Array;
use arrow::buffer::{Buffer, NullBuffer};
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};

/// A column's buffer as part of a key: the buffer and the bit it starts at (a validity
/// bitmap's offset; 0 for other buffers), `None` where a column has no validity.
pub type BufferKey<'a> = Option<(&'a Buffer, usize)>;

/// A validity bitmap as a key: its buffer and the bit it starts at.
pub fn nulls_key(n: Option<&NullBuffer>) -> BufferKey<'_> {
    n.map(|n| (n.buffer(), n.offset()))
}

/// Values of type `T`, each made from the buffers (and tag) of its key.
#[derive(Debug)]
pub struct ByBuffers<T> {
    entries: Mutex<Vec<Entry<T>>>,
}

impl<T> Default for ByBuffers<T> {
    fn default() -> Self {
        ByBuffers {
            entries: Mutex::new(Vec::new()),
        }
    }
}

#[derive(Debug)]
struct Entry<T> {
    key: Vec<Option<(Buffer, usize)>>,
    tag: String,
    value: Arc<OnceLock<T>>,
}

impl<T> ByBuffers<T> {
    /// The cell of the value made from `key` and `tag`, added when new. Its value is made
    /// outside the lock: other keys' values are made meanwhile, and whoever asks for this one
    /// waits for it (`OnceLock::get_or_init`).
    pub fn cell(&self, key: &[BufferKey], tag: &str) -> Arc<OnceLock<T>> {
        let same = |b: &Option<(Buffer, usize)>, c: &BufferKey| match (b, c) {
            (Some((b, i)), Some((c, j))) => {
                b.as_ptr() == c.as_ptr() && b.len() == c.len() && i == j
            }
            (None, None) => true,
            _ => false,
        };
        // A poisoned lock only means another scorer panicked: the entries are whole.
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let found = entries.iter().find(|e| {
            e.tag == tag
                && e.key.len() == key.len()
                && e.key.iter().zip(key).all(|(b, c)| same(b, c))
        });
        match found {
            Some(e) => Arc::clone(&e.value),
            None => {
                let value = Arc::new(OnceLock::new());
                entries.push(Entry {
                    key: key.iter().map(|b| b.map(|(b, i)| (b.clone(), i))).collect(),
                    tag: tag.to_owned(),
                    value: Arc::clone(&value),
                });
                value
            }
        }
    }

    /// The cell of the value made from the arrays `arrays` (every buffer of each, its
    /// children's too, with its type, offset and length) and `tag`.
    pub fn cell_of(&self, arrays: &[&dyn Array], tag: &str) -> Arc<OnceLock<T>> {
        let mut parts: Vec<Option<(Buffer, usize)>> = Vec::new();
        let mut full = String::new();
        for a in arrays {
            let mut stack = vec![a.to_data()];
            while let Some(d) = stack.pop() {
                // Writing to a String cannot fail.
                let _ = write!(full, "{}:{}+{};", d.data_type(), d.offset(), d.len());
                parts.extend(d.buffers().iter().map(|b| Some((b.clone(), 0))));
                parts.push(d.nulls().map(|n| (n.buffer().clone(), n.offset())));
                stack.extend(d.child_data().iter().cloned());
            }
            full.push('|');
        }
        full.push_str(tag);
        let key: Vec<BufferKey> = parts
            .iter()
            .map(|p| p.as_ref().map(|(b, i)| (b, *i)))
            .collect();
        self.cell(&key, &full)
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
