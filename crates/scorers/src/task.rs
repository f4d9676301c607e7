//! The typed task: each scorer bound to its options, with its metrics.

use crate::parse::{assign_keys, parse_scorer, TaskScope};
use crate::spec::ScorerSpec;
use evalscore_kernels::pattern;
use evalscore_task::{
    FunctionRef, ModelSpec, TaskDocument, TaskError, TaskFilter, TemplateCompiler,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A parsed, validated task definition.
#[derive(Debug)]
pub struct Task {
    /// The model output column named by `definition.output_column`, if any.
    pub output_column: Option<String>,
    pub scorers: Vec<ScorerSpec>,
    /// Non-fatal remarks (ignored keys, deprecated options), shown to the user and kept in run.json.
    pub warnings: Vec<String>,
    /// The `config:` values after `--set` overrides, as used for the placeholders.
    pub config: BTreeMap<String, String>,
    /// The level of every confidence interval (`confidence:`, default 0.95).
    pub confidence: f64,
    /// The judge endpoints of `models:`, by name (for model-graded scorers' `model_key`).
    pub models: BTreeMap<String, ModelSpec>,
    /// SHA-256 of the task text after `<< config.NAME >>` substitution: two tasks with the
    /// same fingerprint score alike, so their metric states may be merged.
    pub fingerprint: [u8; 32],
    /// `filter:`, the task's partition filter (the engine applies it with `--where`).
    pub filter: Option<TaskFilter>,
}

impl Task {
    /// Parses a task file's text. `overrides` are the `--set NAME=VALUE` pairs; they win over
    /// the file's `config:`.
    pub fn from_yaml(text: &str, overrides: &[(String, String)]) -> Result<Task, TaskError> {
        Task::from_yaml_in(text, overrides, None)
    }

    /// [`Task::from_yaml`] for a task file in `base_dir`: relative file paths in the task
    /// (a `valid_json` `schema:` file) are resolved against it. `None`: the current directory.
    pub fn from_yaml_in(
        text: &str,
        overrides: &[(String, String)],
        base_dir: Option<&Path>,
    ) -> Result<Task, TaskError> {
        // Every pattern of the task counts against one budget of compiled size.
        pattern::with_task_budget(|| Task::load(text, overrides, base_dir))
    }

    fn load(
        text: &str,
        overrides: &[(String, String)],
        base_dir: Option<&Path>,
    ) -> Result<Task, TaskError> {
        let doc = TaskDocument::parse(text, overrides)?;
        let mut warnings = doc.warnings.clone();
        let mut compiler = TemplateCompiler::new();
        let mut scope = TaskScope {
            compiler: &mut compiler,
            warnings: &mut warnings,
            base_dir,
            models: &doc.models,
        };
        let mut scorers = Vec::new();
        for node in doc.scorers() {
            scorers.push(parse_scorer(node, &mut scope)?);
        }
        assign_keys(&mut scorers)?;
        for s in &scorers {
            s.scorer.check(&doc.models)?;
        }
        compiler.finish();
        Ok(Task {
            output_column: doc.output_column,
            scorers,
            warnings,
            config: doc.config,
            confidence: doc.confidence,
            models: doc.models,
            fingerprint: doc.fingerprint,
            filter: doc.filter,
        })
    }

    /// Whether any scorer reads the model output (a missing `value`, or a template naming
    /// `solver_output`).
    pub fn needs_model_output(&self) -> bool {
        self.scorers.iter().any(|s| {
            s.scorer.value().is_none() || s.scorer.templates().iter().any(|t| t.uses_model_output())
        })
    }

    /// The `models:` entries its scorers ask (judges, `similarity` by embedding).
    pub fn model_keys(&self) -> BTreeSet<&str> {
        self.scorers
            .iter()
            .filter_map(|s| s.scorer.model_key())
            .collect()
    }

    /// Whether a model-graded scorer's listed requests (`Judged::requests`) are every request
    /// the task sends, and there is one: no other scorer asks a model (`similarity` by
    /// embedding sends its own requests).
    pub fn lists_judge_requests(&self) -> bool {
        let judged = |s: &ScorerSpec| s.scorer.judge().is_some();
        self.scorers.iter().any(judged)
            && self
                .scorers
                .iter()
                .all(|s| judged(s) || s.scorer.model_key().is_none())
    }

    /// Every user function the task names, in task order, each with what names it (for
    /// messages): a `custom` scorer's `function`, a `python` metric's three.
    pub fn functions(&self) -> Vec<(String, &FunctionRef)> {
        let mut out = Vec::new();
        for s in &self.scorers {
            if let Some(f) = s.scorer.function() {
                out.push((format!("scorer `{}`", s.key), f));
            }
            for m in &s.metrics {
                if let Some(p) = &m.python {
                    let what = format!("metric `{}` of scorer `{}`", m.name, s.key);
                    out.push((what.clone(), &p.function));
                    out.push((what.clone(), &p.merge));
                    out.push((what, &p.finish));
                }
            }
        }
        out
    }
}
