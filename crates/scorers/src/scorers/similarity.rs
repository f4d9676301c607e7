//! `similarity`: a graded score by a lexical `method`, or by the
//! cosine similarity of embeddings from an endpoint of `models:` (`method: embedding`).

use crate::graded::{rouge_variant, GradedScorer, Measure};
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use crate::scorers::lexical::{EXPECTED_OPTION, THRESHOLD_OPTION};
use evalscore_kernels::Lexical;
use evalscore_task::{did_you_mean, TaskError};

/// The kind `similarity`.
#[derive(Debug)]
pub struct Similarity;

/// The similarity methods.
const METHODS: &[&str] = &["f1", "rouge", "chrf", "levenshtein", "embedding"];

impl Kind for Similarity {
    const ABOUT: About = About::new(
        &["similarity"],
        "The score of the lexical scorer named by `method`, or with `method: embedding` the cosine similarity of the value's and the references' embeddings (the best one counts).",
        &[
            EXPECTED_OPTION,
            THRESHOLD_OPTION,
            OptionDoc::required("method", "`f1`, `rouge`, `chrf`, `levenshtein` or `embedding`"),
            OptionDoc::optional("variant", "with `method: rouge` (required there): `rouge1`, `rouge2` or `rougeL`"),
            OptionDoc::optional("model_key", "with `method: embedding` (required there): the embedding endpoint's key in `models:`"),
            VALUE_OPTION,
        ],
        r#"{type: similarity, method: embedding, model_key: embedder, expected: "{{ sample.answer }}", threshold: 0.8}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let node = cx.get("method").ok_or_else(|| {
            cx.err("scorer `similarity` needs `method`")
                .with_hint(format!("methods: {}", METHODS.join(", ")))
        })?;
        let method = node.scalar_string("method")?;
        let model_key = cx.get("model_key");
        if method != "embedding" {
            if let Some(k) = model_key {
                return Err(k
                    .err(format!("`model_key` is for `method: embedding`, and this similarity uses `method: {method}`"))
                    .with_hint("remove `model_key`, or use `method: embedding`"));
            }
        }
        if method != "rouge" {
            if let Some(v) = cx.get("variant") {
                return Err(v
                    .err(format!("`variant` is for `method: rouge`, and this similarity uses `method: {method}`"))
                    .with_hint("remove `variant`, or use `method: rouge`"));
            }
        }
        let measure = match method.as_str() {
            "f1" => Measure::Lexical(Lexical::F1),
            "chrf" => Measure::Lexical(Lexical::Chrf),
            "levenshtein" => Measure::Lexical(Lexical::Levenshtein),
            "rouge" => Measure::Lexical(Lexical::Rouge(rouge_variant(cx)?)),
            "embedding" => {
                let k = model_key.ok_or_else(|| {
                    cx.err("`similarity` with `method: embedding` needs `model_key`")
                        .with_hint("name an embedding endpoint of the task's `models:` map, e.g. `model_key: embedder`")
                })?;
                Measure::Embedding {
                    model_key: k.scalar_string("model_key")?,
                    location: k.location,
                }
            }
            other => {
                let h = match did_you_mean(other, METHODS) {
                    Some(s) => format!("did you mean `{s}`? methods: {}", METHODS.join(", ")),
                    None => format!("methods: {}", METHODS.join(", ")),
                };
                return Err(node
                    .err(format!("unknown similarity method `{other}`"))
                    .with_hint(h));
            }
        };
        GradedScorer::parse(cx, measure)
    }
}

#[cfg(test)]
mod tests {
    use crate::bound::Bound;
    use crate::graded::{GradedScorer, Measure};
    use crate::Task;
    use evalscore_kernels::{Lexical, RougeVariant};

    #[test]
    fn methods_give_their_measures() {
        let text = concat!(
            "models:\n  emb:\n    base_url: http://127.0.0.1:8080/v1\n    model: m\n",
            "definition:\n  scorers:\n",
            "    - {type: rouge, variant: rouge2, expected: x, threshold: 0.25}\n",
            "    - {type: similarity, method: embedding, model_key: emb, expected: x, threshold: 1}\n",
            "    - {type: similarity, method: levenshtein, expected: x, threshold: 0}\n",
        );
        let task = Task::from_yaml(text, &[]).unwrap();
        let graded = |i: usize| {
            let any: &dyn std::any::Any = task.scorers[i].scorer.as_ref();
            let g = any.downcast_ref::<Bound<GradedScorer>>().unwrap();
            (g.check.measure.clone(), g.check.threshold)
        };
        assert_eq!(
            graded(0),
            (Measure::Lexical(Lexical::Rouge(RougeVariant::Rouge2)), 0.25)
        );
        let (Measure::Embedding { model_key, .. }, threshold) = graded(1) else {
            panic!("not by embedding");
        };
        assert_eq!((model_key.as_str(), threshold), ("emb", 1.0));
        assert_eq!(graded(2).0, Measure::Lexical(Lexical::Levenshtein));
        assert_eq!(task.scorers[1].scorer.model_key(), Some("emb"));
    }
}
