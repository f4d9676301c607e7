//! A reply cache held in memory: SQLite's `:memory:` database behind the same [`Cache`] API,
//! for replies handed over by another process (a Spark or Ray job's distinct requests,
//! judged once) that a scorer then reads offline. Nothing is written to disk, and each cache
//! is a database of its own.

use crate::{Cache, CacheError};
use std::path::Path;

impl Cache {
    /// An empty cache in memory, gone when dropped.
    pub fn in_memory() -> Result<Cache, CacheError> {
        // SQLite reads this name as a new private in-memory database (no file, no folder).
        Cache::open(Path::new(":memory:"))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Cache, CachedReply, Key};
    use std::path::Path;

    fn reply(content: &str) -> CachedReply {
        CachedReply {
            content: content.to_owned(),
            prompt_tokens: 3,
            completion_tokens: 1,
        }
    }

    #[test]
    fn replies_put_in_memory_are_read_back_and_each_cache_is_its_own() {
        let (a, b) = (Cache::in_memory().unwrap(), Cache::in_memory().unwrap());
        let (k1, k2) = (Key([1; 32]), Key([2; 32]));
        a.put_key(&k1, &reply("yes")).unwrap();
        a.put_key(&k2, &reply("no")).unwrap();
        assert_eq!(
            a.get_many(&[k2, k1, Key([3; 32])]).unwrap(),
            vec![Some(reply("no")), Some(reply("yes")), None]
        );
        assert_eq!(a.len().unwrap(), 2);
        assert!(b.is_empty().unwrap());
        assert!(!Path::new(":memory:").exists());
    }
}
