//! Keeping credentials out of messages: the values to hide ([`secrets`]) and the one function
//! that hides them ([`redact`]), which a store error's text goes through before it is shown
//! (`StorageError::from_store`).

/// Whether a setting (an environment variable or a `--storage-option`, or a field of a JSON
/// credentials file given as a value) holds a secret, by its name. A service account's
/// setting counts: it names a file, but the file's JSON given in its place (a common
/// mistake) holds the private key.
fn secret_name(k: &str) -> bool {
    let k = k.to_ascii_lowercase();
    [
        "key",
        "secret",
        "token",
        "password",
        "sas",
        "credential",
        "service_account",
    ]
    .iter()
    .any(|m| k.contains(m))
}

/// The values that must never appear in a message: those of the environment's storage
/// variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`, `SERVICE_ACCOUNT`) and of the `options` whose
/// names say they hold a secret ([`secret_name`]); of a value that is a JSON object (a
/// service account's key file), also its secret fields (`private_key`, ...); and each as a
/// message may escape it (`\n`, `\"`). Short values (`true`, a region) are not secrets and
/// would blank out ordinary words.
pub(crate) fn secrets(options: &[(String, String)]) -> Vec<String> {
    let from_env = std::env::vars_os().filter_map(|(k, v)| {
        let k = k.to_str()?;
        let upper = k.to_ascii_uppercase();
        let cloud = ["AWS_", "AZURE_", "GOOGLE_"]
            .iter()
            .any(|p| upper.starts_with(p))
            || upper == "SERVICE_ACCOUNT";
        (cloud && secret_name(k)).then(|| v.to_str().map(str::to_owned))?
    });
    let from_options = options
        .iter()
        .filter(|(k, _)| secret_name(k))
        .map(|(_, v)| v.clone());
    let mut all: Vec<String> = Vec::new();
    for v in from_env.chain(from_options) {
        if let Ok(serde_json::Value::Object(fields)) = serde_json::from_str(v.trim()) {
            all.extend(
                fields
                    .iter()
                    .filter(|(k, _)| secret_name(k))
                    .filter_map(|(_, f)| f.as_str().map(str::to_owned)),
            );
        }
        all.push(v);
    }
    finish(all, 8)
}

/// What a store's set-up error must not show: [`secrets`], and every other option's value
/// too (an endpoint may hold a password, and a set-up error quotes the values it refuses;
/// its message names the option instead). Only `true`/`false` and values under 4 bytes,
/// which would blank out ordinary words, are left.
pub(crate) fn setup_secrets(options: &[(String, String)]) -> Vec<String> {
    let mut all = secrets(options);
    all.extend(
        options
            .iter()
            .map(|(_, v)| v.clone())
            .filter(|v| !v.eq_ignore_ascii_case("true") && !v.eq_ignore_ascii_case("false")),
    );
    finish(all, 4)
}

/// `all` with each value also as a message may escape it (`\n`, `\"`), without those under
/// `min` bytes, longest first (so a secret holding another is blanked whole).
fn finish(mut all: Vec<String>, min: usize) -> Vec<String> {
    let escaped: Vec<String> = all
        .iter()
        .map(|v| format!("{v:?}").trim_matches('"').to_owned())
        .collect();
    all.extend(escaped);
    all.retain(|v| v.len() >= min);
    all.sort_by_key(|v| std::cmp::Reverse(v.len()));
    all.dedup();
    all
}

/// `text` with every one of `secrets` replaced by `<redacted>`, and every URL in it without
/// its password (`http://user:PASSWORD@host` as `http://user@host`, as an endpoint may be
/// given; the way every URL is shown).
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = without_url_passwords(text);
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), "<redacted>");
        }
    }
    text
}

/// `text` with each `scheme://user:password@host` in it as `scheme://user@host`: the user
/// info ends at the last `@` before the authority's end (`/`, `?`,
/// `#`, a blank or a quote).
fn without_url_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '`') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority
            .rfind('@')
            .and_then(|a| Some((a, authority[..a].find(':')?)))
        {
            Some((a, colon)) => {
                out.push_str(&authority[..colon]);
                out.push_str(&authority[a..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
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

    /// An endpoint's password is never shown, whatever the setting that gave it.
    #[test]
    fn url_passwords_are_blanked() {
        assert_eq!(
            redact(
                "Error performing GET http://admin:PassW0rdSecret@127.0.0.1:1/bkt?list-type=2 in 1s; see `https://u:p@h`",
                &[]
            ),
            "Error performing GET http://admin@127.0.0.1:1/bkt?list-type=2 in 1s; see `https://u@h`"
        );
        for kept in [
            "s3://bucket/key@v1/x.parquet",
            "http://user@host/x",
            "http://host:9000/a:b@c",
            "no url: a:b@c",
        ] {
            assert_eq!(redact(kept, &[]), kept);
        }
    }

    /// A service account's JSON given where its file's path was expected: the whole value,
    /// its private key on its own, and either as a message escapes it are blanked.
    #[test]
    fn a_service_account_json_value_is_blanked_whole_and_in_parts() {
        let json = "{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEv-not-a-real-key\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"x@p.iam.gserviceaccount.com\"}";
        let options = vec![("google_application_credentials".to_owned(), json.to_owned())];
        let secrets = secrets(&options);
        let key = "-----BEGIN PRIVATE KEY-----\nMIIEv-not-a-real-key\n-----END PRIVATE KEY-----\n";
        for text in [
            format!("Unable to open service account file from {json}: not found"),
            format!("bad key {key}"),
            format!("bad key {key:?}"),
            format!("{json:?}"),
        ] {
            let shown = redact(&text, &secrets);
            assert!(!shown.contains("MIIEv-not-a-real-key"), "{shown}");
        }
        assert_eq!(
            redact(&format!("from {json}: not found"), &secrets),
            "from <redacted>: not found"
        );
        // A path is not blanked unless it is a service account's setting.
        let options = vec![(
            "google_service_account".to_owned(),
            "/etc/sa.json".to_owned(),
        )];
        assert_eq!(secrets_of(&options), ["/etc/sa.json"]);
        let options = vec![("google_bucket".to_owned(), "/etc/sa.json".to_owned())];
        assert!(secrets_of(&options).is_empty());
    }

    /// `secrets` of `options` alone (the environment's left out).
    fn secrets_of(options: &[(String, String)]) -> Vec<String> {
        let env = secrets(&[]);
        secrets(options)
            .into_iter()
            .filter(|s| !env.contains(s))
            .collect()
    }
}
