//! Listing a prefix: the objects directly under it, as a local directory's files.

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
}
