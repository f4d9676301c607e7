//! Keeping credentials out of messages: the values to hide ([`secrets`]) and the one function
//! that hides them ([`redact`]), which a store error's text goes through before it is shown
//! (`StorageError::from_store`).

/// The values that must never appear in a message: those of the environment's storage
/// variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`) and of the `options` whose names say they hold
/// a secret (a key, secret, token or password). Short values (`true`, a region) are not
/// secrets and would blank out ordinary words.
pub(crate) fn secrets(options: &[(String, String)]) -> Vec<String> {
    let secret_name = |k: &str| {
        let k = k.to_ascii_lowercase();
        ["key", "secret", "token", "password", "sas", "credential"]
            .iter()
            .any(|m| k.contains(m))
    };
    let from_env = std::env::vars_os().filter_map(|(k, v)| {
        let k = k.to_str()?;
        let cloud = ["AWS_", "AZURE_", "GOOGLE_"]
            .iter()
            .any(|p| k.to_ascii_uppercase().starts_with(p));
        (cloud && secret_name(k)).then(|| v.to_str().map(str::to_owned))?
    });
    let from_options = options
        .iter()
        .filter(|(k, _)| secret_name(k))
        .map(|(_, v)| v.clone());
    let mut all: Vec<String> = from_env
        .chain(from_options)
        .filter(|v| v.len() >= 8)
        .collect();
    // Longest first, so a secret holding another is blanked whole.
    all.sort_by_key(|v| std::cmp::Reverse(v.len()));
    all.dedup();
    all
}

/// `text` with every one of `secrets` replaced by `<redacted>`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), "<redacted>");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_options_are_blanked_out_of_messages() {
        let options: Vec<(String, String)> = [
            ("aws_secret_access_key", "s3cr3t-value-1"),
            ("AZURE_STORAGE_SAS_KEY", "sv=2024&sig=abcdefgh"),
            ("aws_region", "eu-west-1-long-enough"),
            ("aws_session_token", "short"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let secrets = secrets(&options);
        assert!(secrets.contains(&"s3cr3t-value-1".to_owned()));
        assert!(secrets.contains(&"sv=2024&sig=abcdefgh".to_owned()));
        // Not a secret by its name; too short to blank out safely.
        assert!(!secrets.contains(&"eu-west-1-long-enough".to_owned()));
        assert!(!secrets.contains(&"short".to_owned()));
        assert_eq!(
            redact(
                "GET /b?sv=2024&sig=abcdefgh failed; key s3cr3t-value-1, region eu-west-1-long-enough",
                &secrets
            ),
            "GET /b?<redacted> failed; key <redacted>, region eu-west-1-long-enough"
        );
    }
}
