//! Two runs opened for a comparison, checked as far as no row is needed ([`Pair`]), which
//! both the aligned path and the partitioned join start from.

use crate::comparison::CompareOptions;
use crate::error::{CompareError, ScoreColumns};
use crate::runs;
use evalscore_error::Error;

/// Two runs opened and checked as far as no row is needed: their footers and schemas, the
/// key, group and cluster columns, and the score columns they have in common.
#[derive(Debug)]
pub(crate) struct Pair {
    pub base: runs::Run,
    pub new: runs::Run,
    /// The common score columns: (index in base's, index in new's), in base's order.
    pub common: Vec<(usize, usize)>,
}

/// Opens `o.base` and `o.new` (see [`Pair`]).
pub(crate) fn open_pair(o: &CompareOptions) -> Result<Pair, Error> {
    let (group_by, cluster) = (o.group_by.as_deref(), o.cluster.as_deref());
    let base = runs::open(&o.base, "base", &o.key, group_by, cluster)?;
    let new = runs::open(&o.new, "new", &o.key, group_by, cluster)?;
    for (option, name, b, n) in [
        ("--group-by", &o.group_by, &base.group, &new.group),
        ("--cluster", &o.cluster, &base.cluster, &new.cluster),
    ] {
        if let Some(name) = name {
            if b.is_none() && n.is_none() {
                return Err(CompareError::NeitherHasColumn {
                    option,
                    name: name.clone(),
                    base: base.path.clone(),
                    new: new.path.clone(),
                }
                .into());
            }
        }
    }
    let common: Vec<(usize, usize)> = base
        .scores
        .iter()
        .enumerate()
        .filter_map(|(i, name)| new.scores.iter().position(|n| n == name).map(|j| (i, j)))
        .collect();
    if common.is_empty() {
        return Err(CompareError::NoCommonColumn {
            base: base.path.clone(),
            new: new.path.clone(),
            columns: ScoreColumns::new(&base.scores, &new.scores),
        }
        .into());
    }
    Ok(Pair { base, new, common })
}
