//! Inputs read as trees: a folder or prefix read at any depth (`--recursive`), or a glob
//! (`dir/**/*.parquet`, `s3://b/evals/model=*/run=r*/*.parquet`), locally and in
//! object storage alike.
//!
//! Each `--input` is told apart once, where it enters, as an [`InputSource`]: its
//! [`Location`] and how it is read ([`Select`]); a glob is split there into its base (the
//! folder or prefix before its first segment with a wildcard) and a compiled matcher of the
//! rest. Listing then walks the base and keeps the files whose path relative to it matches.
//!
//! As Spark and Hadoop readers do, a file or folder under the base whose name starts with `.`,
//! or with `_` without holding `=` (`_SUCCESS`, `_committed_*`, `_started_*`, `_temporary`;
//! a Hive partition such as `_x=1` is kept), and files ending `.crc`, are skipped; hidden
//! folders are not entered. Files come in byte order of their full path (or key), so a tree
//! lists in the same order locally and in object storage. Symbolic links to files are read;
//! those to folders are not followed (no loops). Each file found keeps its path relative to
//! the base (`Listed`), where its Hive partitions are read from (module `hive`).

use crate::remote::{read_error, Found};
use crate::{jsonl_kind, Format, ReadError};
use evalscore_storage::{Location, Object, StoreUrl};
use globset::{GlobBuilder, GlobMatcher};
use std::path::{Path, PathBuf};

/// One `--input` as given, parsed once: where it is, and how it is read.
#[derive(Debug, Clone)]
pub struct InputSource {
    pub(crate) location: Location,
    pub(crate) select: Select,
}

/// The order of inputs read from a tree or a folder: the bytes of the whole path, as an
/// object store lists keys, compared without copying them.
pub(crate) fn byte_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    a.as_os_str()
        .as_encoded_bytes()
        .cmp(b.as_os_str().as_encoded_bytes())
}

/// How an input's location is read.
#[derive(Debug, Clone)]
pub(crate) enum Select {
    /// A file or object; a folder or prefix (ending in `/`) one level deep, its `*.parquet`.
    AsGiven,
    /// A folder or prefix (ending in `/`): its `*.parquet` files at any depth (`--recursive`).
    Tree,
    /// The files under the location (a folder or prefix: the glob's base) that match.
    Glob(Glob),
}

/// A glob's pattern: the text as given (for messages) and the matcher of its part after the
/// base, matched against paths relative to the base with `/` between folders.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    text: String,
    matcher: GlobMatcher,
    /// The deepest a match can be (segments of the pattern), `None` with `**`.
    max_depth: Option<usize>,
}

impl InputSource {
    /// The input's folder, prefix, file or glob base as messages show it (a URL without its
    /// credentials).
    pub(crate) fn shown(&self) -> String {
        match &self.location {
            Location::Local(p) => p.display().to_string(),
            Location::Remote(url) => url.shown(),
        }
    }

    /// `p` as an input: a glob when a segment holds a wildcard (`*`, `[`, `{`, and for a
    /// local path `?`; in a URL `?` starts a query) and, for a local path, nothing exists at
    /// `p` as written; else the path or URL as given, read at any depth when `recursive` and
    /// it is a folder or a prefix (a URL ending in `/`). An invalid pattern is an error
    /// naming it.
    pub fn parse(p: &Path, recursive: bool) -> Result<InputSource, ReadError> {
        let location = match Location::from_path(p) {
            // `s3://bucket` names no object: the bucket's root, as `s3://bucket/`.
            Location::Remote(url) if bucket_only(url.as_str()) => Location::Remote(url.as_prefix()),
            location => location,
        };
        let literal = |location: Location| {
            let tree = recursive
                && match &location {
                    Location::Remote(url) => url.is_prefix(),
                    Location::Local(p) => p.is_dir(),
                };
            let select = if tree { Select::Tree } else { Select::AsGiven };
            Ok(InputSource { location, select })
        };
        match location {
            Location::Remote(url) => {
                let text = url.as_str();
                let (scheme, rest) = text.split_once("://").unwrap_or(("", text));
                let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
                let wild = |s: &str| s.contains(['*', '[', '{']);
                if wild(authority) {
                    return Err(invalid(
                        &url.shown(),
                        "the bucket or host cannot hold a wildcard",
                    ));
                }
                let Some((base, pattern)) = split_glob(path, wild) else {
                    return literal(Location::Remote(url));
                };
                let mut base_url = format!("{scheme}://{authority}/{base}");
                if !base.is_empty() {
                    base_url.push('/');
                }
                let glob = Glob::new(&url.shown(), pattern)?;
                let base = StoreUrl::parse(&base_url).map(Location::Remote);
                Ok(InputSource {
                    location: base.unwrap_or(Location::Remote(url)),
                    select: Select::Glob(glob),
                })
            }
            Location::Local(path) => {
                let wild = |s: &str| s.contains(['*', '?', '[', '{']);
                if std::fs::symlink_metadata(&path).is_ok() {
                    return literal(Location::Local(path));
                }
                let Some(text) = path.to_str() else {
                    // A base folder whose name is not UTF-8 text.
                    return match split_components(&path, wild)? {
                        Some((base, pattern)) => Ok(InputSource {
                            location: Location::Local(base),
                            select: Select::Glob(Glob::new(&path.display().to_string(), &pattern)?),
                        }),
                        None => literal(Location::Local(path)),
                    };
                };
                let Some((base, pattern)) = split_glob(text, wild) else {
                    return literal(Location::Local(path));
                };
                let base = match base {
                    "" if text.starts_with('/') => "/",
                    b => b,
                };
                Ok(InputSource {
                    location: Location::Local(PathBuf::from(base)),
                    select: Select::Glob(Glob::new(text, pattern)?),
                })
            }
        }
    }
}

/// `path` split before its first segment that `wild` finds a wildcard in: the base (segments
/// joined by `/`, without a trailing one) and the pattern; `None` without a wildcard.
fn split_glob(path: &str, wild: impl Fn(&str) -> bool) -> Option<(&str, &str)> {
    let mut start = 0;
    for segment in path.split('/') {
        if wild(segment) {
            let base = path[..start].trim_end_matches('/');
            return Some((base, &path[start..]));
        }
        start += segment.len() + 1;
    }
    None
}

/// [`split_glob`] of a path that is not UTF-8 text, by its components: the base before the
/// first one with a wildcard, which may hold any bytes, and the pattern from it on, which must
/// be text (an error naming the path if not); `None` without a wildcard.
fn split_components(
    path: &Path,
    wild: impl Fn(&str) -> bool,
) -> Result<Option<(PathBuf, String)>, ReadError> {
    let parts: Vec<_> = path.components().collect();
    let Some(at) = parts
        .iter()
        .position(|c| c.as_os_str().to_str().is_some_and(&wild))
    else {
        return Ok(None);
    };
    let mut pattern = Vec::new();
    for c in &parts[at..] {
        let Some(s) = c.as_os_str().to_str() else {
            return Err(invalid(
                &path.display().to_string(),
                "the part from the first wildcard on is not UTF-8 text",
            ));
        };
        pattern.push(s);
    }
    Ok(Some((parts[..at].iter().collect(), pattern.join("/"))))
}

/// An invalid pattern's error.
fn invalid(text: &str, why: impl std::fmt::Display) -> ReadError {
    ReadError::new(format!("invalid glob pattern `{text}`: {why}")).with_hint(
        "quote the pattern so the shell leaves it alone; `*` matches within a folder, `**` across folders, `[abc]` one of the characters, `{a,b}` either text",
    )
}

impl Glob {
    /// The matcher of `pattern`, the part of `text` after its base.
    fn new(text: &str, pattern: &str) -> Result<Glob, ReadError> {
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| invalid(text, e.kind()))?
            .compile_matcher();
        let max_depth = (!pattern.contains("**")).then(|| pattern.split('/').count());
        Ok(Glob {
            text: text.to_owned(),
            matcher,
            max_depth,
        })
    }
}

/// Whether a file or folder name is skipped in a tree: hidden (`.`), a writer's marker or
/// scratch folder (`_` without `=`), or a checksum (`.crc`).
fn skipped(name: &str) -> bool {
    name.starts_with('.')
        || (name.starts_with('_') && !name.contains('='))
        || name.to_ascii_lowercase().ends_with(".crc")
}

/// A file found in a tree: the file (a local path or an object), its format, and its path
/// relative to the tree's base (`/` between folders), where Hive partitions are read from.
pub(crate) struct Listed<F> {
    pub file: F,
    pub format: Format,
    pub rel: String,
}

/// Which files of a tree are read, and how deep it is walked.
enum Wanted<'a> {
    Parquet,
    Glob(&'a Glob),
}

impl Wanted<'_> {
    /// Whether the file at `rel` (relative to the base) is read, and as what.
    fn format(&self, rel: &str) -> Option<Format> {
        if rel.split('/').any(skipped) {
            return None;
        }
        match self {
            Wanted::Parquet => rel
                .to_ascii_lowercase()
                .ends_with(".parquet")
                .then_some(Format::Parquet),
            Wanted::Glob(g) => g
                .matcher
                .is_match(rel)
                .then(|| match jsonl_kind(Path::new(rel)) {
                    Some(_) => Format::Jsonl,
                    None => Format::Parquet,
                }),
        }
    }

    /// Whether the folder `name`, `depth` levels under the base, is entered.
    fn enter(&self, name: &str, depth: usize) -> bool {
        let deep_enough = match self {
            Wanted::Parquet => true,
            Wanted::Glob(g) => g.max_depth.is_none_or(|m| depth < m),
        };
        deep_enough && !skipped(name)
    }

    /// "no input file matches" for this tree under `base` (a folder, or a prefix URL).
    fn none_found(&self, base: &str) -> ReadError {
        let (pattern, hint) = match self {
            Wanted::Parquet => (
                format!("{}/**/*.parquet", base.trim_end_matches('/')),
                "`--recursive` reads the `*.parquet` files at any depth under the folder or prefix",
            ),
            Wanted::Glob(g) => (
                g.text.clone(),
                "`*` matches within a folder and `**` across folders",
            ),
        };
        ReadError::new(format!("no input file matches `{pattern}`")).with_hint(format!(
            "{hint}; names starting with `.` or `_` (`_SUCCESS`, `.hidden`) and `.crc` files are skipped"
        ))
    }
}

impl InputSource {
    fn wanted(&self) -> Option<Wanted<'_>> {
        match &self.select {
            Select::AsGiven => None,
            Select::Tree => Some(Wanted::Parquet),
            Select::Glob(g) => Some(Wanted::Glob(g)),
        }
    }

    /// The local files of a tree or glob under `base`, in byte order of their paths; `None`
    /// when the input is read as given.
    pub(crate) fn local_files(
        &self,
        base: &Path,
    ) -> Option<Result<Vec<Listed<PathBuf>>, ReadError>> {
        let wanted = self.wanted()?;
        Some(walk(base, &wanted).and_then(|mut found| {
            if found.is_empty() {
                return Err(wanted.none_found(&base.to_string_lossy()));
            }
            found.sort_unstable_by(|a, b| byte_order(&a.file, &b.file));
            Ok(found)
        }))
    }

    /// The objects of a tree or glob under the prefix `base`, in byte order of their keys,
    /// and a warning for each odd key stepped over that could have matched; `None` when the
    /// input is read as given.
    pub(crate) fn remote_objects(
        &self,
        base: &StoreUrl,
        options: &[(String, String)],
    ) -> Option<Result<Found<Listed<Object>>, ReadError>> {
        let wanted = self.wanted()?;
        let list = || {
            let prefix = base.connect(options).map_err(read_error)?;
            let listed = prefix
                .list_tree(|rel, depth| {
                    let name = rel.rsplit('/').next().unwrap_or(rel);
                    wanted.enter(name, depth)
                })
                .map_err(read_error)?;
            // A folder could hold a match; a key, if its name matches.
            let odd: Vec<String> = (listed.skipped.into_iter())
                .filter(|rel| rel.ends_with('/') || wanted.format(rel).is_some())
                .collect();
            let warnings = crate::remote::skipped(&base.shown(), &odd);
            let found: Vec<Listed<Object>> = listed
                .found
                .into_iter()
                .filter_map(|(rel, file)| {
                    let format = wanted.format(&rel)?;
                    Some(Listed { file, format, rel })
                })
                .collect();
            if found.is_empty() {
                let e = wanted.none_found(&base.shown());
                return Err(crate::remote::with_skipped(e, &warnings));
            }
            Ok((found, warnings))
        };
        Some(list())
    }
}

/// The wanted files under the local folder `base` (`""`: the current one), their paths
/// `base` joined with their path relative to it.
fn walk(base: &Path, wanted: &Wanted) -> Result<Vec<Listed<PathBuf>>, ReadError> {
    let mut found = Vec::new();
    let mut folders = vec![(base.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, rel_dir, depth)) = folders.pop() {
        let listed = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &dir
        };
        let entries = match std::fs::read_dir(listed) {
            // A glob whose base is missing matches nothing.
            Err(e) if depth == 0 && e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
            r => r.map_err(|e| ReadError::at(listed, format!("cannot list directory: {e}")))?,
        };
        for entry in entries {
            let entry =
                entry.map_err(|e| ReadError::at(listed, format!("cannot list directory: {e}")))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = dir.join(entry.file_name());
            let rel = if rel_dir.is_empty() {
                name.clone()
            } else {
                format!("{rel_dir}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|e| ReadError::at(&path, format!("cannot read input: {e}")))?;
            let is_file = kind.is_file()
                || (kind.is_symlink() && std::fs::metadata(&path).is_ok_and(|m| m.is_file()));
            if kind.is_dir() {
                if wanted.enter(&name, depth + 1) {
                    folders.push((path, rel, depth + 1));
                }
            } else if is_file {
                if let Some(format) = wanted.format(&rel) {
                    found.push(Listed {
                        file: path,
                        format,
                        rel,
                    });
                }
            }
        }
    }
    Ok(found)
}

/// Whether `url` names a bucket (or container) and no key: `s3://bucket`, not an HTTP URL.
fn bucket_only(url: &str) -> bool {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    !scheme.starts_with("http") && !rest.is_empty() && !rest.contains('/')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn glob_of(s: &str) -> (Location, Glob) {
        match InputSource::parse(Path::new(s), false).unwrap() {
            InputSource {
                location,
                select: Select::Glob(g),
            } => (location, g),
            other => panic!("{s}: not a glob: {other:?}"),
        }
    }

    #[test]
    fn a_glob_is_split_at_its_first_wildcard() {
        for (given, base, max_depth) in [
            ("dir/**/*.parquet", Location::Local("dir".into()), None),
            ("/t/a/*/x.parquet", Location::Local("/t/a".into()), Some(2)),
            ("/*.parquet", Location::Local("/".into()), Some(1)),
            ("*.jsonl", Location::Local("".into()), Some(1)),
            (
                "s3://b/evals/model=*/run=r*/*.parquet",
                Location::parse("s3://b/evals/"),
                Some(3),
            ),
            ("s3://b/*.parquet", Location::parse("s3://b/"), Some(1)),
        ] {
            let (location, glob) = glob_of(given);
            assert_eq!((location, glob.max_depth), (base, max_depth), "{given}");
            assert_eq!(glob.text, given);
        }
        let (_, g) = glob_of("s3://b/evals/model=*/run=r*/*.parquet");
        assert!(g.matcher.is_match("model=m1/run=r25/part-0.parquet"));
        assert!(!g.matcher.is_match("model=m1/run=q25/part-0.parquet"));
        assert!(!g.matcher.is_match("model=m1/x/run=r25/part-0.parquet"));
    }

    #[test]
    fn paths_without_wildcards_are_read_as_given() {
        for (given, recursive) in [
            ("data/x.parquet", true),
            ("s3://b/k.parquet", true),
            ("s3://b/evals/", false),
            ("https://h/x.parquet?sig=a", false),
        ] {
            let s = InputSource::parse(Path::new(given), recursive).unwrap();
            assert!(matches!(s.select, Select::AsGiven), "{given}");
            assert_eq!(s.location, Location::parse(given));
        }
        let s = InputSource::parse(Path::new("s3://b/evals/"), true).unwrap();
        assert!(matches!(s.select, Select::Tree));
    }

    #[test]
    fn invalid_patterns_are_named() {
        for (given, message) in [
            (
                "dir/[a.parquet",
                "invalid glob pattern `dir/[a.parquet`: unclosed character class; missing ']'",
            ),
            (
                "s3://b/{a,b.parquet",
                "invalid glob pattern `s3://b/{a,b.parquet`: unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
            ),
            (
                "s3://b*/x.parquet",
                "invalid glob pattern `s3://b*/x.parquet`: the bucket or host cannot hold a wildcard",
            ),
        ] {
            let e = InputSource::parse(Path::new(given), false).unwrap_err();
            assert_eq!(e.to_string(), message);
        }
    }

    #[test]
    fn hidden_names_and_markers_are_skipped() {
        let names = [
            ".hidden",
            "_SUCCESS",
            "_committed_123",
            "_started_123",
            "_temporary",
            "part-0.parquet.crc",
            ".part-0.parquet.crc",
            "_x=1",
            "model=m1",
            "part-0.parquet",
        ];
        let kept: Vec<&str> = names.into_iter().filter(|n| !skipped(n)).collect();
        assert_eq!(kept, ["_x=1", "model=m1", "part-0.parquet"]);
    }
}
