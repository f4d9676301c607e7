//! Object storage for evalscore: `s3://`, `gs://`, `az://`/`abfss://` and `http(s)://`
//! locations, read and written through the `object_store` crate (the version parquet builds
//! on).
//!
//! [`Location::parse`] turns a URL and the `--storage-option KEY=VALUE` pairs into a store and
//! an object path. Credentials and settings come first from each cloud's usual environment
//! variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`, read by `object_store`'s `from_env`), then from
//! the options, which override them. The pipeline is synchronous (rayon workers), so every
//! call here blocks on one small shared tokio runtime; the requests themselves run
//! concurrently on it: [`Object::get_ranges`] sends one ranged GET per run of adjacent ranges
//! (large ranges in parts), all at once, and never merges ranges across a gap, so a read
//! fetches only the bytes it asked for. Errors ([`StorageError`]) name the URL and never carry credentials:
//! messages are built from the URL the user gave and the store's error, which holds paths, not
//! keys.

use bytes::Bytes;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientConfigKey, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
    ObjectStoreScheme, PutMode, PutOptions, PutPayload, RetryConfig,
};
use std::fmt;
use std::io::{Read, Write};
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The URL schemes evalscore reads and writes through object storage.
pub const SCHEMES: [&str; 9] = [
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "http", "https",
];

/// Whether `s` is a URL this crate handles (`scheme://...` with a known scheme), rather than
/// a local path.
pub fn is_url(s: &str) -> bool {
    s.split_once("://")
        .is_some_and(|(scheme, _)| SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
}

/// Bytes of one ranged GET: a longer range is fetched in parts of this size, concurrently.
const PART: u64 = 8 << 20;
/// Bytes of one part of a multipart upload (S3's minimum is 5 MiB).
const UPLOAD_PART: usize = 10 << 20;
/// Parts of one upload in flight at once.
const UPLOAD_CONCURRENCY: usize = 4;

/// An object storage failure: what was being done, on which URL, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageError {
    /// The URL as the user gave it (or the object's URL under a prefix).
    pub url: String,
    pub message: String,
    pub hint: Option<String>,
    /// The object was not there (or the bucket/container does not exist).
    pub not_found: bool,
    /// A create-only write found the object already there.
    pub already_exists: bool,
}

impl StorageError {
    fn new(url: &str, message: impl Into<String>) -> StorageError {
        StorageError {
            url: url.to_owned(),
            message: message.into(),
            hint: None,
            not_found: false,
            already_exists: false,
        }
    }

    fn with_hint(mut self, hint: impl Into<String>) -> StorageError {
        self.hint = Some(hint.into());
        self
    }

    /// `what` failed on `url` with the store's error `e`; any of `secrets` in the store's
    /// text is blanked out.
    fn from_store(
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

const CREDENTIALS_HINT: &str = "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_SERVICE_ACCOUNT, or `--storage-option`)";

/// The values that must never appear in a message: those of the environment's storage
/// variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`) and of the `options` whose names say they hold
/// a secret (a key, secret, token or password). Short values (`true`, a region) are not
/// secrets and would blank out ordinary words.
fn secrets(options: &[(String, String)]) -> Vec<String> {
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
fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), "<redacted>");
        }
    }
    text
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.message)
    }
}

impl std::error::Error for StorageError {}

/// An error and its sources on one line, without repeating a source the error already shows.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = s.source();
    }
    text
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

/// The runtime every call blocks on: two threads are enough to drive many requests.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("evalscore-storage")
            .enable_all()
            .build()
            // Building a runtime fails only when the OS refuses threads or an epoll fd; there
            // is nothing to fall back to.
            .unwrap_or_else(|e| panic!("cannot start the storage runtime: {e}"))
    })
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    runtime().block_on(f)
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

/// A place in object storage: a store and a path in it (an object, or a prefix).
#[derive(Clone)]
pub struct Location {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    /// The URL as given, for messages.
    url: String,
    /// Blanked out of the store's messages (see [`secrets`]).
    secrets: Arc<Vec<String>>,
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only the URL: the store's builder holds credentials.
        f.debug_struct("Location").field("url", &self.url).finish()
    }
}

impl Location {
    /// The store and path of `url`, configured from the environment and then `options`
    /// (`--storage-option KEY=VALUE`; the keys are `object_store`'s, e.g. `aws_endpoint`,
    /// `aws_allow_http`, `azure_storage_account_key`, `google_service_account`, `timeout`).
    pub fn parse(url: &str, options: &[(String, String)]) -> Result<Location, StorageError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| StorageError::new(url, format!("not a valid URL: {e}")))?;
        // A query (a presigned URL's signature, a SAS token), a password, or a web URL's
        // `user@` would be dropped by the store, and they are secrets: refused, and not
        // repeated. (`abfss://CONTAINER@ACCOUNT...` names its container there.)
        let web = matches!(parsed.scheme(), "http" | "https");
        if parsed.query().is_some()
            || parsed.password().is_some()
            || (web && !parsed.username().is_empty())
        {
            let mut shown = parsed.clone();
            shown.set_query(None);
            let _ = shown.set_password(None);
            if web {
                let _ = shown.set_username("");
            }
            return Err(StorageError::new(
                shown.as_str(),
                "a URL with a query string or user credentials is not supported",
            )
            .with_hint(
                "give credentials through the environment or `--storage-option`, not in the URL",
            ));
        }
        let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| {
            StorageError::new(url, format!("not a storage URL: {e}"))
                .with_hint("use s3://BUCKET/KEY, gs://BUCKET/KEY, az://CONTAINER/KEY, abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/KEY or https://HOST/PATH")
        })?;
        let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
            ObjectStoreScheme::AmazonS3 => {
                let mut b = AmazonS3Builder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in config_keys::<AmazonS3ConfigKey>(url, options, "S3")? {
                    b = b.with_config(k, v);
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            ObjectStoreScheme::GoogleCloudStorage => {
                let mut b = GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in config_keys::<GoogleConfigKey>(url, options, "Google Cloud Storage")?
                {
                    b = b.with_config(k, v);
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            ObjectStoreScheme::MicrosoftAzure => {
                let mut b = MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in config_keys::<AzureConfigKey>(url, options, "Azure Blob Storage")? {
                    b = b.with_config(k, v);
                }
                b.build().map(|s| Arc::new(s) as _)
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
                b.build().map(|s| Arc::new(s) as _)
            }
            _ => {
                return Err(StorageError::new(url, "not a storage URL")
                    .with_hint("use s3://, gs://, az://, abfss:// or https:// URLs"))
            }
        };
        let store = built.map_err(|e| {
            StorageError::new(url, format!("cannot set up the store: {}", chain(&e)))
                .with_hint("check the URL and the storage settings (environment variables and `--storage-option`)")
        })?;
        let path = ObjectPath::from_url_path(path)
            .map_err(|e| StorageError::new(url, format!("not a valid object path: {e}")))?;
        Ok(Location {
            store,
            path,
            url: url.to_owned(),
            secrets: Arc::new(secrets(options)),
        })
    }

    /// `what` failed here with the store's error `e`.
    fn store_error(&self, what: &str, e: object_store::Error) -> StorageError {
        StorageError::from_store(&self.url, what, e, &self.secrets)
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
    pub fn child(&self, name: &str) -> Location {
        let url = if self.url.ends_with('/') {
            format!("{}{name}", self.url)
        } else {
            format!("{}/{name}", self.url)
        };
        Location {
            store: Arc::clone(&self.store),
            path: self.path.clone().join(name),
            url,
            secrets: Arc::clone(&self.secrets),
        }
    }

    /// The object here: its size, from a HEAD request.
    pub fn object(&self) -> Result<Object, StorageError> {
        let meta =
            block_on(self.store.head(&self.path)).map_err(|e| self.store_error("read input", e))?;
        Ok(Object {
            loc: self.clone(),
            size: meta.size,
        })
    }

    /// Whether an object is here (a HEAD that finds nothing is `false`; other failures are
    /// errors).
    pub fn exists(&self) -> Result<bool, StorageError> {
        match block_on(self.store.head(&self.path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.store_error("check the output", e)),
        }
    }

    /// The objects directly under this prefix whose names end in `suffix` (ASCII case
    /// ignored), sorted by key, as a local directory's files are. Deeper keys are not listed,
    /// as a local directory's subdirectories are not.
    pub fn list(&self, suffix: &str) -> Result<Vec<Object>, StorageError> {
        let suffix = suffix.to_ascii_lowercase();
        let mut found: Vec<Object> = self
            .listing("list the prefix")?
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_owned();
                name.to_ascii_lowercase().ends_with(&suffix).then(|| {
                    let mut loc = self.child(&name);
                    loc.path = m.location.clone();
                    Object { loc, size: m.size }
                })
            })
            .collect();
        found.sort_by(|a, b| a.loc.path.as_ref().cmp(b.loc.path.as_ref()));
        Ok(found)
    }

    /// The names of the objects directly under this prefix, sorted. A missing bucket (or
    /// container) is an error, not an empty prefix.
    pub fn names(&self) -> Result<Vec<String>, StorageError> {
        let mut names: Vec<String> = self
            .listing("list the output prefix")?
            .into_iter()
            .filter_map(|m| m.location.filename().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    /// One listing of the objects directly under this prefix (`what` names it in errors).
    fn listing(&self, what: &str) -> Result<Vec<ObjectMeta>, StorageError> {
        let prefix = (!self.path.as_ref().is_empty()).then_some(&self.path);
        block_on(self.store.list_with_delimiter(prefix))
            .map(|l| l.objects)
            .map_err(|e| self.store_error(what, e))
    }

    /// Writes `bytes` here in one PUT: create-only (a conditional PUT, `If-None-Match: *`)
    /// unless `overwrite`.
    pub fn put(&self, bytes: Vec<u8>, overwrite: bool) -> Result<(), StorageError> {
        let mode = if overwrite {
            PutMode::Overwrite
        } else {
            PutMode::Create
        };
        let opts = PutOptions {
            mode,
            ..PutOptions::default()
        };
        block_on(
            self.store
                .put_opts(&self.path, PutPayload::from(bytes), opts),
        )
        .map(|_| ())
        .map_err(|e| self.store_error("write", e))
    }

    /// Uploads the local file `from` here as a multipart upload, parts sent concurrently.
    /// Any failure (a part refused, the file unreadable, the completion refused) aborts the
    /// upload, so the parts already stored are removed rather than left to the bucket's
    /// lifecycle rules.
    pub fn upload(&self, from: &std::path::Path) -> Result<(), StorageError> {
        let mut file = std::fs::File::open(from).map_err(|e| {
            StorageError::new(&self.url, format!("cannot read `{}`: {e}", from.display()))
        })?;
        block_on(async {
            let mut upload = self
                .store
                .put_multipart(&self.path)
                .await
                .map_err(|e| self.store_error("start the upload", e))?;
            let mut result = self.send_parts(upload.as_mut(), &mut file, from).await;
            if result.is_ok() {
                result = upload
                    .complete()
                    .await
                    .map(|_| ())
                    .map_err(|e| self.store_error("finish the upload", e));
            }
            if result.is_err() {
                // Best effort: the error being reported matters more than a failed abort.
                let _ = upload.abort().await;
            }
            result
        })
    }

    /// The parts of `file`, `UPLOAD_PART` bytes each (the last one shorter), at most
    /// `UPLOAD_CONCURRENCY` in flight. Parts still in flight when this fails are cancelled
    /// (dropping the `JoinSet` aborts them).
    async fn send_parts(
        &self,
        upload: &mut dyn MultipartUpload,
        file: &mut std::fs::File,
        from: &std::path::Path,
    ) -> Result<(), StorageError> {
        let failed = |e: object_store::Error| self.store_error("upload", e);
        let joined = |r: Result<Result<(), object_store::Error>, tokio::task::JoinError>| {
            r.unwrap_or_else(|e| Err(object_store::Error::JoinError { source: e }))
                .map_err(failed)
        };
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            let mut part = Vec::with_capacity(UPLOAD_PART);
            let n = (&mut *file)
                .take(UPLOAD_PART as u64)
                .read_to_end(&mut part)
                .map_err(|e| {
                    StorageError::new(&self.url, format!("cannot read `{}`: {e}", from.display()))
                })?;
            if n == 0 {
                break;
            }
            while tasks.len() >= UPLOAD_CONCURRENCY {
                if let Some(r) = tasks.join_next().await {
                    joined(r)?;
                }
            }
            tasks.spawn(upload.put_part(PutPayload::from(part)));
            if n < UPLOAD_PART {
                break;
            }
        }
        while let Some(r) = tasks.join_next().await {
            joined(r)?;
        }
        Ok(())
    }

    /// Deletes the object here; one that is not there is no error.
    pub fn delete(&self) -> Result<(), StorageError> {
        match block_on(self.store.delete(&self.path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.store_error("delete", e)),
        }
    }
}

/// One object, with its size.
#[derive(Debug, Clone)]
pub struct Object {
    loc: Location,
    size: u64,
}

impl Object {
    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.loc.url
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes of `range`.
    pub fn get_range(&self, range: Range<u64>) -> Result<Bytes, StorageError> {
        let mut v = self.get_ranges(std::slice::from_ref(&range))?;
        Ok(v.pop().unwrap_or_default())
    }

    /// The bytes of each of `ranges`, fetched concurrently: one ranged GET per run of adjacent
    /// ranges (at most 8 MiB; a range over 8 MiB in 8 MiB parts). Ranges are never merged
    /// across a gap, so only the bytes asked for are fetched.
    pub fn get_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>, StorageError> {
        for r in ranges {
            if r.end > self.size || r.start > r.end {
                return Err(StorageError::new(
                    &self.loc.url,
                    format!(
                        "bytes {} to {} are outside the object's {} bytes",
                        r.start, r.end, self.size
                    ),
                ));
            }
        }
        let fetches = plan_fetches(ranges);
        let fetched: Vec<Result<Bytes, object_store::Error>> = block_on(async {
            let handles: Vec<_> = fetches
                .iter()
                .map(|f| {
                    let (store, path, r) = (
                        Arc::clone(&self.loc.store),
                        self.loc.path.clone(),
                        f.span.clone(),
                    );
                    tokio::spawn(async move { store.get_range(&path, r).await })
                })
                .collect();
            let mut out = Vec::with_capacity(handles.len());
            for h in handles {
                out.push(
                    h.await
                        .unwrap_or_else(|e| Err(object_store::Error::JoinError { source: e })),
                );
            }
            out
        });
        let mut pieces: Vec<Vec<Bytes>> = vec![Vec::new(); ranges.len()];
        for (f, got) in fetches.into_iter().zip(fetched) {
            let b = got.map_err(|e| self.loc.store_error("read", e))?;
            let r = f.span;
            if b.len() as u64 != r.end - r.start {
                return Err(StorageError::new(
                    &self.loc.url,
                    format!(
                        "asked for bytes {} to {} and got {} bytes",
                        r.start,
                        r.end,
                        b.len()
                    ),
                )
                .with_hint("the object may have changed during the run; run again"));
            }
            for (i, within) in f.pieces {
                pieces[i].push(b.slice(within));
            }
        }
        Ok(pieces
            .into_iter()
            .map(|p| match p.len() {
                0 => Bytes::new(),
                1 => p.into_iter().next().unwrap_or_default(),
                _ => {
                    let mut v = Vec::with_capacity(p.iter().map(Bytes::len).sum());
                    for b in p {
                        v.extend_from_slice(&b);
                    }
                    Bytes::from(v)
                }
            })
            .collect())
    }

    /// Copies the whole object into `to`, 32 MiB at a time (four ranged GETs at once), so
    /// memory stays bounded whatever the object's size.
    pub fn download(&self, to: &mut impl Write) -> Result<(), StorageError> {
        let step = 4 * PART;
        let mut at = 0;
        while at < self.size {
            let end = (at + step).min(self.size);
            let chunk = self.get_range(at..end)?;
            to.write_all(&chunk).map_err(|e| {
                StorageError::new(&self.loc.url, format!("cannot stage the download: {e}"))
                    .with_hint("check the free space of the temporary folder (TMPDIR)")
            })?;
            at = end;
        }
        Ok(())
    }
}

/// One ranged GET of [`Object::get_ranges`]: its span of the object, and which part of it
/// (bytes within the span) belongs to which asked range, in order.
struct Fetch {
    span: Range<u64>,
    pieces: Vec<(usize, Range<usize>)>,
}

/// The GETs for `ranges`: in order of offset, a range extends the previous GET when it starts
/// where that one ends and the two fit in `PART` bytes (object stores charge, and a slow
/// server takes its time, per request); a range over `PART` bytes is cut into parts.
fn plan_fetches(ranges: &[Range<u64>]) -> Vec<Fetch> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].start);
    let mut fetches: Vec<Fetch> = Vec::new();
    for i in order {
        let mut at = ranges[i].start;
        while at < ranges[i].end {
            let end = (at + PART).min(ranges[i].end);
            match fetches.last_mut() {
                Some(f) if f.span.end == at && end - f.span.start <= PART => {
                    let from = (at - f.span.start) as usize;
                    f.pieces.push((i, from..from + (end - at) as usize));
                    f.span.end = end;
                }
                _ => fetches.push(Fetch {
                    span: at..end,
                    pieces: vec![(i, 0..(end - at) as usize)],
                }),
            }
            at = end;
        }
    }
    fetches
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adjacent ranges share a GET up to `PART` bytes, a gap or an overlap never does, a large
    /// range is cut into parts, and every range gets back exactly its bytes, in the order asked.
    #[test]
    fn fetches_merge_adjacent_ranges_only() {
        let p = PART;
        let ranges = [
            20..30,
            0..10,
            10..20,
            31..40,
            35..36,
            100..100 + 2 * p + 5,
            100 + 2 * p + 5..100 + 2 * p + 9,
        ];
        type Pieces = Vec<(usize, Range<usize>)>;
        let plan: Vec<(Range<u64>, Pieces)> = plan_fetches(&ranges)
            .into_iter()
            .map(|f| (f.span, f.pieces))
            .collect();
        let p = p as usize;
        assert_eq!(
            plan,
            vec![
                (0..30, vec![(1, 0..10), (2, 10..20), (0, 20..30)]),
                (31..40, vec![(3, 0..9)]),
                (35..36, vec![(4, 0..1)]),
                (100..100 + PART, vec![(5, 0..p)]),
                (100 + PART..100 + 2 * PART, vec![(5, 0..p)]),
                (
                    100 + 2 * PART..100 + 2 * PART + 9,
                    vec![(5, 0..5), (6, 5..9)]
                ),
            ]
        );
        // A run of adjacent ranges stops at `PART` bytes.
        let halves = [0..PART / 2 + 1, PART / 2 + 1..PART, PART..PART + 1];
        let spans: Vec<Range<u64>> = plan_fetches(&halves).into_iter().map(|f| f.span).collect();
        assert_eq!(spans, vec![0..PART, PART..PART + 1]);
        let empty = 5..5;
        assert!(plan_fetches(std::slice::from_ref(&empty)).is_empty());
    }

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
            assert!(is_url(u), "{u}");
        }
        for p in ["data/x.parquet", "/tmp/s3:/x", "file.parquet", "ftp://h/x"] {
            assert!(!is_url(p), "{p}");
        }
    }

    #[test]
    fn an_unknown_option_is_named() {
        let e = Location::parse(
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
            let e = Location::parse(url, &[]).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{shown}: a URL with a query string or user credentials is not supported")
            );
            assert!(!format!("{e:?}").contains("abc") && !format!("{e:?}").contains("pass"));
        }
    }

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

    #[test]
    fn an_abfss_container_is_not_taken_for_credentials() {
        let l = Location::parse(
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
        let l = Location::parse(
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
