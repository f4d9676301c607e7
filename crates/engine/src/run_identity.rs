//! Run identity: which run a row of metrics.parquet, confusion.parquet or scores.parquet came
//! from, so the outputs of many runs load into one warehouse table.

use crate::{EngineError, Error};
use chrono::{DateTime, SubsecRound, Utc};
use std::collections::BTreeMap;

/// The longest `--run-id` accepted, in bytes.
pub const MAX_RUN_ID_BYTES: usize = 256;

/// The most `--label`s a run takes.
pub const MAX_LABELS: usize = 64;

/// The longest `labels` object a run takes, in bytes of its JSON text (the `labels` column of
/// metrics.parquet and confusion.parquet, and `labels` in run.json and metrics.json).
pub const MAX_LABELS_BYTES: usize = 64 * 1024;

/// A run's `run_id`, `run_started_at` and `labels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunIdentity {
    /// A UUIDv7 made from `started_at`, or the id the caller gave (`--run-id`).
    pub run_id: String,
    /// When the run started, UTC, to the microsecond (what the Parquet column holds).
    pub started_at: DateTime<Utc>,
    /// `--label KEY=VALUE` pairs, by key.
    pub labels: BTreeMap<String, String>,
}

impl Default for RunIdentity {
    fn default() -> Self {
        RunIdentity::starting_now()
    }
}

impl RunIdentity {
    /// A new run starting now: a fresh UUIDv7 whose timestamp is the start, no labels.
    pub fn starting_now() -> RunIdentity {
        let started_at = Utc::now().trunc_subsecs(6);
        let ts = uuid::Timestamp::from_unix(
            uuid::NoContext,
            started_at.timestamp().max(0) as u64,
            started_at.timestamp_subsec_nanos(),
        );
        RunIdentity {
            run_id: uuid::Uuid::new_v7(ts).hyphenated().to_string(),
            started_at,
            labels: BTreeMap::new(),
        }
    }

    /// A run starting now with the given id (`None`: a fresh UUIDv7) and labels. An id must
    /// be 1 to [`MAX_RUN_ID_BYTES`] bytes without whitespace or control characters (it ends
    /// up in file paths and warehouse keys); a label key must be non-empty and given once, and
    /// the labels at most [`MAX_LABELS`] taking at most [`MAX_LABELS_BYTES`] as JSON.
    pub fn new(run_id: Option<&str>, labels: &[(String, String)]) -> Result<RunIdentity, Error> {
        let mut run = RunIdentity::starting_now();
        if let Some(id) = run_id {
            check_run_id(id)?;
            run.run_id = id.to_owned();
        }
        for (k, v) in labels {
            if k.is_empty() {
                return Err(EngineError::LabelEmptyKey(v.clone()).into());
            }
            if run.labels.insert(k.clone(), v.clone()).is_some() {
                return Err(EngineError::LabelTwice(k.clone()).into());
            }
        }
        check_labels(&run.labels)?;
        Ok(run)
    }

    /// `run_started_at` in microseconds since the Unix epoch.
    pub fn started_at_micros(&self) -> i64 {
        self.started_at.timestamp_micros()
    }

    /// `run_started_at` as RFC 3339, UTC, with six decimals and `Z`.
    pub fn started_at_rfc3339(&self) -> String {
        self.started_at
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
    }

    /// The `labels` column: a JSON object with keys sorted, or `None` without labels.
    pub fn labels_json(&self) -> Option<String> {
        (!self.labels.is_empty())
            .then(|| serde_json::to_string(&self.labels).unwrap_or_else(|_| "{}".to_owned()))
    }

    /// The labels as a JSON value: an object, or null without labels.
    pub fn labels_value(&self) -> serde_json::Value {
        if self.labels.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::json!(self.labels)
        }
    }
}

/// The labels' count and size: they are written into every output (and the Python API's
/// tables repeat them on every row), so a few huge values would multiply.
fn check_labels(labels: &BTreeMap<String, String>) -> Result<(), EngineError> {
    if labels.len() > MAX_LABELS {
        return Err(EngineError::LabelsTooMany {
            count: labels.len(),
            max: MAX_LABELS,
        });
    }
    let size = serde_json::to_string(labels).map_or(0, |j| j.len());
    if size > MAX_LABELS_BYTES {
        let (key, value) = labels
            .iter()
            .max_by_key(|(k, v)| k.len() + v.len())
            .map(|(k, v)| (k.as_str(), v.len()))
            .unwrap_or_default();
        let mut shown: String = key.chars().take(40).collect();
        if shown.len() < key.len() {
            shown.push('…');
        }
        return Err(EngineError::LabelsTooLarge {
            size,
            max: MAX_LABELS_BYTES,
            key: shown,
            value,
        });
    }
    Ok(())
}

fn check_run_id(id: &str) -> Result<(), EngineError> {
    if id.is_empty() {
        return Err(EngineError::RunIdEmpty);
    }
    if id.len() > MAX_RUN_ID_BYTES {
        return Err(EngineError::RunIdTooLong {
            len: id.len(),
            max: MAX_RUN_ID_BYTES,
        });
    }
    if let Some(c) = id.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(EngineError::RunIdCharacter {
            id: id.escape_debug().to_string(),
            c,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_fresh_id_is_a_uuid_v7_of_the_start() {
        let run = RunIdentity::starting_now();
        let id = uuid::Uuid::parse_str(&run.run_id).unwrap();
        assert_eq!(id.get_version_num(), 7);
        assert_eq!(run.run_id.len(), 36);
        let (secs, nanos) = id.get_timestamp().unwrap().to_unix();
        // UUIDv7 holds milliseconds; the start keeps microseconds.
        assert_eq!(
            secs as i64 * 1000 + i64::from(nanos / 1_000_000),
            run.started_at.timestamp_millis()
        );
        assert_eq!(run.started_at.timestamp_subsec_nanos() % 1000, 0);
        assert_eq!(run.labels_json(), None);
        assert_eq!(run.labels_value(), serde_json::Value::Null);
        let t = run.started_at_rfc3339();
        assert_eq!(t.len(), "2026-11-23T04:05:06.123456Z".len(), "{t}");
        assert_eq!(
            DateTime::parse_from_rfc3339(&t).unwrap().timestamp_micros(),
            run.started_at_micros()
        );
        assert_ne!(RunIdentity::starting_now().run_id, run.run_id);
    }

    #[test]
    fn ids_and_labels_are_checked() {
        let labels = vec![
            ("model".to_owned(), "m-1".to_owned()),
            ("dataset".to_owned(), "mmlu \"x\"".to_owned()),
        ];
        let run = RunIdentity::new(Some("nightly-2026-11-23"), &labels).unwrap();
        assert_eq!(run.run_id, "nightly-2026-11-23");
        assert_eq!(
            run.labels_json().as_deref(),
            Some(r#"{"dataset":"mmlu \"x\"","model":"m-1"}"#)
        );
        let err = |id: Option<&str>, labels: &[(String, String)]| {
            RunIdentity::new(id, labels).unwrap_err().message
        };
        assert_eq!(err(Some(""), &[]), "`--run-id` is empty");
        assert_eq!(
            err(Some("a b"), &[]),
            "`--run-id a b` holds ' '; a run id has no whitespace or control characters"
        );
        assert_eq!(
            err(Some(&"x".repeat(257)), &[]),
            "`--run-id` is 257 bytes long; at most 256 are allowed"
        );
        let twice = vec![
            ("model".to_owned(), "a".to_owned()),
            ("model".to_owned(), "b".to_owned()),
        ];
        assert_eq!(err(None, &twice), "`--label model=...` is given twice");
    }
}
