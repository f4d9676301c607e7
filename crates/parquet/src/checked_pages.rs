//! parquet-rs's page readers with every page checked ([`check_page`]) before it is given:
//! [`CheckedPages`] in front of any page reader, and [`CheckedRowGroup`], one row group whose
//! columns parquet-rs's Arrow reader reads so (through
//! `ParquetRecordBatchReader::try_new_with_row_groups`).

use crate::data_pages::{check_page, PageRules};
use parquet::arrow::arrow_reader::RowGroups;
use parquet::column::page::{Page, PageIterator, PageMetadata, PageReader};
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::reader::ChunkReader;
use parquet::file::serialized_reader::SerializedPageReader;
use std::sync::Arc;

/// A page reader whose pages are checked ([`check_page`]) before they are given.
pub struct CheckedPages {
    inner: Box<dyn PageReader>,
    rules: PageRules,
}

impl CheckedPages {
    /// `inner`'s pages, of a column of rules `rules`.
    pub fn new(inner: Box<dyn PageReader>, rules: PageRules) -> Self {
        Self { inner, rules }
    }
}

impl Iterator for CheckedPages {
    type Item = ParquetResult<Page>;

    fn next(&mut self) -> Option<Self::Item> {
        self.get_next_page().transpose()
    }
}

impl PageReader for CheckedPages {
    fn get_next_page(&mut self) -> ParquetResult<Option<Page>> {
        let page = self.inner.get_next_page()?;
        if let Some(p) = &page {
            check_page(p, &self.rules).map_err(ParquetError::General)?;
        }
        Ok(page)
    }

    fn peek_next_page(&mut self) -> ParquetResult<Option<PageMetadata>> {
        self.inner.peek_next_page()
    }

    fn skip_next_page(&mut self) -> ParquetResult<()> {
        self.inner.skip_next_page()
    }

    fn at_record_boundary(&mut self) -> ParquetResult<bool> {
        self.inner.at_record_boundary()
    }
}

/// Row group `index` of `meta`, read from `reader` with every data page checked: what
/// parquet-rs's `ParquetRecordBatchReader::try_new_with_row_groups` decodes.
pub struct CheckedRowGroup<R> {
    reader: Arc<R>,
    meta: Arc<ParquetMetaData>,
    index: usize,
}

impl<R> CheckedRowGroup<R> {
    pub fn new(reader: R, meta: Arc<ParquetMetaData>, index: usize) -> Self {
        Self {
            reader: Arc::new(reader),
            meta,
            index,
        }
    }
}

impl<R: ChunkReader + 'static> RowGroups for CheckedRowGroup<R> {
    fn num_rows(&self) -> usize {
        self.meta
            .row_groups()
            .get(self.index)
            .map_or(0, |rg| usize::try_from(rg.num_rows()).unwrap_or(0))
    }

    fn column_chunks(&self, i: usize) -> ParquetResult<Box<dyn PageIterator>> {
        let chunk = self
            .meta
            .row_groups()
            .get(self.index)
            .and_then(|rg| rg.columns().get(i))
            .ok_or_else(|| ParquetError::General(format!("no column {i} in the row group")))?;
        let pages =
            SerializedPageReader::new(Arc::clone(&self.reader), chunk, self.num_rows(), None)?;
        let rules = PageRules::of(self.meta.file_metadata().schema_descr(), i);
        let checked: Box<dyn PageReader> = Box::new(CheckedPages::new(Box::new(pages), rules));
        Ok(Box::new(OneReader(Some(checked))))
    }

    fn row_groups(&self) -> Box<dyn Iterator<Item = &RowGroupMetaData> + '_> {
        Box::new(self.meta.row_groups().get(self.index).into_iter())
    }

    fn metadata(&self) -> &ParquetMetaData {
        &self.meta
    }
}

/// The page readers of one column over the one row group: a single one.
struct OneReader(Option<Box<dyn PageReader>>);

impl Iterator for OneReader {
    type Item = ParquetResult<Box<dyn PageReader>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.take().map(Ok)
    }
}

impl PageIterator for OneReader {}
