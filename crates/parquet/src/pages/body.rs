//! A page's bytes checked against its header before a decoder reads them: the checksum,
//! where the page has one, and the size its codec gives back.
//!
//! parquet-rs trusts a page header's `uncompressed_page_size` in ways that turn damage into
//! data or into memory (UPSTREAM-PROPOSALS.md, "Codecs bounded by the header"): its Snappy
//! codec zero-fills an output of the header's size and ignores how many bytes the stream
//! gave, so a short stream reads as zeros; its GZIP, Brotli and LZ4 frame codecs inflate to
//! the stream's end whatever the header says, and compare sizes only after; and it never
//! verifies a page checksum. Here, before any of that runs:
//!
//! - a page with a CRC32 must have it over its bytes as stored (a bit flipped in a value
//!   would otherwise be scored, and copied);
//! - a Snappy stream must declare exactly the header's size (its decoder then refuses a
//!   stream that does not fill what it declares), and no more than a Snappy stream of its
//!   length can hold;
//! - a GZIP, Brotli or LZ4 frame stream is inflated here up to the header's size and one
//!   byte more, into nothing, and must give exactly the header's size;
//! - a zstd frame that records its content size must record the header's;
//! - an LZ4 (Hadoop or raw) page may not claim more than an LZ4 block of its length can
//!   hold: parquet-rs zero-fills the header's size before decoding it.

use super::header::Page;
use parquet::basic::Compression;
use std::io::Read;

/// The most bytes a Snappy stream gives per stored byte: a 3-byte copy gives 64 (21.3 to 1).
const SNAPPY_RATIO: usize = 22;
/// The most bytes an LZ4 block gives per stored byte: a match's length grows by 255 per
/// extra length byte.
const LZ4_RATIO: usize = 256;
/// Longest zstd frame header (magic, descriptor, window, dictionary id, content size).
const ZSTD_HEADER: usize = 18;
/// Longest Snappy preamble (the uncompressed length, a varint of a u32).
const SNAPPY_PREAMBLE: usize = 5;
/// The LZ4 frame format's magic number, as stored.
const LZ4_FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];

/// How many of a page's stored bytes, from its first, [`check_body`] reads: all of them for
/// a checksum or a stream inflated here, a few for a Snappy or zstd header, else none.
pub(super) fn bytes_needed(page: &Page, codec: Compression) -> usize {
    let stored = usize::try_from(page.compressed).unwrap_or(0);
    if page.crc.is_some() {
        return stored;
    }
    let levels = usize::try_from(page.levels).unwrap_or(0);
    let needed = match (codec, compressed_part(page)) {
        (_, None) => 0,
        (Compression::SNAPPY, _) => levels + SNAPPY_PREAMBLE,
        (Compression::ZSTD(_), _) => levels + ZSTD_HEADER,
        (Compression::GZIP(_) | Compression::BROTLI(_) | Compression::LZ4, _) => stored,
        _ => 0,
    };
    needed.min(stored)
}

/// The bytes the codec must give back for `page`: `None` when it does not apply (no codec
/// on a v2 page's values, nothing after its levels, which parquet-rs does not decompress).
fn compressed_part(page: &Page) -> Option<usize> {
    let want = usize::try_from(page.uncompressed.saturating_sub(page.levels as i32)).ok()?;
    (page.codec_applies && want > 0).then_some(want)
}

/// Checks `body`, the first [`bytes_needed`] stored bytes of page `page` of a chunk
/// compressed with `codec`; the error says what is wrong with the page.
pub(super) fn check_body(page: &Page, body: &[u8], codec: Compression) -> Result<(), String> {
    if let Some(crc) = page.crc {
        let mut sum = flate2::Crc::new();
        sum.update(body);
        if sum.sum() != crc {
            return Err(format!(
                "its checksum is {crc:08x}, its bytes give {:08x}",
                sum.sum()
            ));
        }
    }
    let Some(want) = compressed_part(page) else {
        return Ok(());
    };
    let stored = usize::try_from(page.compressed).unwrap_or(0);
    let levels = usize::try_from(page.levels).unwrap_or(0).min(body.len());
    let stream = &body[levels..];
    let stream_len = stored.saturating_sub(levels);
    match codec {
        Compression::SNAPPY => {
            let declared = snap::raw::decompress_len(stream)
                .map_err(|e| format!("its Snappy stream does not read: {e}"))?;
            if declared != want {
                return Err(format!(
                    "its Snappy stream holds {declared} bytes, its header gives {want}"
                ));
            }
            if want / SNAPPY_RATIO > stream_len {
                return Err(format!(
                    "a Snappy stream of {stream_len} bytes cannot hold the {want} its header gives"
                ));
            }
            Ok(())
        }
        Compression::ZSTD(_) => match zstd::zstd_safe::get_frame_content_size(stream) {
            Ok(Some(n)) if n != want as u64 => Err(format!(
                "its zstd frame holds {n} bytes, its header gives {want}"
            )),
            _ => Ok(()),
        },
        Compression::GZIP(_) => inflated(flate2::read::MultiGzDecoder::new(stream), "GZIP", want),
        Compression::BROTLI(_) => inflated(brotli::Decompressor::new(stream, 4096), "Brotli", want),
        Compression::LZ4 if stream.starts_with(&LZ4_FRAME_MAGIC) => {
            inflated(lz4_flex::frame::FrameDecoder::new(stream), "LZ4", want)
        }
        Compression::LZ4 | Compression::LZ4_RAW if want / LZ4_RATIO > stream_len => Err(format!(
            "an LZ4 stream of {stream_len} bytes cannot hold the {want} its header gives"
        )),
        _ => Ok(()),
    }
}

/// Reads `stream` up to `want` bytes and one more, keeping none: it must give `want`.
fn inflated(stream: impl Read, codec: &str, want: usize) -> Result<(), String> {
    let mut bounded = stream.take(want as u64 + 1);
    let got = std::io::copy(&mut bounded, &mut std::io::sink())
        .map_err(|e| format!("its {codec} stream does not read: {e}"))?;
    match got.cmp(&(want as u64)) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Greater => Err(format!(
            "its {codec} stream holds more than the {want} bytes its header gives"
        )),
        std::cmp::Ordering::Less => Err(format!(
            "its {codec} stream holds {got} bytes, its header gives {want}"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::check_chunk;
    use super::super::damaged::{int64_file, parquet_rs_reads, plain_ints, Stored};
    use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
    use std::io::Write;

    /// A v1 page of `values` values whose header gives `uncompressed` bytes, holding `bytes`.
    fn page(bytes: Vec<u8>, uncompressed: usize, values: u32) -> Vec<Stored> {
        vec![Stored {
            bytes,
            uncompressed,
            values,
            v2: false,
        }]
    }

    /// The verdict on one page of 10 values whose header gives 80 bytes, holding `bytes`.
    fn verdict(codec: Compression, bytes: Vec<u8>) -> Result<(), String> {
        let (file, chunk) = int64_file(codec, page(bytes, 80, 10));
        check_chunk(&file, &chunk).map(|_| ())
    }

    fn snappy(raw: &[u8]) -> Vec<u8> {
        snap::raw::Encoder::new().compress_vec(raw).unwrap()
    }

    fn gzip(raw: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(raw).unwrap();
        e.finish().unwrap()
    }

    fn brotli(raw: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        e.write_all(raw).unwrap();
        drop(e);
        out
    }

    fn lz4_frame(raw: &[u8]) -> Vec<u8> {
        let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
        e.write_all(raw).unwrap();
        e.finish().unwrap()
    }

    /// Eight values where the header promises ten: parquet-rs reads the Snappy page as ten,
    /// the last two zeros; every codec's page is damaged here.
    #[test]
    fn a_stream_short_of_its_header_is_a_damaged_page() {
        let short = plain_ints(8);
        let (file, _) = int64_file(Compression::SNAPPY, page(snappy(&short), 80, 10));
        assert_eq!(
            parquet_rs_reads(&file),
            Ok(vec![100, 200, 300, 400, 500, 600, 700, 800, 0, 0])
        );
        let cases = [
            (Compression::SNAPPY, snappy(&short), "Snappy stream"),
            (
                Compression::ZSTD(ZstdLevel::default()),
                zstd::bulk::compress(&short, 1).unwrap(),
                "zstd frame",
            ),
            (
                Compression::GZIP(GzipLevel::default()),
                gzip(&short),
                "GZIP stream",
            ),
            (
                Compression::BROTLI(BrotliLevel::default()),
                brotli(&short),
                "Brotli stream",
            ),
            (Compression::LZ4, lz4_frame(&short), "LZ4 stream"),
        ];
        for (codec, bytes, what) in cases {
            assert_eq!(
                verdict(codec, bytes),
                Err(format!(
                    "damaged page at byte 4: its {what} holds 64 bytes, its header gives 80"
                )),
                "{codec}"
            );
        }
        // The same pages whole pass.
        let whole = plain_ints(10);
        assert_eq!(verdict(Compression::SNAPPY, snappy(&whole)), Ok(()));
        assert_eq!(
            verdict(Compression::GZIP(GzipLevel::default()), gzip(&whole)),
            Ok(())
        );
        assert_eq!(verdict(Compression::LZ4, lz4_frame(&whole)), Ok(()));
    }

    /// A megabyte of zeros behind a header of 80 bytes: inflated no further than 81.
    #[test]
    fn an_inflating_stream_stops_at_its_header_size() {
        let bomb = vec![0u8; 1 << 20];
        let cases = [
            (Compression::GZIP(GzipLevel::default()), gzip(&bomb), "GZIP"),
            (
                Compression::BROTLI(BrotliLevel::default()),
                brotli(&bomb),
                "Brotli",
            ),
            (Compression::LZ4, lz4_frame(&bomb), "LZ4"),
        ];
        for (codec, bytes, name) in cases {
            assert!(bytes.len() < 16 << 10, "{name}: {}", bytes.len());
            assert_eq!(
                verdict(codec, bytes),
                Err(format!(
                    "damaged page at byte 4: its {name} stream holds more than the 80 bytes its header gives"
                ))
            );
        }
    }

    /// A Snappy stream declaring 2^31-1 bytes, and headers claiming them: refused before
    /// anything is allocated for them.
    #[test]
    fn a_huge_declared_length_is_refused_before_it_is_allocated() {
        let mut bytes = Vec::new();
        crate::varint::put_varint(&mut bytes, i32::MAX as u64);
        bytes.extend_from_slice(&[0x1c, 1, 2, 3, 4, 5, 6, 7, 8]); // a literal of 8 bytes
        assert_eq!(
            verdict(Compression::SNAPPY, bytes.clone()),
            Err("damaged page at byte 4: its Snappy stream holds 2147483647 bytes, its header gives 80".into())
        );
        let huge = i32::MAX as usize;
        let (file, chunk) = int64_file(Compression::SNAPPY, page(bytes.clone(), huge, 10));
        assert_eq!(
            check_chunk(&file, &chunk).map(|_| ()),
            Err("damaged page at byte 4: a Snappy stream of 14 bytes cannot hold the 2147483647 its header gives".into())
        );
        let (file, chunk) = int64_file(Compression::LZ4_RAW, page(bytes, huge, 10));
        assert_eq!(
            check_chunk(&file, &chunk).map(|_| ()),
            Err("damaged page at byte 4: an LZ4 stream of 14 bytes cannot hold the 2147483647 its header gives".into())
        );
    }

    /// Files pyarrow wrote with page checksums (`scripts/golden/zstd_pages.py`) pass; a
    /// byte flipped in a page's stored bytes fails its checksum.
    #[test]
    fn a_page_checksum_is_verified() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/golden/zstd_pages");
        for name in ["v1_crc", "v2_crc"] {
            let clean = std::fs::read(dir.join(format!("{name}.parquet"))).unwrap();
            let file = |bytes: &[u8]| {
                let mut f = tempfile::tempfile().unwrap();
                f.write_all(bytes).unwrap();
                f
            };
            let reader = SerializedFileReader::new(file(&clean)).unwrap();
            for chunk in reader.metadata().row_group(0).columns() {
                assert!(check_chunk(&file(&clean), chunk).is_ok(), "{name}");
                let (start, len) = chunk.byte_range();
                let mut damaged = clean.clone();
                damaged[(start + len - 1) as usize] ^= 0x01;
                let err = check_chunk(&file(&damaged), chunk).unwrap_err();
                assert!(err.starts_with("damaged page at byte "), "{name}: {err}");
                assert!(err.contains(": its checksum is "), "{name}: {err}");
            }
        }
    }

    /// Files parquet-rs writes in every codec, pages v1 and v2, with nulls (levels before a
    /// v2 page's compressed values): every page passes.
    #[test]
    fn sound_pages_of_every_codec_pass() {
        use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::{WriterProperties, WriterVersion};
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let ids: Int64Array = (0..5_000).map(|i| (i % 9 != 0).then_some(i * 7)).collect();
        let text: StringArray = (0..5_000)
            .map(|i| (i % 5 != 0).then(|| format!("text {}", i % 300)))
            .collect();
        let batch = RecordBatch::try_from_iter([
            ("id", std::sync::Arc::new(ids) as ArrayRef),
            ("t", std::sync::Arc::new(text)),
        ])
        .unwrap();
        let codecs = [
            Compression::UNCOMPRESSED,
            Compression::SNAPPY,
            Compression::GZIP(GzipLevel::default()),
            Compression::BROTLI(BrotliLevel::default()),
            Compression::LZ4,
            Compression::LZ4_RAW,
            Compression::ZSTD(ZstdLevel::default()),
        ];
        for codec in codecs {
            for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
                let props = WriterProperties::builder()
                    .set_compression(codec)
                    .set_writer_version(version)
                    .set_data_page_row_count_limit(700)
                    .set_write_batch_size(100)
                    .build();
                let file = tempfile::tempfile().unwrap();
                let mut w =
                    ArrowWriter::try_new(file.try_clone().unwrap(), batch.schema(), Some(props))
                        .unwrap();
                w.write(&batch).unwrap();
                w.close().unwrap();
                let reader = SerializedFileReader::new(file.try_clone().unwrap()).unwrap();
                for chunk in reader.metadata().row_group(0).columns() {
                    let pages = check_chunk(&file, chunk).unwrap_or_else(|e| {
                        panic!("{codec} {version:?}: {e}");
                    });
                    assert!(pages.len() > 1, "{codec}");
                }
            }
        }
    }
}
