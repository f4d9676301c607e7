//! Writing objects: one PUT (create-only unless overwriting), multipart uploads of local
//! files with parts sent concurrently, and deletes.

use crate::runtime::block_on;
use crate::{StorageError, StorePath};
use object_store::{MultipartUpload, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::io::Read;

/// Bytes of one part of a multipart upload (S3's minimum is 5 MiB).
const UPLOAD_PART: usize = 10 << 20;
/// Parts of one upload in flight at once.
const UPLOAD_CONCURRENCY: usize = 4;

impl StorePath {
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
