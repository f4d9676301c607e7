//! Listing a prefix: the objects directly under it, as a local directory's files, or every
//! object in the tree under it ([`StorePath::list_tree`]).

use crate::runtime::block_on;
use crate::{Object, StorageError, StorePath};
use object_store::{ObjectMeta, ObjectStore};

impl StorePath {
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
                    Object::new(loc, &m)
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

    /// Every object in the tree under this prefix, each with its key relative to the prefix
    /// (`a/b/x.parquet`), sorted by key (byte order). A folder is entered only when
    /// `descend(relative folder, its depth)` says so (depth 1 for a folder directly under the
    /// prefix), so a caller skips hidden folders and stops below the depth it can match.
    ///
    /// A key that is not a valid object path (a `.` or `..` part, `w/../x.parquet`) makes the
    /// store refuse the whole page of the listing that holds it, so it cannot be skipped: the
    /// error names it.
    pub fn list_tree(
        &self,
        descend: impl Fn(&str, usize) -> bool,
    ) -> Result<Vec<(String, Object)>, StorageError> {
        let base = self.path.as_ref().len();
        let relative = |p: &object_store::path::Path| -> String {
            let key = p.as_ref();
            key.get(base..)
                .unwrap_or(key)
                .trim_start_matches('/')
                .to_owned()
        };
        let mut found = Vec::new();
        let mut folders = vec![(self.path.clone(), 0usize)];
        while let Some((folder, depth)) = folders.pop() {
            let prefix = (!folder.as_ref().is_empty()).then_some(&folder);
            let listed =
                block_on(self.store.list_with_delimiter(prefix)).map_err(|e| self.tree_error(e))?;
            for sub in listed.common_prefixes {
                if descend(&relative(&sub), depth + 1) {
                    folders.push((sub, depth + 1));
                }
            }
            for m in listed.objects {
                let rel = relative(&m.location);
                let mut loc = self.as_folder().child_url(&rel);
                loc.path = m.location.clone();
                found.push((rel, Object::new(loc, &m)));
            }
        }
        found.sort_by(|a, b| a.1.loc.path.as_ref().cmp(b.1.loc.path.as_ref()));
        Ok(found)
    }

    /// A failed listing of the tree: an invalid key named, anything else as the store says.
    fn tree_error(&self, e: object_store::Error) -> StorageError {
        match &e {
            object_store::Error::InvalidPath {
                source: object_store::path::Error::BadSegment { path, .. },
            } => StorageError::new(
                &self.url,
                format!(
                    "cannot list the prefix: `{path}` is not a valid object path (a `.` or `..` part)"
                ),
            )
            .with_hint("rename or remove that object, or point `--input` at a prefix that does not hold it"),
            _ => self.store_error("list the prefix", e),
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

    /// One listing of the objects directly under this prefix (`what` names it in errors).
    fn listing(&self, what: &str) -> Result<Vec<ObjectMeta>, StorageError> {
        let prefix = (!self.path.as_ref().is_empty()).then_some(&self.path);
        block_on(self.store.list_with_delimiter(prefix))
            .map(|l| l.objects)
            .map_err(|e| self.store_error(what, e))
    }
}
