//! A zstd column chunk rewritten as an uncompressed one: each page's bytes decompressed and its
//! header written again with the new size, for the decoder to read without a codec.
//!
//! parquet-rs makes a codec for every column chunk it reads, and its zstd codec creates a
//! compression and a decompression context each time; creating one asks the CPU for its
//! features (`cpuid`), which traps to the hypervisor on a virtual machine. For a large row
//! group that is nothing; for a small file's, it is a good part of the work (BENCHMARKS.md,
//! "Many files"). Here one decompression context per thread serves every chunk.
//!
//! The pages are walked with the strict reader of module `header` and checked as
//! [`super::check_chunk`] checks them, so a page that would not pass is never decompressed:
//! the chunk is then left as it is, and the usual checks and the decoder say what is wrong
//! with it. A rewritten chunk has passed them, and is not checked again.

use super::body;
use super::header::{FieldAt, Page};
use super::thrift::Bytes;
use super::{checked_range, PageValues};
use crate::varint::{put_varint, zigzag};
use parquet::file::metadata::ColumnChunkMetaData;
use std::cell::RefCell;
use std::io::Cursor;

thread_local! {
    /// This thread's zstd decompression context, made on first use.
    static ZSTD: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Field id of a page header's `compressed_page_size`.
const COMPRESSED_SIZE: i16 = 3;
/// Field id of a page header's `crc`: a checksum of the compressed bytes, dropped with them.
const CRC: i16 = 4;

/// A column chunk rewritten uncompressed ([`decompress_chunk`]).
pub(crate) struct Decompressed {
    /// The pages, from the chunk's first on (which stays first, at 0).
    pub bytes: Vec<u8>,
    /// Where the page that the footer's `data_page_offset` names starts in `bytes`.
    pub first_data: u64,
}

/// The zstd column chunk `c` (its bytes `chunk`, from its first page on) rewritten
/// uncompressed, using at most `room` bytes (less what it takes on return). `None` when a
/// page does not pass the checks, does not decompress to the size its header gives, the
/// footer's first data page is not where a page starts, or the pages need more than `room`.
pub(crate) fn decompress_chunk(
    chunk: &[u8],
    c: &ColumnChunkMetaData,
    room: &mut u64,
) -> Option<Decompressed> {
    let (start, len) = checked_range(c).ok()?;
    let data_page = u64::try_from(c.data_page_offset()).ok()?;
    if len != chunk.len() as u64 {
        return None;
    }
    let end = start.checked_add(len)?;
    let mut h = Bytes {
        reader: Cursor::new(chunk),
        pos: start,
        end,
    };
    let mut out = Vec::with_capacity(chunk.len().saturating_mul(4).min(*room as usize));
    let mut first_data = None;
    let mut values = PageValues::new(c);
    ZSTD.with_borrow_mut(|zstd| {
        while h.pos < end {
            let at = h.pos;
            let page = h.page_header().ok()?;
            values.check(&page, at, h.pos, end).ok()?;
            let body_at = usize::try_from(h.pos - start).ok()?;
            let stored = usize::try_from(page.compressed).ok()?;
            let body = chunk.get(body_at..body_at.checked_add(stored)?)?;
            body::check_body(&page, body, c.compression()).ok()?;
            h.skip(stored as u64).ok()?;
            let new_at = out.len() as u64;
            if at == data_page {
                first_data = Some(new_at);
            }
            page_body(&page, body, chunk, start, &mut out, room, zstd)?;
        }
        Some(())
    })?;
    Some(Decompressed {
        bytes: out,
        first_data: first_data?,
    })
}

/// Appends page `page` rewritten: its header with the new size, then its bytes, decompressed
/// where the codec applies (after a data page v2's levels), as parquet-rs decompresses them.
fn page_body(
    page: &Page,
    body: &[u8],
    chunk: &[u8],
    start: u64,
    out: &mut Vec<u8>,
    room: &mut u64,
    zstd: &mut Option<zstd::bulk::Decompressor<'static>>,
) -> Option<()> {
    let levels = usize::try_from(page.levels).ok()?;
    let uncompressed = usize::try_from(page.uncompressed).ok()?;
    if !page.codec_applies {
        *room = room.checked_sub(body.len() as u64)?;
        write_header(out, page, chunk, start, i32::try_from(body.len()).ok()?)?;
        out.extend_from_slice(body);
        return Some(());
    }
    // Levels that do not fit are parquet-rs's to report.
    if levels > body.len() || levels > uncompressed {
        return None;
    }
    *room = room.checked_sub(uncompressed as u64)?;
    write_header(out, page, chunk, start, i32::try_from(uncompressed).ok()?)?;
    out.reserve(uncompressed);
    let first = out.len();
    out.extend_from_slice(&body[..levels]);
    // As parquet-rs: a page with nothing after its levels (no values) is not decompressed,
    // and keeps only its levels.
    if uncompressed == levels {
        return Some(());
    }
    let zstd = match zstd {
        Some(z) => z,
        None => zstd.insert(zstd::bulk::Decompressor::new().ok()?),
    };
    let mut cursor = Cursor::new(&mut *out);
    cursor.set_position((first + levels) as u64);
    zstd.decompress_to_buffer(&body[levels..], &mut cursor)
        .ok()?;
    (out.len() - first == uncompressed).then_some(())
}

/// Writes `page`'s header again in Thrift's compact protocol: its fields as read, but
/// `compressed_page_size` set to `size` and the checksum left out.
fn write_header(out: &mut Vec<u8>, page: &Page, chunk: &[u8], start: u64, size: i32) -> Option<()> {
    let mut last = 0i16;
    for FieldAt { id, ty, value } in &page.fields {
        if *id == CRC {
            continue;
        }
        match id.checked_sub(last) {
            Some(delta @ 1..=15) => out.push(((delta as u8) << 4) | ty),
            _ => {
                out.push(*ty);
                put_varint(out, zigzag(i64::from(*id)));
            }
        }
        if *id == COMPRESSED_SIZE {
            put_varint(out, zigzag(i64::from(size)));
        } else {
            let from = usize::try_from(value.start - start).ok()?;
            let to = usize::try_from(value.end - start).ok()?;
            out.extend_from_slice(chunk.get(from..to)?);
        }
        last = *id;
    }
    out.push(0);
    Some(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::SchemaDescriptor;

    const TEXT: &[u8] = b"the same forty bytes, the same forty byt";

    /// A data page (v1) of 5 values holding `TEXT` compressed, its header with its checksum
    /// (field 4) between the sizes and the data page header.
    fn page_with_crc() -> Vec<u8> {
        page_of(TEXT)
    }

    /// [`page_with_crc`] holding `text`.
    fn page_of(text: &[u8]) -> Vec<u8> {
        page_summed(text, None)
    }

    /// [`page_of`] with the checksum `sum` in its header, else the right one.
    fn page_summed(text: &[u8], sum: Option<u32>) -> Vec<u8> {
        let body = zstd::bulk::compress(text, 3).unwrap();
        let mut page = vec![0x15, 0x00, 0x15];
        put_varint(&mut page, zigzag(text.len() as i64));
        page.push(0x15);
        put_varint(&mut page, zigzag(body.len() as i64));
        let mut crc = flate2::Crc::new();
        crc.update(&body);
        page.push(0x15);
        put_varint(
            &mut page,
            zigzag(i64::from(sum.unwrap_or(crc.sum()) as i32)),
        );
        page.extend_from_slice(&[0x1c, 0x15, 10, 0x15, 0, 0x15, 6, 0x15, 6, 0, 0]);
        page.extend_from_slice(&body);
        page
    }

    #[test]
    fn a_page_of_no_bytes_keeps_none() {
        // As parquet-rs: nothing to decompress, so the page's (compressed) bytes are dropped.
        let page = page_of(b"");
        let d = decompress_chunk(&page, &chunk(&page, 4), &mut 1000).unwrap();
        let mut want = vec![0x15, 0x00, 0x15, 0, 0x15, 0, 0x2c];
        want.extend_from_slice(&[0x15, 10, 0x15, 0, 0x15, 6, 0x15, 6, 0, 0]);
        assert_eq!(d.bytes, want);
    }

    /// The footer's view of `page` as a chunk at byte 4 of 5 values, its first data page at
    /// byte `data_page`.
    fn chunk(page: &[u8], data_page: i64) -> ColumnChunkMetaData {
        let t = parse_message_type("message m { required binary id (UTF8); }").unwrap();
        let schema = SchemaDescriptor::new(std::sync::Arc::new(t));
        ColumnChunkMetaData::builder(schema.column(0))
            .set_dictionary_page_offset(Some(4))
            .set_data_page_offset(data_page)
            .set_total_compressed_size(page.len() as i64)
            .set_num_values(5)
            .build()
            .unwrap()
    }

    #[test]
    fn a_page_is_written_again_decompressed_without_its_checksum() {
        let page = page_with_crc();
        let mut room = 1000;
        let d = decompress_chunk(&page, &chunk(&page, 4), &mut room).unwrap();
        // Field 3 now gives the 40 bytes; field 5 follows field 3, two ids on.
        let mut want = vec![0x15, 0x00, 0x15, 80, 0x15, 80, 0x2c];
        want.extend_from_slice(&[0x15, 10, 0x15, 0, 0x15, 6, 0x15, 6, 0, 0]);
        want.extend_from_slice(TEXT);
        assert_eq!(d.bytes, want);
        assert_eq!(d.first_data, 0);
        assert_eq!(room, 1000 - TEXT.len() as u64);
        // The rewritten page passes the checks the decoder's input gets.
        let mut h = Bytes {
            reader: Cursor::new(&d.bytes[..]),
            pos: 0,
            end: d.bytes.len() as u64,
        };
        let p = h.page_header().ok().unwrap();
        assert_eq!((p.compressed, p.uncompressed), (40, 40));
    }

    #[test]
    fn a_page_that_does_not_decompress_or_fit_leaves_the_chunk_alone() {
        let page = page_with_crc();
        let c = chunk(&page, 4);
        // Not room for the 40 bytes.
        assert!(decompress_chunk(&page, &c, &mut 39).is_none());
        // The footer's first data page is not where a page starts.
        assert!(decompress_chunk(&page, &chunk(&page, 5), &mut 1000).is_none());
        // More values than the footer gives the chunk.
        let few = c.clone().into_builder().set_num_values(4).build().unwrap();
        assert!(decompress_chunk(&page, &few, &mut 1000).is_none());
        // Damaged compressed bytes.
        let mut damaged = page.clone();
        let n = damaged.len();
        for b in &mut damaged[n - 8..] {
            *b ^= 0x5a;
        }
        assert!(decompress_chunk(&damaged, &c, &mut 1000).is_none());
        // A page that decompresses, but not with the bytes its checksum was taken of.
        let wrong = page_summed(TEXT, Some(7));
        assert!(decompress_chunk(&wrong, &chunk(&wrong, 4), &mut 1000).is_none());
        // A header cut short.
        let short = c
            .clone()
            .into_builder()
            .set_total_compressed_size(10)
            .build()
            .unwrap();
        assert!(decompress_chunk(&page[..10], &short, &mut 1000).is_none());
    }
}
