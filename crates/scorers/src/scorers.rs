//! The built-in scorer kinds, one file each (a kind may parse several type names), or one
//! file for a family of kinds that differ only in their kernel and doc (`lexical`, `json`);
//! the registry ([`crate::registry`]) lists them.

pub mod check_injection;
pub mod custom;
pub mod exact;
pub mod includes_all;
pub mod json;
pub mod lexical;
pub mod match_family;
pub mod model_as_a_judge_classifier;
pub mod model_as_a_judge_pairwise;
pub mod model_as_a_judge_scorer;
pub mod model_graded_closed_qa;
pub mod model_graded_custom;
pub mod model_graded_fact;
pub mod model_graded_security;
pub mod not_regex;
pub mod numeric_match;
pub mod pass_fail;
pub mod regex;
pub mod rouge;
pub mod similarity;
pub mod string_equals;
pub mod string_equals_mcqa;
pub mod value;
