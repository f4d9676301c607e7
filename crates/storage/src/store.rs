//! Setting up a store for a URL: the store's kind from the URL, its settings and credentials
//! from the environment and `--storage-option`, and the retry policy. [`StorePath`] is the
//! result, on which reads (module `read`), listings (`list`) and writes (`write`) run.

use crate::error::chain;
use crate::location::StoreUrl;
use crate::redact::{redact, secrets, setup_secrets};
use crate::StorageError;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::list::PaginatedListStore;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreScheme, RetryConfig};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A place in object storage: a store and a path in it (an object, or a prefix).
#[derive(Clone)]
pub struct StorePath {
    pub(crate) store: Arc<dyn ObjectStore>,
    /// The same store's paginated listing (S3, Google Cloud Storage, Azure; not HTTP), with
    /// which a listing steps over a key no object path can hold (module `list`).
    pub(crate) pages: Option<Arc<dyn PaginatedListStore>>,
    pub(crate) path: ObjectPath,
    /// The URL as given, for messages.
    pub(crate) url: String,
    /// Blanked out of the store's messages (see [`secrets`]).
    pub(crate) secrets: Arc<Vec<String>>,
    /// A local folder ([`StorePath::local_folder`]), whose ETags are compared as given,
    /// unquoted.
    pub(crate) local: bool,
}

impl fmt::Debug for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only the URL: the store's builder holds credentials.
        f.debug_struct("StorePath").field("url", &self.url).finish()
    }
}

impl StoreUrl {
    /// The store and path of this URL, configured from the environment and then `options`
    /// (`--storage-option KEY=VALUE`; the keys are `object_store`'s, e.g. `aws_endpoint`,
    /// `aws_allow_http`, `azure_storage_account_key`, `google_service_account`, `timeout`).
    pub fn connect(&self, options: &[(String, String)]) -> Result<StorePath, StorageError> {
        let parsed = self.checked()?;
        let url = self.as_str();
        let secrets = secrets(options);
        let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| {
            StorageError::new(url, format!("not a storage URL: {}", redact(&e.to_string(), &secrets)))
                .with_hint("use s3://BUCKET/KEY, gs://BUCKET/KEY, az://CONTAINER/KEY, abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/KEY or https://HOST/PATH")
        })?;
        type Built = (Arc<dyn ObjectStore>, Option<Arc<dyn PaginatedListStore>>);
        // Both views of one store.
        fn paged<S: ObjectStore + PaginatedListStore>(s: S) -> Built {
            let s = Arc::new(s);
            (Arc::clone(&s) as _, Some(s as _))
        }
        let built: Result<Built, object_store::Error> = match scheme {
            ObjectStoreScheme::AmazonS3 => {
                let mut b = AmazonS3Builder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in config_keys::<AmazonS3ConfigKey>(url, options, "S3")? {
                    b = b.with_config(k, v);
                }
                b.build().map(paged)
            }
            ObjectStoreScheme::GoogleCloudStorage => {
                let mut b = GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in config_keys::<GoogleConfigKey>(url, options, "Google Cloud Storage")?
                {
                    b = b.with_config(k, v);
                }
                b.build().map(paged)
            }
            ObjectStoreScheme::MicrosoftAzure => {
                let mut b = MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in config_keys::<AzureConfigKey>(url, options, "Azure Blob Storage")? {
                    b = b.with_config(k, v);
                }
                b.build().map(paged)
            }
            ObjectStoreScheme::Http => {
                let root = format!(
                    "{}://{}",
                    parsed.scheme(),
                    &parsed[url::Position::BeforeHost..url::Position::AfterPort]
                );
                let mut b = HttpBuilder::new().with_url(root).with_retry(retry());
                if parsed.scheme() == "http" {
                    b = b.with_config(ClientConfigKey::AllowHttp, "true");
                }
                for (k, v) in config_keys::<ClientConfigKey>(url, options, "HTTP")? {
                    b = b.with_config(k, v);
                }
                b.build().map(|s| (Arc::new(s) as _, None))
            }
            _ => {
                return Err(StorageError::new(url, "not a storage URL")
                    .with_hint("use s3://, gs://, az://, abfss:// or https:// URLs"))
            }
        };
        // A setting's value may be the error's subject (a service account's JSON given where
        // a path was expected is shown as the path it could not open), so every option's
        // value is blanked out of it, besides the secrets a request's error hides.
        let (store, pages) = built.map_err(|e| {
            let hidden = setup_secrets(options);
            StorageError::new(
                url,
                format!("cannot set up the store: {}", redact(&chain(&e), &hidden)),
            )
                .with_hint("check the URL and the storage settings (environment variables and `--storage-option`)")
        })?;
        let path = ObjectPath::from_url_path(path)
            .map_err(|e| StorageError::new(url, format!("not a valid object path: {e}")))?;
        Ok(StorePath {
            store,
            pages,
            path,
            url: url.to_owned(),
            secrets: Arc::new(secrets),
            local: false,
        })
    }
}

impl StorePath {
    /// A local folder as a store (`object_store`'s local file system), for what is shared
    /// through a folder as through a bucket: writes are create-only there too (a hard link,
    /// refused when the name exists), and a write that dies leaves only a staging file whose
    /// name (`NAME#N`) no listing by suffix returns. The folder is created if missing.
    pub fn local_folder(dir: &std::path::Path) -> Result<StorePath, StorageError> {
        let shown = format!("{}/", dir.display().to_string().trim_end_matches('/'));
        std::fs::create_dir_all(dir)
            .map_err(|e| StorageError::new(&shown, format!("cannot create the folder: {e}")))?;
        let fs = object_store::local::LocalFileSystem::new_with_prefix(dir)
            .map_err(|e| StorageError::new(&shown, format!("cannot open the folder: {e}")))?;
        Ok(StorePath {
            store: Arc::new(fs),
            pages: None,
            path: ObjectPath::default(),
            url: shown,
            secrets: Arc::new(Vec::new()),
            local: true,
        })
    }
}

impl StorePath {
    /// `what` failed here with the store's error `e`.
    pub(crate) fn store_error(&self, what: &str, e: object_store::Error) -> StorageError {
        StorageError::from_store(&self.url, what, e, &self.secrets)
    }

    /// The store itself, rooted at the bucket (or container): for a library that drives
    /// `object_store` on its own (Delta tables, `evalscore-delta`).
    pub fn object_store(&self) -> Arc<dyn ObjectStore> {
        Arc::clone(&self.store)
    }

    /// The path in [`StorePath::object_store`].
    pub fn object_path(&self) -> &ObjectPath {
        &self.path
    }

    /// An error of this place: `what` failed with the store's error `e`, its text redacted
    /// as every storage error's is.
    pub fn error(&self, what: &str, e: &dyn std::error::Error) -> StorageError {
        StorageError::new(
            &self.url,
            format!("cannot {what}: {}", redact(&chain(e), &self.secrets)),
        )
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the URL names a prefix (ends in `/`) rather than one object.
    pub fn is_prefix(&self) -> bool {
        self.url.ends_with('/')
    }

    /// The location `name` under this prefix.
    pub fn child(&self, name: &str) -> StorePath {
        let url = if self.url.ends_with('/') {
            format!("{}{name}", self.url)
        } else {
            format!("{}/{name}", self.url)
        };
        StorePath {
            store: Arc::clone(&self.store),
            pages: self.pages.clone(),
            path: self.path.clone().join(name),
            url,
            secrets: Arc::clone(&self.secrets),
            local: self.local,
        }
    }
}

/// `options` with their keys parsed as the store's configuration keys `K` (ASCII case
/// ignored); an unknown key is an error naming it (never its value) and the store (`what`).
fn config_keys<'a, K: std::str::FromStr>(
    url: &str,
    options: &'a [(String, String)],
    what: &str,
) -> Result<Vec<(K, &'a str)>, StorageError> {
    options
        .iter()
        .map(|(k, v)| {
            let key = k.to_ascii_lowercase().parse().map_err(|_| {
                StorageError::new(url, format!("unknown storage option `{k}` for {what}"))
                    .with_hint("the keys are object_store's configuration keys (docs/storage.md lists the common ones)")
            })?;
            Ok((key, v.as_str()))
        })
        .collect()
}

/// Retries: a few, quickly. A dropped connection or a 5xx is retried with exponential
/// backoff (and jitter) up to 5 times, for at most a minute, then reported.
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 5,
        retry_timeout: Duration::from_secs(60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect(url: &str, options: &[(String, String)]) -> Result<StorePath, StorageError> {
        StoreUrl::parse(url).unwrap().connect(options)
    }

    #[test]
    fn an_unknown_option_is_named() {
        let e = connect(
            "s3://bucket/key",
            &[("aws_no_such_thing".into(), "1".into())],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "s3://bucket/key: unknown storage option `aws_no_such_thing` for S3"
        );
    }

    #[test]
    fn urls_with_a_query_or_credentials_are_refused_without_them() {
        for (url, shown) in [
            (
                "https://h.example/x.parquet?X-Amz-Signature=abc",
                "https://h.example/x.parquet",
            ),
            (
                "https://user:pass@h.example/x.parquet",
                "https://h.example/x.parquet",
            ),
            ("az://c/x.parquet?sig=abc", "az://c/x.parquet"),
            (
                "abfss://c:abc@a.dfs.core.windows.net/x.parquet",
                "abfss://c@a.dfs.core.windows.net/x.parquet",
            ),
        ] {
            let e = connect(url, &[]).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{shown}: a URL with a query string or user credentials is not supported")
            );
            assert!(!format!("{e:?}").contains("abc") && !format!("{e:?}").contains("pass"));
        }
    }

    #[test]
    fn an_abfss_container_is_not_taken_for_credentials() {
        let l = connect(
            "abfss://evals@acct.dfs.core.windows.net/runs/x.parquet",
            &[
                ("azure_storage_account_name".into(), "acct".into()),
                ("azure_storage_account_key".into(), "a2V5".into()),
            ],
        )
        .unwrap();
        assert_eq!(l.path.as_ref(), "runs/x.parquet");
    }

    #[test]
    fn children_and_prefixes() {
        let l = connect(
            "s3://bucket/runs/run_date=d1/",
            &[("aws_region".into(), "us-east-1".into())],
        )
        .unwrap();
        assert!(l.is_prefix());
        let c = l.child("run.json");
        assert_eq!(c.url(), "s3://bucket/runs/run_date=d1/run.json");
        assert_eq!(c.path.as_ref(), "runs/run_date=d1/run.json");
    }
}
