//! Listing a prefix: the objects directly under it, as a local directory's files, or every
//! object in the tree under it ([`StorePath::list_tree`]).
//!
//! A key that no object path can hold (a `.` or `..` part, `w/../x.parquet`, or an empty one,
//! `w//x.parquet`) makes the store refuse the whole page of the listing that holds it. Where
//! the store lists page by page from a given key (S3, Google Cloud Storage, Azure), such a
//! page is asked for again with fewer keys until the odd entry is alone, which is then
//! stepped over and reported ([`Listing::skipped`]), so one odd key costs a few requests,
//! not the listing. Elsewhere (HTTP) the listing fails with an error naming it.

use crate::runtime::block_on;
use crate::{Object, StorageError, StorePath};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path as ObjectPath;
use object_store::{ListResult, ObjectMeta, ObjectStore};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Keys asked for per page when stepping over odd keys (S3's own page size).
const PAGE: usize = 1000;

/// Folders of a tree listed at once ([`StorePath::list_tree`]): each listing waits on a round
/// trip of the network, not on a core.
pub const LISTERS: usize = 32;

/// A folder's `/`-delimited listing and the odd entries stepped over.
type FolderListing = (ListResult, Vec<String>);

/// What a listing found, and the entries it stepped over that it would have listed: keys,
/// or folders (ending in `/`: every key under them), that are not valid object paths, as
/// paths relative to the listed prefix, sorted.
#[derive(Debug)]
pub struct Listing<T> {
    pub found: Vec<T>,
    pub skipped: Vec<String>,
}

impl StorePath {
    /// The objects directly under this prefix whose names end in `suffix` (ASCII case
    /// ignored), sorted by key, as a local directory's files are. Deeper keys are not listed,
    /// as a local directory's subdirectories are not.
    pub fn list(&self, suffix: &str) -> Result<Listing<Object>, StorageError> {
        let suffix = suffix.to_ascii_lowercase();
        let (listed, mut skipped) = self.listing("list the prefix")?;
        // Folders are not listed, nor other names.
        skipped.retain(|k| !k.ends_with('/') && k.to_ascii_lowercase().ends_with(&suffix));
        let mut found: Vec<Object> = listed
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_owned();
                name.to_ascii_lowercase().ends_with(&suffix).then(|| {
                    let mut loc = self.child(&name);
                    loc.path = m.location.clone();
                    Object::new(loc, &m)
                })
            })
            .collect();
        found.sort_by(|a, b| a.loc.path.as_ref().cmp(b.loc.path.as_ref()));
        Ok(Listing { found, skipped })
    }

    /// The names of the objects directly under this prefix, sorted. A missing bucket (or
    /// container) is an error, not an empty prefix.
    pub fn names(&self) -> Result<Vec<String>, StorageError> {
        let mut names: Vec<String> = self
            .listing("list the output prefix")?
            .0
            .into_iter()
            .filter_map(|m| m.location.filename().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Every object in the tree under this prefix, each with its key relative to the prefix
    /// (`a/b/x.parquet`), sorted by key (byte order). A folder is entered only when
    /// `descend(relative folder, its depth)` says so (depth 1 for a folder directly under the
    /// prefix), so a caller skips hidden folders and stops below the depth it can match.
    ///
    /// A key that is not a valid object path is stepped over (module docs).
    pub fn list_tree(
        &self,
        descend: impl Fn(&str, usize) -> bool,
    ) -> Result<Listing<(String, Object)>, StorageError> {
        let base = self.path.as_ref().len();
        let relative = |p: &object_store::path::Path| -> String {
            let key = p.as_ref();
            key.get(base..)
                .unwrap_or(key)
                .trim_start_matches('/')
                .to_owned()
        };
        let (mut found, mut skipped) = (Vec::new(), Vec::new());
        // A level of the tree at a time, its folders listed concurrently: a partitioned tree
        // (`model=*/date=*/`) is hundreds of folders, each a round trip. A failure is the
        // first in the level's order.
        let mut level = vec![self.path.clone()];
        let mut depth = 0usize;
        while !level.is_empty() {
            let mut next = Vec::new();
            for listing in self.folder_listings(&level) {
                let (listed, odd) = listing?;
                skipped.extend(odd.into_iter().filter(|k| match k.strip_suffix('/') {
                    Some(sub) => descend(sub, depth + 1),
                    None => true,
                }));
                for sub in listed.common_prefixes {
                    if descend(&relative(&sub), depth + 1) {
                        next.push(sub);
                    }
                }
                for m in listed.objects {
                    let rel = relative(&m.location);
                    let mut loc = self.as_folder().child_url(&rel);
                    loc.path = m.location.clone();
                    found.push((rel, Object::new(loc, &m)));
                }
            }
            level = next;
            depth += 1;
        }
        found.sort_by(|a, b| a.1.loc.path.as_ref().cmp(b.1.loc.path.as_ref()));
        skipped.sort();
        Ok(Listing { found, skipped })
    }

    /// [`Self::folder_listing`] of each of `folders`, in their order, at most [`LISTERS`]
    /// at a time. After a failure no further folder is started; every folder before it in
    /// the order was started already (they are taken in order), so the first failure in the
    /// order is the same whichever listing fails first.
    fn folder_listings(&self, folders: &[ObjectPath]) -> Vec<Result<FolderListing, StorageError>> {
        let list = |f: &ObjectPath| self.folder_listing(f, "list the prefix");
        let threads = LISTERS.min(folders.len());
        if threads <= 1 {
            return folders.iter().map(list).collect();
        }
        let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
        let slots: Vec<OnceLock<Result<FolderListing, StorageError>>> =
            folders.iter().map(|_| OnceLock::new()).collect();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
                    if failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(folder) = folders.get(i) else { break };
                    let listed = list(folder);
                    if listed.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    let _ = slots[i].set(listed);
                });
            }
        });
        slots
            .into_iter()
            .map(|slot| {
                // Not started: a listing before it failed, which is returned first.
                slot.into_inner()
                    .unwrap_or_else(|| Err(StorageError::new(&self.url, "not listed")))
            })
            .collect()
    }

    /// One `/`-delimited listing of `folder` (the store's root when empty), and the odd
    /// entries stepped over (module docs), relative to this location; `what` names it in
    /// errors.
    fn folder_listing(
        &self,
        folder: &ObjectPath,
        what: &str,
    ) -> Result<FolderListing, StorageError> {
        let prefix = (!folder.as_ref().is_empty()).then_some(folder);
        // A folder's marker (a key `folder/` of no bytes, as consoles and some Hadoop writers
        // make) lists as an object at the folder's own path: it is the folder, not a file.
        let without_marker = |mut listed: ListResult| {
            if prefix.is_some() {
                listed.objects.retain(|m| m.location != *folder);
            }
            listed
        };
        let e = match block_on(self.store.list_with_delimiter(prefix)) {
            Ok(listed) => return Ok((without_marker(listed), Vec::new())),
            Err(e) => e,
        };
        let Some(pages) = self.pages.as_ref().filter(|_| odd_key(&e).is_some()) else {
            return Err(self.list_error(what, e));
        };
        let mut raw = folder.as_ref().to_owned();
        if !raw.is_empty() {
            raw.push('/');
        }
        let (listed, odd) =
            block_on(list_skipping(pages.as_ref(), &raw)).map_err(|e| self.list_error(what, e))?;
        let base = self.path.as_ref().len();
        // One `/` after the base, not all: `//` directly under it is an empty folder's name.
        let rel = |key: String| {
            let rel = key.get(base..).unwrap_or(&key);
            rel.strip_prefix('/').unwrap_or(rel).to_owned()
        };
        Ok((without_marker(listed), odd.into_iter().map(rel).collect()))
    }

    /// A failed listing: an odd key named, anything else as the store says.
    fn list_error(&self, what: &str, e: object_store::Error) -> StorageError {
        match odd_key(&e) {
            Some(key) => StorageError::new(
                &self.url,
                format!(
                    "cannot {what}: `{key}` is not a valid object path (a `.` or `..` part, or an empty one)"
                ),
            )
            .with_hint("rename or remove that object, or point `--input` at a prefix that does not hold it"),
            None => self.store_error(what, e),
        }
    }

    /// This location as a folder: its URL ending in `/`.
    fn as_folder(&self) -> StorePath {
        let mut folder = self.clone();
        if !folder.url.ends_with('/') {
            folder.url.push('/');
        }
        folder
    }

    /// The location `rel` (which may hold `/`) under this folder, by URL only: the caller
    /// sets the path, which the listing gave.
    fn child_url(&self, rel: &str) -> StorePath {
        let mut child = self.clone();
        child.url.push_str(rel);
        child
    }

    /// One listing of the objects directly under this prefix, and the odd entries stepped
    /// over (`what` names it in errors).
    fn listing(&self, what: &str) -> Result<(Vec<ObjectMeta>, Vec<String>), StorageError> {
        let (listed, skipped) = self.folder_listing(&self.path, what)?;
        Ok((listed.objects, skipped))
    }
}

/// The entry (a key, or a folder ending in `/`) that made a listing fail for not being a
/// valid object path, if that is why it failed.
fn odd_key(e: &object_store::Error) -> Option<&str> {
    use object_store::path::Error as P;
    match e {
        object_store::Error::InvalidPath {
            source: P::BadSegment { path, .. } | P::EmptySegment { path },
        } => Some(path),
        _ => None,
    }
}

/// The `/`-delimited listing of the folder `raw` (a prefix ending in `/`, or empty), page by
/// page from a key on, each odd entry stepped over (module docs); the odd entries' keys.
async fn list_skipping(
    pages: &dyn PaginatedListStore,
    raw: &str,
) -> Result<(ListResult, Vec<String>), object_store::Error> {
    let mut listed = ListResult {
        common_prefixes: Vec::new(),
        objects: Vec::new(),
    };
    let mut skipped = Vec::new();
    // Entries come in byte order of their keys; the next page starts after `after`.
    let mut after: Option<String> = None;
    let mut size = PAGE;
    loop {
        let opts = PaginatedListOptions {
            offset: after.clone(),
            delimiter: Some("/".into()),
            max_keys: Some(size),
            ..PaginatedListOptions::default()
        };
        let prefix = (!raw.is_empty()).then_some(raw);
        match pages.list_paginated(prefix, opts).await {
            Ok(page) => {
                let result = page.result;
                // Past a folder means past every key under it.
                let last_folder = result
                    .common_prefixes
                    .last()
                    .map(|p| format!("{p}/{}", char::MAX));
                let last_object = result.objects.last().map(|m| m.location.to_string());
                let last = last_folder.into_iter().chain(last_object).max();
                listed.common_prefixes.extend(result.common_prefixes);
                listed.objects.extend(result.objects);
                match (page.page_token, last) {
                    (Some(_), Some(last)) => after = Some(last),
                    _ => break,
                }
                size = (size * 2).min(PAGE);
            }
            Err(e) => {
                let Some(key) = odd_key(&e) else {
                    return Err(e);
                };
                if size > 1 {
                    size /= 2;
                    continue;
                }
                // Alone in its page: stepped over (a folder with every key under it).
                after = Some(match key.ends_with('/') {
                    true => format!("{key}{}", char::MAX),
                    false => key.to_owned(),
                });
                skipped.push(key.to_owned());
                size = PAGE;
            }
        }
    }
    Ok((listed, skipped))
}
