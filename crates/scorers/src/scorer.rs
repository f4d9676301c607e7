//! The two traits of a scorer: [`ScorerType`], a kind as the registry lists it (its names,
//! options and parser), and [`Scorer`], one scorer of a task bound to its options (its fields,
//! templates and scoring of a batch).

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::options::{parse_extract, parse_normalize};
use crate::input::TextInput;
use crate::judge::runtime::Judged;
use crate::row_error::RowError;
use evalscore_kernels::{Extractor, Normalizer};
use evalscore_task::{FunctionRef, ModelSpec, ScorerField, ScorerOptions, TaskError, Template};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use evalscore_task::OptionDoc;

/// The `value:` option of every scorer that scores a text.
pub const VALUE_OPTION: OptionDoc = OptionDoc::optional(
    "value",
    "template of the text scored; default: the model output",
);

/// What the registry, the parser and the reference know of a scorer kind: one constant per
/// kind, returned by [`ScorerType::about`].
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// The type names it parses, as task files write them (most kinds have one).
    pub names: &'static [&'static str],
    /// One paragraph for the reference (Markdown).
    pub doc: &'static str,
    /// Its own option keys, in the order "allowed keys" lists them (`value` included where
    /// it takes one). The common keys (`type`, `key`, `metrics`, ...) are the registry's.
    pub options: &'static [OptionDoc],
    /// A minimal scorer of this kind, a YAML mapping on one line (for the reference and the
    /// tests, which parse it); model-graded ones name the model `judge`, `similarity` the
    /// model `embedder`.
    pub example: &'static str,
    /// Whether it scores a text that `normalize:` and `extract:` apply to (a judge reads a
    /// whole reply: those keys are unknown to it).
    pub text_options: bool,
}

impl About {
    /// A kind that scores a text (`normalize:` and `extract:` apply).
    pub const fn new(
        names: &'static [&'static str],
        doc: &'static str,
        options: &'static [OptionDoc],
        example: &'static str,
    ) -> About {
        About {
            names,
            doc,
            options,
            example,
            text_options: true,
        }
    }

    /// The same, for a judge kind: it reads a whole reply, so `normalize:` and `extract:` are
    /// unknown to it.
    pub const fn judge(self) -> About {
        About {
            text_options: false,
            ..self
        }
    }
}

/// A scorer kind: registered once ([`crate::registry`]), it parses the options of every
/// scorer of its type(s) into a bound [`Scorer`].
pub trait ScorerType: Sync {
    /// Its names, doc, options and example.
    fn about(&self) -> &'static About;
    /// Parses the options of a scorer whose type is `name` (one of [`ScorerType::names`]).
    fn parse(&self, name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError>;

    /// [`About::names`].
    fn names(&self) -> &'static [&'static str] {
        self.about().names
    }
    /// [`About::doc`].
    fn doc(&self) -> &'static str {
        self.about().doc
    }
    /// [`About::options`].
    fn options(&self) -> &'static [OptionDoc] {
        self.about().options
    }
    /// [`About::example`].
    fn example(&self) -> &'static str {
        self.about().example
    }
    /// [`About::text_options`].
    fn text_options(&self) -> bool {
        self.about().text_options
    }
}

/// A scorer kind as its file writes it: the [`About`] constant and the parser. Every `Kind`
/// is a [`ScorerType`]; kinds that are values rather than types (one struct serving several
/// kinds) implement [`ScorerType`] directly.
pub trait Kind: Sync {
    /// Its names, doc, options and example.
    const ABOUT: About;
    /// Parses the options of a scorer whose type is `name` (one of its names).
    fn parse(&self, name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError>;
}

impl<K: Kind> ScorerType for K {
    fn about(&self) -> &'static About {
        &K::ABOUT
    }

    fn parse(&self, name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        Kind::parse(self, name, cx)
    }
}

/// A scorer of a task, bound to its options: what it produces and how it scores a batch.
/// (`Any`: a test can look at a kind's own bound type.)
pub trait Scorer: std::any::Any + std::fmt::Debug + Send + Sync {
    /// Every field it produces, written ones first in output order, as metrics are checked
    /// against them when the task loads.
    fn fields(&self) -> &'static [ScorerField];
    /// Its fields once bound to the input's `schema`: [`Scorer::fields`], unless a field's
    /// kind follows the type of the column it reads (`value`'s `value`). Same names, same
    /// order.
    fn fields_for(&self, _schema: &arrow::datatypes::Schema) -> &'static [ScorerField] {
        self.fields()
    }
    /// Every template it evaluates, in a fixed order.
    fn templates(&self) -> Vec<&Template>;
    /// The template of the text it scores (`value:`, a judge's submission or user prompt);
    /// `None`: the model output.
    fn value(&self) -> Option<&Template>;
    /// Scores one batch: the fields in `input.needed` (others may be left out).
    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError>;
    /// The `models:` entry it asks (a judge's, or `similarity` by embedding's).
    fn model_key(&self) -> Option<&str> {
        None
    }
    /// The user function it calls (`custom`'s `function:`).
    fn function(&self) -> Option<&FunctionRef> {
        None
    }
    /// Its judge side, for a model-graded scorer: requests sent ahead of scoring, exported
    /// for a Batch API, and unreadable replies counted as `invalid`.
    fn judge(&self) -> Option<&dyn Judged> {
        None
    }
    /// Checks made once every scorer of the task is parsed and keyed.
    fn check(&self, _models: &BTreeMap<String, ModelSpec>) -> Result<(), TaskError> {
        Ok(())
    }
}

/// What a scorer kind parses from: [`ScorerOptions`] (through `Deref`), and the common text
/// options `normalize:` and `extract:`, already parsed.
#[derive(Debug)]
pub struct ParseCx<'a> {
    options: ScorerOptions<'a>,
    normalize: Option<Arc<Normalizer>>,
    extract: Option<Arc<Extractor>>,
}

impl<'a> ParseCx<'a> {
    /// Reads `normalize:` and `extract:` when `text_options` (the kind scores a text).
    pub(crate) fn new(options: ScorerOptions<'a>, text_options: bool) -> Result<Self, TaskError> {
        let (mut normalize, mut extract) = (None, None);
        if text_options {
            if let Some(n) = options.given("normalize") {
                normalize = Some(Arc::new(parse_normalize(n)?));
            }
            if let Some(n) = options.given("extract") {
                extract = Some(Arc::new(parse_extract(n)?));
            }
        }
        Ok(ParseCx {
            options,
            normalize,
            extract,
        })
    }

    /// The `normalize:` steps, if any.
    pub fn normalize(&self) -> Option<&Normalizer> {
        self.normalize.as_deref()
    }

    /// The text the scorer scores: compiles `value:` and takes `extract:` and `normalize:`.
    pub fn text_input(&mut self) -> Result<TextInput, TaskError> {
        Ok(TextInput::new(
            self.options.template("value")?,
            self.extract.clone(),
            self.normalize.clone(),
        ))
    }
}

impl<'a> std::ops::Deref for ParseCx<'a> {
    type Target = ScorerOptions<'a>;
    fn deref(&self) -> &ScorerOptions<'a> {
        &self.options
    }
}

impl std::ops::DerefMut for ParseCx<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.options
    }
}
