//! Where a comparison keeps its rows between passes: byte records in memory for runs that
//! fit one partition, else in files of a temporary folder (`$TMPDIR/evalscore-compare-*`,
//! removed when the comparison ends), each written once in order and read back in order.

use crate::error::CompareError;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// No group, cluster or partner: the id that no value gets.
pub(crate) const NONE: u32 = u32::MAX;
pub(crate) const NO_ROW: u64 = u64::MAX;

/// The temporary folder of a comparison that spills (`None` when everything stays in memory).
#[derive(Debug)]
pub(crate) struct SpillDir {
    dir: Option<tempfile::TempDir>,
}

impl SpillDir {
    pub fn new(spill: bool) -> Result<SpillDir, CompareError> {
        if !spill {
            return Ok(SpillDir { dir: None });
        }
        let tmp = std::env::temp_dir();
        let dir = tempfile::Builder::new()
            .prefix("evalscore-compare-")
            .tempdir_in(&tmp)
            .map_err(|source| CompareError::Spill { dir: tmp, source })?;
        Ok(SpillDir { dir: Some(dir) })
    }

    /// A new store: a file named `name` in the folder, or memory.
    pub fn store(&self, name: &str) -> Result<Store, CompareError> {
        match &self.dir {
            None => Ok(Store::Memory(Vec::new())),
            Some(d) => {
                let path = d.path().join(name);
                let file = File::create(&path).map_err(|source| spill_error(&path, source))?;
                Ok(Store::File {
                    path,
                    writer: Some(BufWriter::with_capacity(64 << 10, file)),
                })
            }
        }
    }
}

fn spill_error(path: &Path, source: std::io::Error) -> CompareError {
    CompareError::Spill {
        dir: path.parent().unwrap_or(path).to_path_buf(),
        source,
    }
}

/// Records written in order, then read back in order (any number of times).
#[derive(Debug)]
pub(crate) enum Store {
    Memory(Vec<u8>),
    File {
        path: PathBuf,
        writer: Option<BufWriter<File>>,
    },
}

impl Store {
    pub fn write(&mut self, record: &[u8]) -> Result<(), CompareError> {
        match self {
            Store::Memory(v) => {
                v.extend_from_slice(record);
                Ok(())
            }
            Store::File { path, writer } => match writer {
                Some(w) => w.write_all(record).map_err(|e| spill_error(path, e)),
                None => Err(CompareError::Internal(
                    "a spilled partition written after it was read".to_owned(),
                )),
            },
        }
    }

    /// Ends the writing: flushes a file.
    pub fn finish(&mut self) -> Result<(), CompareError> {
        if let Store::File { path, writer } = self {
            if let Some(w) = writer.take() {
                w.into_inner()
                    .map_err(|e| spill_error(path, e.into_error()))?;
            }
        }
        Ok(())
    }

    /// A reader from the first record; [`Store::finish`] first.
    pub fn reader(&self) -> Result<Records<'_>, CompareError> {
        let inner: Box<dyn Read + '_> = match self {
            Store::Memory(v) => Box::new(v.as_slice()),
            Store::File { path, .. } => Box::new(BufReader::with_capacity(
                64 << 10,
                File::open(path).map_err(|e| spill_error(path, e))?,
            )),
        };
        let path = match self {
            Store::Memory(_) => PathBuf::new(),
            Store::File { path, .. } => path.clone(),
        };
        Ok(Records { inner, path })
    }
}

/// Builds one record.
#[derive(Debug, Default)]
pub(crate) struct Record(pub Vec<u8>);

impl Record {
    pub fn clear(&mut self) {
        self.0.clear();
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
}

/// Reads records back, field by field.
pub(crate) struct Records<'a> {
    inner: Box<dyn Read + 'a>,
    path: PathBuf,
}

impl std::fmt::Debug for Records<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records").field("path", &self.path).finish()
    }
}

impl Records<'_> {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), CompareError> {
        self.inner
            .read_exact(buf)
            .map_err(|e| spill_error(&self.path, e))
    }

    /// The first field of a record, or `None` at the end.
    pub fn first_u64(&mut self) -> Result<Option<u64>, CompareError> {
        let mut b = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            let n = self
                .inner
                .read(&mut b[got..])
                .map_err(|e| spill_error(&self.path, e))?;
            if n == 0 {
                break;
            }
            got += n;
        }
        match got {
            0 => Ok(None),
            8 => Ok(Some(u64::from_le_bytes(b))),
            _ => Err(CompareError::Internal(
                "a spilled partition ends inside a record".to_owned(),
            )),
        }
    }

    pub fn u32(&mut self) -> Result<u32, CompareError> {
        let mut b = [0u8; 4];
        self.fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn f64(&mut self) -> Result<f64, CompareError> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(f64::from_le_bytes(b))
    }

    /// Length-prefixed bytes, appended to `out`.
    pub fn bytes(&mut self, out: &mut Vec<u8>) -> Result<(), CompareError> {
        let len = self.u32()? as usize;
        let start = out.len();
        out.resize(start + len, 0);
        self.fill(&mut out[start..])
    }
}
