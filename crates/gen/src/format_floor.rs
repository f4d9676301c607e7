//! `evalscore-gen format-floor PATH... --columns a,b,c [--threads 2] [--hash true]`: the work
//! that no reader of these Parquet files avoids, and nothing else, for the "Many files"
//! benchmark's floor. Per file: one open, one read of its tail, the footer parsed (parquet-rs)
//! and, with `--hash`, hashed (SHA-256, as evalscore fingerprints its inputs); per row group:
//! the needed column chunks read (runs of them closer than 64 KiB read at once) and every page
//! of them decompressed (zstd or snappy, one context per thread, into one buffer per thread). No value is
//! decoded, no array built, no row scored. A file of one row group is done in one go on one
//! thread; a larger file's row groups are shared out after its footer is read.
//!
//! Prints the files, row groups, pages, and bytes read and decompressed, then the wall time.

use parquet::basic::Compression;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use sha2::Digest;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Bytes read from a file's end at once: its footer and, in a small file, its last chunks
/// (more would copy chunks not needed; less, read the footer twice).
const TAIL: u64 = 8 << 10;
/// Needed chunks closer than this are read in one run.
const GAP: u64 = 64 << 10;

#[derive(Default)]
struct Counts {
    row_groups: AtomicU64,
    pages: AtomicU64,
    read: AtomicU64,
    decompressed: AtomicU64,
}

/// One thread's reusable state.
struct Worker {
    zstd: zstd::bulk::Decompressor<'static>,
    snappy: snap::raw::Decoder,
    out: Vec<u8>,
}

pub(crate) fn run(
    paths: &[PathBuf],
    columns: &[String],
    threads: usize,
    hash: bool,
) -> Result<(), Error> {
    let started = std::time::Instant::now();
    let files = expand(paths)?;
    let counts = Counts::default();
    // Files of several row groups, with their footers, for the second pass.
    let large: std::sync::Mutex<Vec<(usize, Arc<ParquetMetaData>)>> = Default::default();
    let next = AtomicUsize::new(0);
    each_thread(threads, || {
        let mut w = Worker::new()?;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(path) = files.get(i) else {
                return Ok(());
            };
            let f = File::open(path)?;
            let len = f.metadata()?.len();
            let tail_at = len.saturating_sub(TAIL);
            let tail = read_at(&f, tail_at, len - tail_at)?;
            let footer =
                footer_of(&tail, len).ok_or_else(|| format!("{}: no footer", path.display()))?;
            let footer = if footer.0 >= tail_at {
                tail[(footer.0 - tail_at) as usize..(footer.0 - tail_at + footer.1) as usize]
                    .to_vec()
            } else {
                read_at(&f, footer.0, footer.1)?
            };
            if hash {
                std::hint::black_box(sha2::Sha256::digest(&footer));
            }
            let md = ParquetMetaDataReader::decode_metadata(&footer)?;
            if md.num_row_groups() == 1 {
                w.row_group(&f, &md, 0, columns, (&tail, tail_at), &counts)?;
            } else {
                large
                    .lock()
                    .map_err(|_| "poisoned")?
                    .push((i, Arc::new(md)));
            }
        }
    })?;
    let large = large.into_inner().map_err(|_| "poisoned")?;
    let units: Vec<(usize, Arc<ParquetMetaData>, usize)> = large
        .iter()
        .flat_map(|(i, md)| (0..md.num_row_groups()).map(move |g| (*i, md.clone(), g)))
        .collect();
    let next = AtomicUsize::new(0);
    each_thread(threads, || {
        let mut w = Worker::new()?;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((file, md, g)) = units.get(i) else {
                return Ok(());
            };
            let f = File::open(&files[*file])?;
            w.row_group(&f, md, *g, columns, (&[], 0), &counts)?;
        }
    })?;
    println!(
        "files {} row_groups {} pages {} read {} decompressed {}",
        files.len(),
        counts.row_groups.load(Ordering::Relaxed),
        counts.pages.load(Ordering::Relaxed),
        counts.read.load(Ordering::Relaxed),
        counts.decompressed.load(Ordering::Relaxed),
    );
    println!("wall {:.3} s", started.elapsed().as_secs_f64());
    Ok(())
}

impl Worker {
    fn new() -> Result<Self, Error> {
        Ok(Self {
            zstd: zstd::bulk::Decompressor::new()?,
            snappy: snap::raw::Decoder::new(),
            out: Vec::new(),
        })
    }

    /// Reads row group `g`'s needed chunks (from `tail`, the bytes from `tail_at` on, where
    /// they lie in it) and decompresses their pages.
    fn row_group(
        &mut self,
        f: &File,
        md: &ParquetMetaData,
        g: usize,
        columns: &[String],
        (tail, tail_at): (&[u8], u64),
        counts: &Counts,
    ) -> Result<(), Error> {
        let schema = md.file_metadata().schema_descr();
        let rg = md.row_group(g);
        let mut chunks: Vec<(u64, u64, Compression)> = rg
            .columns()
            .iter()
            .enumerate()
            .filter(|(leaf, _)| {
                let root = schema.get_column_root(*leaf).name();
                columns.iter().any(|c| c == root)
            })
            .map(|(_, c)| {
                let (start, len) = c.byte_range();
                (start, len, c.compression())
            })
            .collect();
        chunks.sort_unstable_by_key(|c| c.0);
        counts.row_groups.fetch_add(1, Ordering::Relaxed);
        let mut at = 0;
        while at < chunks.len() {
            // A run of chunks closer than GAP, read at once unless it lies in the tail.
            let mut end = at + 1;
            while end < chunks.len() && chunks[end].0 <= chunks[end - 1].0 + chunks[end - 1].1 + GAP
            {
                end += 1;
            }
            let (from, to) = (chunks[at].0, chunks[end - 1].0 + chunks[end - 1].1);
            let owned;
            let run: &[u8] = if from >= tail_at && !tail.is_empty() {
                &tail[(from - tail_at) as usize..(to - tail_at) as usize]
            } else {
                owned = read_at(f, from, to - from)?;
                counts.read.fetch_add(to - from, Ordering::Relaxed);
                &owned
            };
            for &(start, len, codec) in &chunks[at..end] {
                let bytes = &run[(start - from) as usize..(start - from + len) as usize];
                self.pages(bytes, codec, counts)?;
            }
            at = end;
        }
        Ok(())
    }

    /// Walks a chunk's pages (`evalscore_parquet::chunk_pages`), decompressing each body after
    /// its uncompressed levels.
    fn pages(&mut self, bytes: &[u8], codec: Compression, counts: &Counts) -> Result<(), Error> {
        for page in evalscore_parquet::chunk_pages(bytes) {
            let page = page?;
            counts.pages.fetch_add(1, Ordering::Relaxed);
            let body = &bytes[page.body.start + page.levels.min(page.body.len())..page.body.end];
            let size = page.uncompressed.saturating_sub(page.levels);
            if !page.codec_applies || size == 0 {
                continue;
            }
            let n = match codec {
                Compression::ZSTD(_) => {
                    self.out.clear();
                    self.out.reserve(size);
                    self.zstd.decompress_to_buffer(body, &mut self.out)?
                }
                Compression::SNAPPY => {
                    self.out.resize(size, 0);
                    self.snappy.decompress(body, &mut self.out)?
                }
                _ => 0,
            };
            counts.decompressed.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(())
    }
}

fn each_thread(threads: usize, work: impl Fn() -> Result<(), Error> + Sync) -> Result<(), Error> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1)).map(|_| s.spawn(&work)).collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| Error::from("a thread panicked"))?)
    })
}

fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)?
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            inside.retain(|f| f.extension().is_some_and(|e| e == "parquet"));
            inside.sort();
            files.extend(inside);
        } else {
            files.push(p.clone());
        }
    }
    Ok(files)
}

fn read_at(f: &File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0; len as usize];
    f.read_exact_at(&mut buf, at)?;
    Ok(buf)
}

/// Where the footer is (start, length), from the tail read (`tail` ends the file of `len` bytes).
fn footer_of(tail: &[u8], len: u64) -> Option<(u64, u64)> {
    let end = tail.len().checked_sub(8)?;
    if &tail[end + 4..] != b"PAR1" {
        return None;
    }
    let n = u64::from(u32::from_le_bytes(tail[end..end + 4].try_into().ok()?));
    Some((len.checked_sub(8 + n)?, n))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::ZstdLevel;
    use parquet::file::properties::WriterProperties;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    /// The walk finds every page of the needed chunks, as parquet-rs's page reader does, and
    /// decompresses each to the size its header gives.
    #[test]
    fn every_page_of_the_needed_chunks_is_decompressed() {
        let dir = std::env::temp_dir().join(format!("format-floor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.parquet");
        let rows = 5_000;
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        let text: ArrayRef = Arc::new(
            (0..rows)
                .map(|i| (i % 9 != 0).then(|| format!("answer {}", i % 53)))
                .collect::<StringArray>(),
        );
        let batch = RecordBatch::try_from_iter([("id", ids), ("text", text)]).unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_data_page_row_count_limit(700)
            .set_write_batch_size(700)
            .set_max_row_group_row_count(Some(2_000))
            .build();
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), Some(props))
            .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();

        // parquet-rs's count of the `text` chunks' pages and their uncompressed bytes.
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let (mut pages, mut bytes) = (0u64, 0u64);
        for g in 0..reader.num_row_groups() {
            let mut p = reader
                .get_row_group(g)
                .unwrap()
                .get_column_page_reader(1)
                .unwrap();
            while let Some(page) = p.get_next_page().unwrap() {
                pages += 1;
                bytes += page.buffer().len() as u64;
            }
        }
        assert!(pages > 2 * reader.num_row_groups() as u64, "{pages}");

        let f = File::open(&path).unwrap();
        let md = ParquetMetaDataReader::new().parse_and_finish(&f).unwrap();
        let counts = Counts::default();
        let mut w = Worker::new().unwrap();
        for g in 0..md.num_row_groups() {
            w.row_group(&f, &md, g, &["text".to_owned()], (&[], 0), &counts)
                .unwrap();
        }
        assert_eq!(counts.row_groups.load(Ordering::Relaxed), 3);
        assert_eq!(counts.pages.load(Ordering::Relaxed), pages);
        assert_eq!(counts.decompressed.load(Ordering::Relaxed), bytes);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
