//! The byte form of a metric state, so partial states computed on many machines (Spark
//! partitions, Ray tasks) can be merged on one.
//!
//! Layout, version 2: the 4 bytes `ESMS`, the format version as a little-endian `u16`, then
//! the [`Grouped`] state in [postcard](https://postcard.jamesmunns.com/wire-format)'s wire
//! format (serde's data model: fields in declaration order, varint integers, `f64` as its 8
//! little-endian bytes, so NaN and every other value round-trip bit for bit). Maps are
//! written sorted by key, so equal states give equal bytes. A reader refuses other magic
//! bytes and other versions with a [`MetricError`] that says which; a later version that
//! changes the layout bumps [`STATE_FORMAT_VERSION`]. Version 2 appends to a classification
//! state its label form, the rows it excluded for a null label and the unexpected labels it
//! saw; version 1 is still read (as text labels with none of those counted), also inside
//! another layout that embeds states ([`read_layout`]).

use crate::{Grouped, MetricError};

/// The first bytes of every serialized state.
pub const STATE_MAGIC: &[u8; 4] = b"ESMS";
/// The layout version this build writes and reads.
pub const STATE_FORMAT_VERSION: u16 = 2;

thread_local! {
    /// The layout version the states being deserialized on this thread were written in.
    static LAYOUT: std::cell::Cell<u16> = const { std::cell::Cell::new(STATE_FORMAT_VERSION) };
}

/// Runs `read` (a deserialization of states, or of a layout that embeds them) reading
/// states written in layout `version`.
pub fn read_layout<T>(version: u16, read: impl FnOnce() -> T) -> T {
    struct Restore(u16);
    impl Drop for Restore {
        fn drop(&mut self) {
            LAYOUT.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LAYOUT.with(|l| l.replace(version)));
    read()
}

/// The layout version being read on this thread.
pub(crate) fn reading_layout() -> u16 {
    LAYOUT.with(std::cell::Cell::get)
}

impl Grouped {
    /// The state as bytes (see the module docs for the layout).
    pub fn to_bytes(&self) -> Result<Vec<u8>, MetricError> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(STATE_MAGIC);
        out.extend_from_slice(&STATE_FORMAT_VERSION.to_le_bytes());
        postcard::to_extend(self, out).map_err(|source| MetricError::Bytes {
            what: "cannot serialize a metric state",
            source,
        })
    }

    /// A state from [`Grouped::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Grouped, MetricError> {
        let Some(rest) = bytes.strip_prefix(STATE_MAGIC.as_slice()) else {
            return Err(MetricError::Invalid(
                "not an evalscore metric state (the bytes do not start with `ESMS`)".to_owned(),
            ));
        };
        let Some((version, body)) = rest.split_first_chunk::<2>() else {
            return Err(MetricError::Invalid(
                "a metric state ends before its version".to_owned(),
            ));
        };
        let version = u16::from_le_bytes(*version);
        if version != STATE_FORMAT_VERSION && version != 1 {
            return Err(MetricError::Invalid(format!(
                "a metric state of format version {version}; this build reads version {STATE_FORMAT_VERSION}"
            )));
        }
        match read_layout(version, || postcard::take_from_bytes::<Grouped>(body)) {
            Ok((g, [])) => Ok(g),
            Ok((_, extra)) => Err(MetricError::Invalid(format!(
                "a metric state has {} bytes after its end",
                extra.len()
            ))),
            Err(source) => Err(MetricError::Bytes {
                what: "a damaged metric state",
                source,
            }),
        }
    }
}

/// Serde helpers: a `HashMap` written as a sequence of (key, value) pairs sorted by key, so
/// equal maps give equal bytes whatever their iteration order.
pub(crate) mod sorted_map {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::HashMap;
    use std::hash::Hash;

    pub fn serialize<K, V, S>(map: &HashMap<K, V>, s: S) -> Result<S::Ok, S::Error>
    where
        K: Serialize + Ord,
        V: Serialize,
        S: Serializer,
    {
        let mut pairs: Vec<(&K, &V)> = map.iter().collect();
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        pairs.serialize(s)
    }

    pub fn deserialize<'de, K, V, D>(d: D) -> Result<HashMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Eq + Hash,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}
