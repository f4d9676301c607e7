//! The differences `new − base` of a comparison's pairs ([`crate::aligned`],
//! [`crate::hash_pairs`]), kept in order for its second pass ([`second_pass`]), with each
//! pair's group and cluster, [`Packed`] (0/1 scores' differences in one byte each); blocks
//! stay in memory up to a budget, the rest go to a temporary file, written once and read
//! back once.

use crate::error::CompareError;
use crate::packed::Packed;
use crate::spill::{Record, Records, SpillDir, Store, NONE};
use crate::tally::{Groups, SecondPass};

/// A stretch of pairs: per compared column its differences, and per pair its group and its
/// cluster id when the comparison has them (else empty).
#[derive(Debug, Default)]
pub(crate) struct Block {
    pub d: Vec<Packed>,
    pub group: Vec<u32>,
    pub cluster: Vec<u32>,
}

impl Block {
    fn bytes(&self) -> usize {
        self.d.iter().map(Packed::bytes).sum::<usize>()
            + (self.group.len() + self.cluster.len()) * 4
    }

    fn write(&self, store: &mut Store) -> Result<(), CompareError> {
        let mut rec = Record::default();
        rec.u64(self.d.len() as u64);
        for p in &self.d {
            match p {
                Packed::Units(v) => {
                    rec.u32(0);
                    rec.bytes(&v.iter().map(|x| x.to_le_bytes()[0]).collect::<Vec<u8>>());
                }
                Packed::Floats(v) => {
                    rec.u32(1);
                    rec.bytes(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
                }
            }
        }
        for ids in [&self.group, &self.cluster] {
            rec.bytes(
                &ids.iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
            );
        }
        store.write(&rec.0)
    }

    fn read(r: &mut Records<'_>) -> Result<Option<Block>, CompareError> {
        let Some(width) = r.first_u64()? else {
            return Ok(None);
        };
        let mut b = Block::default();
        let mut raw = Vec::new();
        for _ in 0..width {
            let tag = r.u32()?;
            raw.clear();
            r.bytes(&mut raw)?;
            b.d.push(if tag == 0 {
                Packed::Units(raw.iter().map(|x| i8::from_le_bytes([*x])).collect())
            } else {
                Packed::Floats(
                    raw.chunks_exact(8)
                        .map(|x| f64::from_le_bytes(x.try_into().unwrap_or_default()))
                        .collect(),
                )
            });
        }
        for ids in [&mut b.group, &mut b.cluster] {
            raw.clear();
            r.bytes(&mut raw)?;
            ids.extend(
                raw.chunks_exact(4)
                    .map(|x| u32::from_le_bytes(x.try_into().unwrap_or_default())),
            );
        }
        Ok(Some(b))
    }
}

/// The blocks of a comparison, in order.
#[derive(Debug)]
pub(crate) struct Diffs {
    /// Bytes kept in memory at most.
    budget: usize,
    kept: Vec<Block>,
    kept_bytes: usize,
    spill: Option<(SpillDir, Store)>,
}

impl Diffs {
    pub fn new(budget: usize) -> Diffs {
        Diffs {
            budget,
            kept: Vec::new(),
            kept_bytes: 0,
            spill: None,
        }
    }

    /// The next block: in memory while the budget lasts, then in the temporary file.
    pub fn push(&mut self, block: Block) -> Result<(), CompareError> {
        let bytes = block.bytes();
        if self.spill.is_none() && self.kept_bytes + bytes <= self.budget {
            self.kept_bytes += bytes;
            self.kept.push(block);
            return Ok(());
        }
        if self.spill.is_none() {
            let dir = SpillDir::new(true)?;
            let store = dir.store("differences")?;
            self.spill = Some((dir, store));
        }
        match &mut self.spill {
            Some((_, store)) => block.write(store),
            None => Ok(()),
        }
    }

    /// Calls `f` with every block, in order.
    pub fn for_each(&mut self, mut f: impl FnMut(&Block)) -> Result<(), CompareError> {
        for b in &self.kept {
            f(b);
        }
        if let Some((_, store)) = &mut self.spill {
            store.finish()?;
            let mut r = store.reader()?;
            while let Some(b) = Block::read(&mut r)? {
                f(&b);
            }
        }
        Ok(())
    }
}

/// The second pass over the blocks of `diffs`, in order: each pair's difference counted
/// overall and in its group's slot (with its cluster, when `clustered`).
pub(crate) fn second_pass(
    diffs: &mut Diffs,
    second: &mut SecondPass,
    groups: &Groups,
    clustered: bool,
) -> Result<(), CompareError> {
    diffs.for_each(|block| {
        for (col, d) in block.d.iter().enumerate() {
            if block.group.is_empty() && !clustered {
                match d {
                    Packed::Units(v) => second.overall(col, v.iter().map(|x| Packed::unit(*x))),
                    Packed::Floats(v) => second.overall(col, v.iter().copied()),
                }
                continue;
            }
            d.for_each(|r, x| {
                let g = block.group.get(r).copied().unwrap_or(NONE);
                let (at, n_at) = groups.slots(g);
                let c = block.cluster.get(r).copied().unwrap_or(0);
                second.diff(col, &at[..n_at], x, c);
            });
        }
    })
}
