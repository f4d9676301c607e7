//! A scorer's options as its parser reads them: typed getters over the scorer's mapping,
//! each error at the line and column of the option (or of the scorer, for a missing one).

use crate::metric::function_ref;
use crate::raw::{MapNode, Node};
use crate::template::{Template, TemplateCompiler};
use crate::{FunctionRef, ModelSpec, TaskError};
use std::collections::BTreeMap;
use std::path::Path;

/// One scorer's mapping, with what its parser needs besides: the task's template compiler,
/// its `models:`, the task file's folder and the task's warnings.
#[derive(Debug)]
pub struct ScorerOptions<'a> {
    map: MapNode<'a>,
    scorer_type: &'a str,
    compiler: &'a mut TemplateCompiler,
    warnings: &'a mut Vec<String>,
    base_dir: Option<&'a Path>,
    models: &'a BTreeMap<String, ModelSpec>,
}

impl<'a> ScorerOptions<'a> {
    /// The options of the scorer `map`, whose type is `scorer_type` as written.
    pub fn new(
        map: MapNode<'a>,
        scorer_type: &'a str,
        compiler: &'a mut TemplateCompiler,
        warnings: &'a mut Vec<String>,
        base_dir: Option<&'a Path>,
        models: &'a BTreeMap<String, ModelSpec>,
    ) -> Self {
        ScorerOptions {
            map,
            scorer_type,
            compiler,
            warnings,
            base_dir,
            models,
        }
    }

    /// The scorer type as written (`includes`, `not_match`, ...).
    pub fn scorer_type(&self) -> &'a str {
        self.scorer_type
    }

    /// The scorer's whole mapping.
    pub fn map(&self) -> MapNode<'a> {
        self.map
    }

    /// The option `key` as written, null included.
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        self.map.get(key)
    }

    /// The option `key` when it is given and not null.
    pub fn given(&self, key: &str) -> Option<Node<'a>> {
        self.map.get(key).filter(|n| !n.is_null())
    }

    /// The option `key`, which the scorer needs: [`ScorerOptions::needs`] when it is absent
    /// or null.
    pub fn required(&self, key: &str, example: &str) -> Result<Node<'a>, TaskError> {
        self.given(key).ok_or_else(|| self.needs(key, example))
    }

    /// An error at the scorer.
    pub fn err(&self, message: impl Into<String>) -> TaskError {
        self.map.err(message)
    }

    /// An error at option `key` when the scorer has it, else at the scorer.
    pub fn err_at(&self, key: &str, message: impl Into<String>) -> TaskError {
        match self.map.get(key) {
            Some(n) => n.err(message),
            None => self.map.err(message),
        }
    }

    /// `scorer `TYPE` needs `key``, with the hint `e.g. `key: example``.
    pub fn needs(&self, key: &str, example: &str) -> TaskError {
        self.err(format!("scorer `{}` needs `{key}`", self.scorer_type))
            .with_hint(format!("e.g. `{key}: {example}`"))
    }

    /// What a template at `key` is called in messages: `TYPE.key`.
    pub fn what(&self, key: &str) -> String {
        format!("{}.{key}", self.scorer_type)
    }

    /// The template at `key` (text, or a YAML list for a literal list); `None` when absent
    /// or null. Its value is read as text.
    pub fn template(&mut self, key: &str) -> Result<Option<Template>, TaskError> {
        match self.given(key) {
            None => Ok(None),
            Some(n) => self.compiler.compile(n, &self.what(key)).map(Some),
        }
    }

    /// [`ScorerOptions::template`] for an option whose value may be a list as well as text
    /// (a list column, or text holding a JSON or Python list).
    pub fn list_template(&mut self, key: &str) -> Result<Option<Template>, TaskError> {
        let mut t = self.template(key)?;
        if let Some(t) = &mut t {
            t.list = true;
        }
        Ok(t)
    }

    /// The template at `key`, which the scorer needs ([`ScorerOptions::needs`]).
    pub fn required_template(&mut self, key: &str, example: &str) -> Result<Template, TaskError> {
        self.template(key)?.ok_or_else(|| self.needs(key, example))
    }

    /// [`ScorerOptions::required_template`] for an option whose value may be a list.
    pub fn required_list_template(
        &mut self,
        key: &str,
        example: &str,
    ) -> Result<Template, TaskError> {
        self.list_template(key)?
            .ok_or_else(|| self.needs(key, example))
    }

    /// A minijinja condition at `key` over `value`, `ground_truth` and the row (`custom`'s
    /// `condition:`), evaluated with [`Template::evaluate_condition`]; `None` when absent.
    pub fn condition(&mut self, key: &str) -> Result<Option<Template>, TaskError> {
        match self.get(key) {
            None => Ok(None),
            Some(n) => self
                .compiler
                .compile_condition(n, &self.what(key))
                .map(Some),
        }
    }

    /// `{{ sample.COLUMN }}` as the template of option `key`, located there: the deprecated
    /// `*_field` options name a column. `list`: its value may be a list
    /// ([`ScorerOptions::list_template`]).
    pub fn column_template(&self, key: &str, column: String, list: bool) -> Template {
        let location = self.get(key).and_then(|n| n.location);
        let mut t = self.compiler.column(column, location, &self.what(key));
        t.list = list;
        t
    }

    /// A user function's name at `key` (`custom`'s `function:`); `None` when absent or null.
    pub fn function(&self, key: &str) -> Result<Option<FunctionRef>, TaskError> {
        self.given(key)
            .map(|n| function_ref(n, &self.what(key)))
            .transpose()
    }

    /// Adds a warning (a deprecated option) to the task's warnings.
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// The task file's folder, against which relative file paths are read (`None`: the
    /// current directory).
    pub fn base_dir(&self) -> Option<&'a Path> {
        self.base_dir
    }

    /// The task's `models:`, by name.
    pub fn models(&self) -> &'a BTreeMap<String, ModelSpec> {
        self.models
    }
}

/// One option key of a scorer kind or a metric type, for unknown-key errors and the
/// generated references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDoc {
    pub key: &'static str,
    /// Whether every scorer of the kind (metric of the type) must give it.
    pub required: bool,
    /// One line for the reference (Markdown).
    pub doc: &'static str,
}

impl OptionDoc {
    pub const fn required(key: &'static str, doc: &'static str) -> OptionDoc {
        OptionDoc {
            key,
            required: true,
            doc,
        }
    }

    pub const fn optional(key: &'static str, doc: &'static str) -> OptionDoc {
        OptionDoc {
            required: false,
            ..OptionDoc::required(key, doc)
        }
    }

    /// The key as a reference's summary lists it: `` `key` ``, `` `key` (required) ``.
    pub fn listed(&self) -> String {
        if self.required {
            format!("`{}` (required)", self.key)
        } else {
            format!("`{}`", self.key)
        }
    }
}
