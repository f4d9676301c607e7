//! Where a user's path or URL points, decided once where the string enters (an `--input`, an
//! `--out`): [`Location::Local`] or [`Location::Remote`] with a [`StoreUrl`]. Deciding is
//! free of I/O and never fails; the URL is checked, and its store set up, by
//! [`StoreUrl::connect`].

use crate::StorageError;
use std::fmt;
use std::path::{Path, PathBuf};

/// The URL schemes evalscore reads and writes through object storage.
pub const SCHEMES: [&str; 9] = [
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "http", "https",
];

/// A path or URL as the user gave it, told apart once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local file or folder.
    Local(PathBuf),
    /// An object or a prefix in object storage.
    Remote(StoreUrl),
}

impl Location {
    /// `s` as a location: a URL with one of [`SCHEMES`] (`scheme://...`, any case) is remote,
    /// anything else a local path.
    pub fn parse(s: &str) -> Location {
        match StoreUrl::parse(s) {
            Some(url) => Location::Remote(url),
            None => Location::Local(PathBuf::from(s)),
        }
    }

    /// [`Location::parse`] of a path argument; one that is not UTF-8 is local.
    pub fn from_path(p: &Path) -> Location {
        match p.to_str().and_then(StoreUrl::parse) {
            Some(url) => Location::Remote(url),
            None => Location::Local(p.to_path_buf()),
        }
    }
}

/// An object storage URL (`s3://`, `gs://`, `az://`, `abfss://`, `https://`, ...), kept as
/// the user gave it: messages repeat it word for word.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    text: String,
}

impl StoreUrl {
    /// `s` when it is a URL this crate handles (`scheme://...` with a known scheme), rather
    /// than a local path.
    pub fn parse(s: &str) -> Option<StoreUrl> {
        s.split_once("://")
            .is_some_and(|(scheme, _)| SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
            .then(|| StoreUrl { text: s.to_owned() })
    }

    /// The URL as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether this is an `http://` or `https://` URL (a web server: read-only).
    pub fn is_web(&self) -> bool {
        let scheme = self.text.split_once("://").map_or("", |(s, _)| s);
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    }

    /// Whether the URL names a prefix (ends in `/`) rather than one object.
    pub fn is_prefix(&self) -> bool {
        self.text.ends_with('/')
    }

    /// The URL as a prefix: ending in `/`.
    pub fn as_prefix(&self) -> StoreUrl {
        if self.is_prefix() {
            self.clone()
        } else {
            StoreUrl {
                text: format!("{}/", self.text),
            }
        }
    }

    /// The URL parsed and checked: a query (a presigned URL's signature, a SAS token), a
    /// password, or a web URL's `user@` would be dropped by the store, and they are secrets,
    /// so such a URL is refused, and they are not repeated. (`abfss://CONTAINER@ACCOUNT...`
    /// names its container there.)
    pub(crate) fn checked(&self) -> Result<url::Url, StorageError> {
        let url = self.as_str();
        let parsed = url::Url::parse(url)
            .map_err(|e| StorageError::new(url, format!("not a valid URL: {e}")))?;
        let web = matches!(parsed.scheme(), "http" | "https");
        if parsed.query().is_some()
            || parsed.password().is_some()
            || (web && !parsed.username().is_empty())
        {
            return Err(StorageError::new(
                without_secrets(&parsed).as_str(),
                "a URL with a query string or user credentials is not supported",
            )
            .with_hint(
                "give credentials through the environment or `--storage-option`, not in the URL",
            ));
        }
        Ok(parsed)
    }
}

/// `url` without its query, its password, and a web URL's user name.
fn without_secrets(url: &url::Url) -> url::Url {
    let mut shown = url.clone();
    shown.set_query(None);
    let _ = shown.set_password(None);
    if matches!(url.scheme(), "http" | "https") {
        let _ = shown.set_username("");
    }
    shown
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the text as given: it may hold a signature or a password until `checked`
        // refuses it.
        let shown = url::Url::parse(&self.text)
            .map(|u| without_secrets(&u).to_string())
            .unwrap_or_else(|_| "<not a valid URL>".to_owned());
        f.debug_tuple("StoreUrl").field(&shown).finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for u in [
            "s3://b/k.parquet",
            "S3://b/k",
            "gs://b/k",
            "az://c/k",
            "abfss://c@a.dfs.core.windows.net/k",
            "https://h/x.parquet",
            "http://127.0.0.1:9/x",
        ] {
            assert_eq!(
                Location::parse(u),
                Location::Remote(StoreUrl { text: u.to_owned() }),
                "{u}"
            );
            assert_eq!(StoreUrl::parse(u).unwrap().as_str(), u);
        }
        for p in ["data/x.parquet", "/tmp/s3:/x", "file.parquet", "ftp://h/x"] {
            assert_eq!(Location::parse(p), Location::Local(PathBuf::from(p)), "{p}");
            assert_eq!(
                Location::from_path(Path::new(p)),
                Location::Local(PathBuf::from(p))
            );
        }
    }

    #[test]
    fn web_urls_and_prefixes() {
        let web: Vec<bool> = ["HTTPS://h/x", "http://h/x", "s3://b/k", "abfss://c@a/k"]
            .iter()
            .map(|u| StoreUrl::parse(u).unwrap().is_web())
            .collect();
        assert_eq!(web, [true, true, false, false]);
        let key = StoreUrl::parse("s3://b/runs").unwrap();
        assert!(!key.is_prefix());
        assert_eq!(key.as_prefix().as_str(), "s3://b/runs/");
        assert_eq!(key.as_prefix().as_prefix().as_str(), "s3://b/runs/");
        assert!(key.as_prefix().is_prefix());
    }

    #[test]
    fn debug_output_leaves_out_query_and_password() {
        let u = StoreUrl::parse("https://user:pass@h.example/x.parquet?sig=abc").unwrap();
        assert_eq!(
            format!("{u:?}"),
            "StoreUrl(\"https://h.example/x.parquet\")"
        );
        assert_eq!(
            u.to_string(),
            "https://user:pass@h.example/x.parquet?sig=abc"
        );
    }
}
