//! The byte form of a metric state, so partial states computed on many machines (Spark
//! partitions, Ray tasks) can be merged on one.
//!
//! Layout, version 5: the 4 bytes `ESMS`, the format version as a little-endian `u16`, then
//! the [`Grouped`] state in [postcard](https://postcard.jamesmunns.com/wire-format)'s wire
//! format (serde's data model: fields in declaration order, varint integers, `f64` as its 8
//! little-endian bytes, so NaN and every other value round-trip bit for bit): the metric
//! type's registry name, then the empty, the overall and each group's state (sorted by group
//! key), each as the bytes of its type's state ([`crate::Accumulator::state`]), read back by
//! the type's registry entry ([`crate::MetricType::read_state`]). Maps are written sorted by
//! key, so equal states give equal bytes. A reader refuses other magic bytes and other
//! versions (the enum layouts of versions 1 and 2, version 3's `mean` and `win_rate`
//! without a bootstrap, and version 4's classification states with a label form, among
//! them) with a [`MetricError`] that says which; a later version
//! that changes the layout bumps [`STATE_FORMAT_VERSION`].

use crate::accumulator::take_all;
use crate::{registry, Grouped, MetricError, MetricState};
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;

/// The first bytes of every serialized state.
pub const STATE_MAGIC: &[u8; 4] = b"ESMS";
/// The layout version this build writes and reads.
pub const STATE_FORMAT_VERSION: u16 = 5;

/// The body of a [`Grouped`] state, as written.
#[derive(Serialize, Deserialize)]
struct Body<'a> {
    metric_type: std::borrow::Cow<'a, str>,
    empty: Vec<u8>,
    overall: Vec<u8>,
    groups: Vec<(Vec<String>, Vec<u8>)>,
}

impl Serialize for Grouped {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (empty, overall, groups) = self.parts();
        let bytes = |m: &MetricState| m.accumulator().state().map_err(S::Error::custom);
        let mut sorted: Vec<(&Vec<String>, &MetricState)> = groups.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        Body {
            metric_type: empty.accumulator().metric_type().into(),
            empty: bytes(empty)?,
            overall: bytes(overall)?,
            groups: sorted
                .into_iter()
                .map(|(k, m)| Ok((k.clone(), bytes(m)?)))
                .collect::<Result<_, S::Error>>()?,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Grouped {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let body = Body::deserialize(d)?;
        let ty = registry::find(&body.metric_type).ok_or_else(|| {
            D::Error::custom(format!(
                "a state of unknown metric type `{}`",
                body.metric_type
            ))
        })?;
        let read = |b: &[u8]| ty.read_state(b).map_err(D::Error::custom);
        let mut groups = HashMap::with_capacity(body.groups.len());
        for (k, b) in body.groups {
            groups.insert(k, read(&b)?);
        }
        Ok(Grouped::from_parts(
            read(&body.empty)?,
            read(&body.overall)?,
            groups,
        ))
    }
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
        if version != STATE_FORMAT_VERSION {
            return Err(MetricError::Invalid(format!(
                "a metric state of format version {version}; this build reads version {STATE_FORMAT_VERSION}"
            )));
        }
        take_all::<Grouped>(body)
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
