//! The merge policy: which checkpoint pairs to rewrite.
//!
//! Deleted rows stay in a data file until its pair is merged. A pair's
//! *live share* is `(rows - deleted) / rows`. Walking the active pairs in
//! timestamp order (`min_ts`, then id), every maximal run of *adjacent*
//! pairs whose live share is below the threshold becomes one merge group,
//! cut so that the estimated live bytes of a group stay within one data
//! file. A group of one is allowed: rewriting a mostly-deleted pair alone
//! still returns its dead bytes. A group whose pairs hold no live row
//! produces no target at all.
//!
//! ```text
//!  live share   0.9   0.3   0.1   0.2   0.8   0.05
//!  pairs       [ A ] [ B ] [ C ] [ D ] [ E ] [ F ]
//!  groups             └── B+C+D ──┘           └F┘     (threshold 0.5)
//! ```
//!
//! Only adjacent pairs are merged so that a target's timestamp range stays
//! close to its sources' and does not widen the set of delta files a later
//! delete is written to.

use crate::checkpoint::pair::PairMeta;
use crate::format::HEADER_LEN;

/// Groups of pair ids to merge, each group into one new pair.
pub(crate) fn plan(active: &[PairMeta], threshold: f64, max_bytes: u64) -> Vec<Vec<u64>> {
    let mut sorted: Vec<&PairMeta> = active.iter().collect();
    sorted.sort_by_key(|m| (m.min_ts, m.id));
    let mut groups = Vec::new();
    let mut cur: Vec<u64> = Vec::new();
    let mut cur_bytes = 0.0;
    for m in sorted {
        let share = m.live_share();
        if share < threshold {
            let est = m.data_len.saturating_sub(HEADER_LEN) as f64 * share;
            if !cur.is_empty() && cur_bytes + est > max_bytes as f64 {
                groups.push(std::mem::take(&mut cur));
                cur_bytes = 0.0;
            }
            cur.push(m.id);
            cur_bytes += est;
        } else if !cur.is_empty() {
            groups.push(std::mem::take(&mut cur));
            cur_bytes = 0.0;
        }
    }
    if !cur.is_empty() {
        groups.push(cur);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(id: u64, rows: u64, deleted: u64) -> PairMeta {
        PairMeta {
            id,
            min_ts: id * 10,
            max_ts: id * 10 + 9,
            rows,
            deleted,
            data_len: HEADER_LEN + rows * 100,
            delta_len: HEADER_LEN,
        }
    }

    #[test]
    fn merges_runs_of_sparse_adjacent_pairs() {
        let active =
            [pair(1, 10, 1), pair(2, 10, 7), pair(3, 10, 9), pair(4, 10, 8), pair(5, 10, 2), pair(6, 20, 19)];
        assert_eq!(plan(&active, 0.5, 1 << 20), vec![vec![2, 3, 4], vec![6]]);
        // A size cap splits a run.
        assert_eq!(plan(&active, 0.5, 350), vec![vec![2], vec![3, 4], vec![6]]);
        assert!(plan(&[pair(1, 10, 0)], 0.5, 1 << 20).is_empty());
    }
}
