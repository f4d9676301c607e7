//! The scorer reference (docs/scorer-reference.md), rendered from the registry: every kind's
//! type names, description, options and fields, and a minimal example. A test compares the
//! committed file with [`render`].

use crate::registry::SCORER_TYPES;
use crate::scorer::ScorerType;
use crate::Task;
use std::fmt::Write;

/// A task holding the one scorer `example` (a YAML mapping), with the models that the
/// examples of model-graded kinds name (`judge`, `embedder`).
pub fn example_task(example: &str) -> String {
    format!(
        "models:\n  judge: {{base_url: \"http://127.0.0.1:8080/v1\", model: judge-model}}\n  embedder: {{base_url: \"http://127.0.0.1:8080/v1\", model: embedding-model}}\ndefinition:\n  scorers:\n    - {example}\n"
    )
}

/// The fields of `kind`'s example, as `name` (kind, written or metrics only).
fn fields(kind: &dyn ScorerType) -> String {
    match Task::from_yaml(&example_task(kind.example()), &[]) {
        Ok(task) => task.scorers[0]
            .scorer
            .fields()
            .iter()
            .map(|f| {
                let kind = match f.kind {
                    evalscore_task::FieldKind::Number => "number",
                    evalscore_task::FieldKind::Text => "text",
                };
                let written = if f.written { "written" } else { "metrics only" };
                format!("`{}` ({kind}, {written})", f.name)
            })
            .collect::<Vec<_>>()
            .join(", "),
        Err(e) => format!("(the example does not load: {e})"),
    }
}

fn names(kind: &dyn ScorerType) -> String {
    kind.names()
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// docs/scorer-reference.md.
pub fn render() -> String {
    let mut out = String::new();
    out.push_str("# Scorer reference\n\n");
    out.push_str("<!-- Generated from the scorer registry (crates/scorers/src/registry.rs) by `evalscore_scorers::reference::render`: do not edit by hand. Regenerate with `EVALSCORE_UPDATE_REFERENCE=1 cargo test -p evalscore-scorers --test it reference`. -->\n\n");
    out.push_str("Every scorer type, its options and its fields. Every scorer also takes the common keys `type`, `key`, `display_name`, `purpose`, `metrics`, `write_scores` and `write_fields`; those that score a text (all but the model-graded ones) also take `normalize:` and `extract:`. [Scorers](scorers.md) describes what each one computes, its null rule and its edge cases; [Model-graded scorers](judges.md) the judges.\n\n");
    out.push_str("Fields marked *written* are written to `scores.parquet` as `<key>__<field>`; the others are the compared texts, for metrics only.\n\n");
    out.push_str("| type | options |\n| --- | --- |\n");
    for kind in SCORER_TYPES {
        let options: Vec<String> = kind.options().iter().map(|o| o.listed()).collect();
        let _ = writeln!(out, "| {} | {} |", names(*kind), options.join(", "));
    }
    for kind in SCORER_TYPES {
        let _ = write!(out, "\n## {}\n\n{}\n\n", names(*kind), kind.doc());
        out.push_str("| option | required | meaning |\n| --- | --- | --- |\n");
        for o in kind.options() {
            let required = if o.required { "yes" } else { "" };
            let _ = writeln!(out, "| `{}` | {required} | {} |", o.key, o.doc);
        }
        let _ = write!(
            out,
            "\nFields: {}.\n\n```yaml\n- {}\n```\n",
            fields(*kind),
            kind.example()
        );
    }
    out
}
