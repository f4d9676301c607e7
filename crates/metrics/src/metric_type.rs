//! A metric type as the registry lists it ([`MetricType`]): its description ([`About`]),
//! the parser of its own options, and the maker of its empty state. A type's file writes it
//! as a [`Kind`], typed; every [`Kind`] is a [`MetricType`].

use crate::accumulator::{read_state, MetricState, State};
use crate::MetricError;
pub use evalscore_task::OptionDoc;
use evalscore_task::{MapNode, MetricOptions, MetricReads, Node, ScorerField, TaskError};
use std::fmt::Debug;

/// What the registry, the parser and the reference know of a metric type.
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// Its `type:` as task files write it.
    pub name: &'static str,
    /// One paragraph for the reference (Markdown).
    pub doc: &'static str,
    /// What it reads: the keys `field`, or `field_gt` and `field_pred`.
    pub reads: MetricReads,
    /// Its own option keys, in the order "allowed keys" lists them. The keys of what it
    /// reads and the common keys (`type`, `name`, `key`, `group_by`) are the registry's.
    pub options: &'static [OptionDoc],
    /// A metric of this type, a YAML mapping on one line, over the fields of the scorer
    /// `string_equals` (for the reference and the tests, which parse it).
    pub example: &'static str,
    /// What its figures are (Markdown, for the reference).
    pub figures: &'static str,
    /// Whether its confusion matrix goes to confusion.parquet and metrics.json.
    pub confusion: bool,
}

impl About {
    /// Every key a metric of this type accepts, in the order "allowed keys" lists them:
    /// `type`, what it reads, its own options, then `name`, `key` and `group_by`.
    pub fn keys(&self) -> Vec<&'static str> {
        let mut keys = vec!["type"];
        keys.extend_from_slice(self.reads.keys());
        keys.extend(self.options.iter().map(|o| o.key));
        keys.extend_from_slice(&["name", "key", "group_by"]);
        keys
    }
}

/// What a run gives every metric's state besides its own options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// The task's `confidence:`, for intervals.
    pub confidence: f64,
}

/// What a metric type parses its own options from: the metric's mapping, with helpers
/// whose errors name the metric type and the scorer's fields.
#[derive(Debug, Clone, Copy)]
pub struct ParseCx<'a> {
    pub map: MapNode<'a>,
    /// The metric type as written.
    pub metric_type: &'a str,
    pub(crate) fields: &'a [ScorerField],
    pub(crate) scorer_type: &'a str,
}

impl<'a> ParseCx<'a> {
    /// The node of `key`, if given.
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        self.map.get(key)
    }

    /// The text of `key`, if given.
    pub fn text(&self, key: &str) -> Result<Option<String>, TaskError> {
        self.map.get(key).map(|n| n.scalar_string(key)).transpose()
    }

    /// The text of `key`, which the metric must give; the error shows `key: example`.
    pub fn required(&self, key: &str, example: &str) -> Result<(String, Node<'a>), TaskError> {
        let n = self.map.get(key).ok_or_else(|| {
            self.map
                .err(format!("metric `{}` needs `{key}`", self.metric_type))
                .with_hint(format!("e.g. `{key}: {example}`; {}", self.field_hint()))
        })?;
        Ok((n.scalar_string(key)?, n))
    }

    /// The whole number at `key`, from `min` to `max` (written as a number or as quoted
    /// digits), or `default` when the key is absent.
    pub fn whole_number(
        &self,
        key: &str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, TaskError> {
        let Some(n) = self.map.get(key) else {
            return Ok(default);
        };
        let json = n.to_json();
        json.as_u64()
            .or_else(|| json.as_str().and_then(|s| s.parse().ok()))
            .filter(|v| (min..=max).contains(v))
            .ok_or_else(|| {
                n.err(format!(
                    "`{key}` must be a whole number from {min} to {max}"
                ))
            })
    }

    /// The label ([`crate::values::label`]) written at `key`, if given.
    pub fn label(&self, key: &str) -> Result<Option<String>, TaskError> {
        Ok(self
            .text(key)?
            .map(|t| crate::values::label(&t).into_owned()))
    }

    /// The label written at `key`, which the metric must give ([`ParseCx::required`]).
    pub fn required_label(&self, key: &str, example: &str) -> Result<String, TaskError> {
        let (text, _) = self.required(key, example)?;
        Ok(crate::values::label(&text).into_owned())
    }

    /// `labels:`, if given: a list of at least `min` values (1 or 2), in order, each as its
    /// label ([`crate::values::label`]); two entries of one value are an error.
    pub fn labels(&self, min: usize, example: &str) -> Result<Option<Vec<String>>, TaskError> {
        let Some(n) = self.map.get("labels") else {
            return Ok(None);
        };
        let what = if min <= 1 {
            "a non-empty list of strings"
        } else {
            "a list of at least two strings"
        };
        let written = evalscore_task::literal_list(&n.to_json())
            .filter(|l| l.len() >= min.max(1))
            .ok_or_else(|| {
                n.err(format!("`labels` must be {what}"))
                    .with_hint(format!("e.g. `labels: {example}`"))
            })?;
        let mut labels: Vec<String> = Vec::with_capacity(written.len());
        for w in &written {
            let l = crate::values::label(w).into_owned();
            if let Some(j) = labels.iter().position(|x| *x == l) {
                return Err(n.err(format!(
                    "`labels` lists one value twice: `{}` and `{w}` are both the label `{l}`",
                    written[j]
                )));
            }
            labels.push(l);
        }
        Ok(Some(labels))
    }

    /// An error at the metric's mapping.
    pub fn err(&self, message: impl Into<String>) -> TaskError {
        self.map.err(message)
    }

    /// "fields of `<scorer type>`: ...", for hints.
    pub fn field_hint(&self) -> String {
        let names: Vec<&str> = self.fields.iter().map(|f| f.name).collect();
        format!("fields of `{}`: {}", self.scorer_type, names.join(", "))
    }
}

/// A metric type: registered once ([`crate::registry`]), it parses the options of every
/// metric of its type and makes their states.
pub trait MetricType: Sync {
    /// Its name, doc, options and example.
    fn about(&self) -> &'static About;
    /// Parses its own options (the common keys and what it reads are parsed already).
    fn parse(&self, cx: &ParseCx<'_>) -> Result<MetricOptions, TaskError>;
    /// An empty state for a metric with `options` (from [`MetricType::parse`]).
    fn state(&self, options: &MetricOptions, setup: &Setup) -> Result<MetricState, MetricError>;
    /// A state from its bytes ([`crate::Accumulator::state`]).
    fn read_state(&self, bytes: &[u8]) -> Result<MetricState, MetricError>;
}

/// A metric type as its file writes it: typed options and state. Every `Kind` is a
/// [`MetricType`].
pub trait Kind: Sync {
    /// Its options, parsed from the task.
    type Options: Debug + Clone + Send + Sync + 'static;
    /// Its running state.
    type State: State;
    /// Its name, doc, options and example.
    fn about(&self) -> &'static About;
    /// Parses its own options.
    fn parse(&self, cx: &ParseCx<'_>) -> Result<Self::Options, TaskError>;
    /// An empty state.
    fn state(&self, options: &Self::Options, setup: &Setup) -> Self::State;
}

impl<K: Kind> MetricType for K {
    fn about(&self) -> &'static About {
        Kind::about(self)
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<MetricOptions, TaskError> {
        Ok(MetricOptions::new(Kind::parse(self, cx)?))
    }

    fn state(&self, options: &MetricOptions, setup: &Setup) -> Result<MetricState, MetricError> {
        let options = options.get::<K::Options>().ok_or_else(|| {
            MetricError::Invalid(format!(
                "options of another type given to metric type `{}`: {options:?}",
                Kind::about(self).name
            ))
        })?;
        Ok(MetricState::new(Kind::state(self, options, setup)))
    }

    fn read_state(&self, bytes: &[u8]) -> Result<MetricState, MetricError> {
        read_state::<K::State>(bytes)
    }
}

/// A metric type with no options of its own, as its file writes it: its [`About`] and its
/// empty state. Every `Simple` type is a [`Kind`] whose options are [`NoOptions`].
pub trait Simple: Sync {
    /// Its name, doc, options and example.
    const ABOUT: About;
    /// Its running state.
    type State: State;
    /// An empty state.
    fn state(&self, setup: &Setup) -> Self::State;
}

impl<S: Simple> Kind for S {
    type Options = NoOptions;
    type State = S::State;

    fn about(&self) -> &'static About {
        &S::ABOUT
    }

    fn parse(&self, _cx: &ParseCx<'_>) -> Result<NoOptions, TaskError> {
        Ok(NoOptions)
    }

    fn state(&self, _options: &NoOptions, setup: &Setup) -> S::State {
        Simple::state(self, setup)
    }
}

/// Options of a type that has none of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoOptions;
