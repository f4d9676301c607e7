//! [`StorageError`]: what failed, on which URL, and why; built from a store's error by
//! [`StorageError::from_store`], which blanks credentials out of its text.

use crate::redact::redact;

/// An object storage failure: what was being done, on which URL, and why. The store's own
/// error is kept only as text, with any credential in it blanked out: its `Display` (a
/// request's URL, a response body) may hold secrets, so it is not kept as a source.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{url}: {message}")]
pub struct StorageError {
    /// The URL as the user gave it (or the object's URL under a prefix).
    pub url: String,
    pub message: String,
    pub hint: Option<String>,
    /// The object was not there (or the bucket/container does not exist).
    pub not_found: bool,
    /// A create-only write found the object already there.
    pub already_exists: bool,
    /// A write failed and whether the object was written anyway could not be checked.
    pub unknown_outcome: bool,
}

impl StorageError {
    pub fn new(url: &str, message: impl Into<String>) -> StorageError {
        StorageError {
            // Whatever path built it, the error shows the URL without credentials.
            url: crate::without_credentials(url),
            message: message.into(),
            hint: None,
            not_found: false,
            already_exists: false,
            unknown_outcome: false,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> StorageError {
        self.hint = Some(hint.into());
        self
    }

    /// `what` failed on `url` with the store's error `e`; any of `secrets` in the store's
    /// text is blanked out.
    pub(crate) fn from_store(
        url: &str,
        what: &str,
        e: object_store::Error,
        secrets: &[String],
    ) -> StorageError {
        use object_store::Error as E;
        let text = redact(&chain(&e), secrets);
        let has = |marks: &[&str]| marks.iter().any(|m| text.contains(m));
        let not_found = || {
            let mut err = StorageError::new(url, format!("cannot {what}: not found"))
                .with_hint("check the bucket (or container) and the key");
            err.not_found = true;
            err
        };
        match &e {
            E::NotFound { .. } => not_found(),
            E::AlreadyExists { .. } | E::Precondition { .. } | E::NotModified { .. } => {
                let mut err = StorageError::new(url, format!("cannot {what}: it already exists"));
                err.already_exists = true;
                err
            }
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
                StorageError::new(url, format!("cannot {what}: access denied: {text}"))
                    .with_hint(CREDENTIALS_HINT)
            }
            // Listings report a missing bucket or container only in a generic error.
            _ if has(&["<Code>NoSuchBucket</Code>", "<Code>ContainerNotFound</Code>"]) => {
                not_found()
            }
            // S3 reports a wrong key or signature as 403 inside a generic error.
            _ if has(&[
                "status code: 403",
                "AccessDenied",
                "SignatureDoesNotMatch",
                "InvalidAccessKeyId",
                "AuthenticationFailed",
                "status code: 401",
            ]) =>
            {
                StorageError::new(url, format!("cannot {what}: {text}")).with_hint(CREDENTIALS_HINT)
            }
            _ => StorageError::new(url, format!("cannot {what}: {text}")).with_hint(
                "check the URL, the endpoint and the network; requests were retried with backoff before giving up",
            ),
        }
    }
}

/// Of [`ErrorKind::Other`](evalscore_error::ErrorKind::Other): whether the object was an
/// input or an output is the caller's to say (the reader and the engine wrap it).
impl evalscore_error::Diagnostic for StorageError {
    fn kind(&self) -> evalscore_error::ErrorKind {
        evalscore_error::ErrorKind::Other
    }

    fn hint(&self) -> Option<String> {
        self.hint.clone()
    }
}

const CREDENTIALS_HINT: &str = "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_SERVICE_ACCOUNT, or `--storage-option`)";

pub(crate) use evalscore_error::chain_text as chain;
