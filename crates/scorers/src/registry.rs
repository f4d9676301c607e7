//! The registry: the one list of scorer kinds. The task parser finds a scorer's kind here by
//! its `type`, unknown-type errors and their "did you mean" list its names, and the scorer
//! reference (docs/scorer-reference.md) and the tests read it. Adding a kind is one file
//! under `scorers/` and one line here.

use crate::scorer::ScorerType;
use crate::scorers::*;

/// Every scorer kind, in the order "scorer types: ..." lists their names.
pub static SCORER_TYPES: &[&dyn ScorerType] = &[
    &string_equals::StringEquals,
    &string_equals_mcqa::StringEqualsMcqa,
    &match_family::MatchFamily,
    &json::VALID_JSON,
    &check_injection::CheckInjection,
    &custom::Custom,
    &exact::Exact,
    &regex::Regex,
    &pass_fail::PassFail,
    &numeric_match::NumericMatch,
    &includes_all::IncludesAll,
    &not_regex::NotRegex,
    &json::CONTAINS_JSON,
    &value::Value,
    &lexical::F1,
    &rouge::Rouge,
    &lexical::BLEU,
    &lexical::CHRF,
    &lexical::LEVENSHTEIN,
    &similarity::Similarity,
    &model_as_a_judge_classifier::ModelAsAJudgeClassifier,
    &model_as_a_judge_scorer::ModelAsAJudgeScorer,
    &model_as_a_judge_pairwise::ModelAsAJudgePairwise,
    &model_graded_fact::MODEL_GRADED_FACT,
    &model_graded_closed_qa::MODEL_GRADED_CLOSED_QA,
    &model_graded_security::MODEL_GRADED_SECURITY,
    &model_graded_custom::ModelGradedCustom,
];

/// The kind that parses scorer type `name`.
pub fn find(name: &str) -> Option<&'static dyn ScorerType> {
    SCORER_TYPES
        .iter()
        .copied()
        .find(|k| k.names().contains(&name))
}

/// Every scorer type name, in registry order.
pub fn type_names() -> Vec<&'static str> {
    SCORER_TYPES
        .iter()
        .flat_map(|k| k.names().iter().copied())
        .collect()
}
