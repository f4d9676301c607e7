//! `KEY=VALUE` arguments: `--set`, `--label` and `--storage-option` share one parser, each
//! with its own error message.

use evalscore_engine::Error;

/// `s` split at its first `=`: the key without surrounding whitespace (not empty) and the
/// value as given (it may be empty and may hold `=`).
pub fn key_value(s: &str) -> Option<(String, String)> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Some((k.trim().to_owned(), v.to_owned())),
        _ => None,
    }
}

/// clap's value parser for `--set NAME=VALUE`.
pub fn parse_set(s: &str) -> Result<(String, String), String> {
    key_value(s).ok_or_else(|| format!("`{s}` is not NAME=VALUE"))
}

/// clap's value parser for `--label KEY=VALUE`.
pub fn parse_label(s: &str) -> Result<(String, String), String> {
    key_value(s).ok_or_else(|| format!("`{s}` is not KEY=VALUE"))
}

/// `--storage-option` pairs. They are parsed after clap, whose errors repeat the value, and
/// the message names the option by its position only: a value may hold a secret.
pub fn storage_options(given: &[String]) -> Result<Vec<(String, String)>, Error> {
    given
        .iter()
        .enumerate()
        .map(|(i, s)| {
            key_value(s).ok_or_else(|| {
                Error::new(format!(
                    "`--storage-option` number {} is not KEY=VALUE",
                    i + 1
                ))
                .with_hint(
                    "write `--storage-option aws_region=eu-west-1`; see docs/storage.md for the keys",
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn the_key_is_trimmed_and_the_value_kept_as_given() {
        assert_eq!(key_value(" k =v=w"), Some(pair("k", "v=w")));
        assert_eq!(key_value("k= v "), Some(pair("k", " v ")));
        assert_eq!(key_value("k="), Some(pair("k", "")));
        assert_eq!(key_value("=v"), None);
        assert_eq!(key_value("  =v"), None);
        assert_eq!(key_value("kv"), None);
    }

    #[test]
    fn each_option_keeps_its_message() {
        assert_eq!(parse_set("n=1").unwrap(), pair("n", "1"));
        assert_eq!(parse_set("n").unwrap_err(), "`n` is not NAME=VALUE");
        assert_eq!(parse_label("k=v=w").unwrap(), pair("k", "v=w"));
        assert_eq!(parse_label("=v").unwrap_err(), "`=v` is not KEY=VALUE");
        assert_eq!(parse_label("kv").unwrap_err(), "`kv` is not KEY=VALUE");
    }

    #[test]
    fn a_bad_storage_option_is_named_by_position_without_its_value() {
        let given = vec![
            "aws_region=eu-west-1".to_owned(),
            "aws_secret_access_key".to_owned(),
        ];
        let e = storage_options(&given[..1]).unwrap();
        assert_eq!(e, vec![pair("aws_region", "eu-west-1")]);
        let e = storage_options(&given).unwrap_err();
        assert_eq!(e.message, "`--storage-option` number 2 is not KEY=VALUE");
        assert_eq!(
            e.hint.as_deref(),
            Some("write `--storage-option aws_region=eu-west-1`; see docs/storage.md for the keys")
        );
    }
}
