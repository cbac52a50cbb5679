//! Sorting rows by their sort keys: the order of a Sort operator and of
//! each window's partitions.
//!
//! Keys of one or two integer or boolean columns (ids, counts, partition
//! numbers: the common case) are packed into fixed-width words that
//! compare as the keys do, NULL placement and DESC included, and sorted
//! inline with the row's number as the last word, so the sort touches no
//! heap memory per comparison. Any other keys are sorted through
//! [`compare_keys`]. Both sorts are stable.
//!
//! The keys of all rows sit in blocks of many rows each ([`KeyRows`]), not
//! one vector per row: a sort of a million rows would otherwise allocate,
//! fault in and free a million small blocks.
//!
//! A sort runs in runs of [`SORT_RUN`] entries, then merges neighbouring
//! runs bottom up between the entries and one scratch vector, reading the
//! deadline between runs and during merges: one sort of tens of millions
//! of rows takes seconds, and a comparison sort cannot be stopped
//! part-way. Packed entries up to [`IN_PLACE_MAX`] are sorted in one
//! piece, in place: that takes a fraction of a second and no scratch.

use super::query::compare_keys;
use super::ExecCtx;
use crate::error::Result;
use crate::planner::plan::SortKey;
use centum_types::Value;
use std::cmp::Ordering;

/// One packed key column: its NULL rank (0 NULLs first, 1 a value, 2
/// NULLs last), then the value as an unsigned word that orders as the
/// value does.
type Word = (u8, u64);

/// `N` packed keys, then the row's number (which keeps the sort stable):
/// 24 bytes for one key, 40 for two.
type Packed<const N: usize> = ([Word; N], u32);

/// Bytes one entry of a sort takes at most, for the statement's memory
/// budget.
pub(crate) const ENTRY_BYTES: usize = std::mem::size_of::<Packed<2>>();

/// The values of many rows, `width` a row, in blocks of [`BLOCK_ROWS`]
/// rows: one allocation per block instead of one per row, and no block is
/// ever copied to grow (one vector doubling to hold a million rows would
/// copy them, and fault in twice their memory). Sort keys are kept this
/// way, and so are a window's input rows.
pub(crate) struct KeyRows {
    width: usize,
    /// Rows held (a width of 0 holds rows too: a window without keys).
    rows: usize,
    blocks: Vec<Vec<Value>>,
}

/// Rows a [`KeyRows`] block holds (a power of two).
const BLOCK_ROWS: usize = 1 << 14;

impl KeyRows {
    /// Room for `rows` rows of `width` keys (up to a block's).
    pub(crate) fn with_capacity(width: usize, rows: usize) -> KeyRows {
        let first = Vec::with_capacity(width * rows.min(BLOCK_ROWS));
        KeyRows { width, rows: 0, blocks: vec![first] }
    }

    /// The block the next row goes into.
    fn tail(&mut self) -> &mut Vec<Value> {
        if self.rows > 0 && self.rows.is_multiple_of(BLOCK_ROWS) {
            self.blocks.push(Vec::with_capacity(self.width * BLOCK_ROWS));
        }
        let last = self.blocks.len() - 1;
        &mut self.blocks[last]
    }

    /// Appends one row's keys (exactly `width` of them).
    pub(crate) fn push(&mut self, keys: impl IntoIterator<Item = Result<Value>>) -> Result<()> {
        let width = self.width;
        let block = self.tail();
        let before = block.len();
        for k in keys {
            match k {
                Ok(v) => block.push(v),
                Err(e) => {
                    block.truncate(before);
                    return Err(e);
                }
            }
        }
        debug_assert_eq!(block.len(), before + width);
        self.rows += 1;
        Ok(())
    }

    /// Appends one row (exactly `width` values), moving its values.
    pub(crate) fn push_row(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.width);
        self.tail().extend(row);
        self.rows += 1;
    }

    /// Rows held.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// Values a row.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Where row `i`'s values are: its block and their range in it.
    #[inline]
    fn at(&self, i: usize) -> (usize, std::ops::Range<usize>) {
        let from = (i % BLOCK_ROWS) * self.width;
        (i / BLOCK_ROWS, from..from + self.width)
    }

    /// Row `i`'s values, moved out (NULLs are left behind).
    pub(crate) fn take_row(&mut self, i: usize) -> impl Iterator<Item = Value> + '_ {
        let (b, range) = self.at(i);
        self.blocks[b][range].iter_mut().map(|v| std::mem::replace(v, Value::Null))
    }

    /// Asks the CPU to start loading row `i` (see `centum_engine::prefetch`).
    #[inline]
    pub(crate) fn prefetch(&self, i: usize) {
        let (b, range) = self.at(i);
        if let Some(v) = self.blocks.get(b).and_then(|block| block.get(range.start)) {
            centum_engine::prefetch(v as *const Value as *const u8);
        }
    }

    /// The keys of row `i`.
    #[inline]
    pub(crate) fn row(&self, i: usize) -> &[Value] {
        let (b, range) = self.at(i);
        &self.blocks[b][range]
    }

    /// The rows moved into `order` (each row named once).
    pub(crate) fn permuted(mut self, order: &[usize]) -> KeyRows {
        let mut out = KeyRows::with_capacity(self.width, order.len());
        for &i in order {
            let (b, range) = self.at(i);
            out.tail().extend(self.blocks[b][range].iter_mut().map(|v| std::mem::replace(v, Value::Null)));
            out.rows += 1;
        }
        out
    }
}

/// The row numbers of `keys` in sorted order (ties in input order).
pub(crate) fn sort_order(keys: &KeyRows, spec: &[SortKey], cx: &ExecCtx) -> Result<Vec<usize>> {
    match spec.len() {
        1 => {
            if let Some(packed) = pack::<1>(keys, spec) {
                return sort_packed(packed, cx);
            }
        }
        2 => {
            if let Some(packed) = pack::<2>(keys, spec) {
                return sort_packed(packed, cx);
            }
        }
        _ => {}
    }
    let order: Vec<usize> = (0..keys.len()).collect();
    sort_runs(order, &|a: &usize, b: &usize| compare_keys(keys.row(*a), keys.row(*b), spec), true, cx)
}

/// The row numbers of packed entries in sorted order. Every entry ends
/// with its row number, so no two are equal and an unstable sort gives
/// the stable order.
fn sort_packed<const N: usize>(packed: Vec<Packed<N>>, cx: &ExecCtx) -> Result<Vec<usize>> {
    let sorted = sort_runs(packed, &|a: &Packed<N>, b: &Packed<N>| a.cmp(b), false, cx)?;
    Ok(sorted.into_iter().map(|(_, i)| i as usize).collect())
}

/// The kind of values a packed key column holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unknown,
    Integer,
    Boolean,
}

/// `keys` packed, or `None` when a column is not all integers or all
/// booleans (NULLs aside), or there are not `N` columns, or too many rows.
fn pack<const N: usize>(keys: &KeyRows, spec: &[SortKey]) -> Option<Vec<Packed<N>>> {
    if spec.len() != N || u32::try_from(keys.len()).is_err() {
        return None;
    }
    let mut kinds = [Kind::Unknown; N];
    let mut out = Vec::with_capacity(keys.len());
    for i in 0..keys.len() {
        out.push((pack_row(keys.row(i), spec, &mut kinds)?, i as u32));
    }
    Some(out)
}

/// One row's keys packed into words, given the kinds the rows before it
/// had (which it may set); `None` when a key is not an integer or a
/// boolean, or not of its column's kind.
fn pack_row<const N: usize>(row: &[Value], spec: &[SortKey], kinds: &mut [Kind; N]) -> Option<[Word; N]> {
    let mut words = [(0u8, 0u64); N];
    for (j, (v, k)) in row.iter().zip(spec).enumerate() {
        let (kind, n) = match v {
            Value::Null => {
                words[j] = (if k.nulls_first { 0 } else { 2 }, 0);
                continue;
            }
            Value::SmallInt(x) => (Kind::Integer, i64::from(*x)),
            Value::Integer(x) => (Kind::Integer, i64::from(*x)),
            Value::BigInt(x) => (Kind::Integer, *x),
            Value::Boolean(b) => (Kind::Boolean, i64::from(*b)),
            _ => return None,
        };
        if kinds[j] != kind {
            if kinds[j] != Kind::Unknown {
                return None;
            }
            kinds[j] = kind;
        }
        // Flipping the sign bit orders two's complement as unsigned.
        let mut m = (n as u64) ^ (1 << 63);
        if k.desc {
            m = !m;
        }
        words[j] = (1, m);
    }
    Some(words)
}

/// Sorted packed keys of many rows: entry `p` holds the keys of the row at
/// sorted position `p` and that row's number. Two rows' keys are equal
/// exactly when their words are, so partitions and peers are found on the
/// words; NULLs are words of their own.
pub(crate) struct PackedOrder<const N: usize>(Vec<Packed<N>>);

impl<const N: usize> PackedOrder<N> {
    /// The keys `spec` of every row of `rows`, evaluated, packed and
    /// sorted; `None` when they do not pack (see [`pack`]).
    pub(crate) fn of(
        rows: &KeyRows,
        spec: &[SortKey],
        outer: &[Value],
        cx: &ExecCtx,
    ) -> Result<Option<PackedOrder<N>>> {
        if spec.len() != N || u32::try_from(rows.len()).is_err() {
            return Ok(None);
        }
        let mut kinds = [Kind::Unknown; N];
        let mut out = Vec::with_capacity(rows.len());
        cx.budget.charge(2 * rows.len() * std::mem::size_of::<Packed<N>>())?;
        let mut keys: [Value; N] = std::array::from_fn(|_| Value::Null);
        for i in 0..rows.len() {
            let row = rows.row(i);
            cx.tick(1)?;
            for (slot, k) in keys.iter_mut().zip(spec) {
                *slot = super::eval::eval(&k.expr, row, outer, cx)?;
            }
            let Some(words) = pack_row(&keys, spec, &mut kinds) else { return Ok(None) };
            out.push((words, i as u32));
        }
        Ok(Some(PackedOrder(sort_runs(out, &|a: &Packed<N>, b: &Packed<N>| a.cmp(b), false, cx)?)))
    }

    /// The row numbers in sorted order.
    pub(crate) fn order(&self) -> Vec<usize> {
        self.0.iter().map(|e| e.1 as usize).collect()
    }

    /// Whether sorted positions `a` and `b` have equal keys `keys`.
    #[inline]
    pub(crate) fn same(&self, a: usize, b: usize, keys: std::ops::Range<usize>) -> bool {
        self.0[a].0[keys.clone()] == self.0[b].0[keys]
    }
}

/// `rows` sorted by `cmp`: runs of [`SORT_RUN`] entries sorted one by one
/// (stably where `stable`), then merged pairwise, bottom up, between the
/// vector and one scratch vector of the same size, so that the merge
/// passes allocate nothing more. Merges keep the sort stable.
fn sort_runs<T: Copy>(
    mut rows: Vec<T>,
    cmp: &impl Fn(&T, &T) -> Ordering,
    stable: bool,
    cx: &ExecCtx,
) -> Result<Vec<T>> {
    let sort = |run: &mut [T]| if stable { run.sort_by(cmp) } else { run.sort_unstable_by(cmp) };
    let n = rows.len();
    // Packed entries compare in a few instructions: up to a few million
    // sort in place in well under a second, without the merge passes'
    // scratch vector (as big as the entries, all of it faulted in fresh).
    if n <= SORT_RUN || (!stable && n <= IN_PLACE_MAX) {
        sort(&mut rows);
        return Ok(rows);
    }
    for run in rows.chunks_mut(SORT_RUN) {
        cx.check_deadline()?;
        sort(run);
    }
    let mut scratch = rows.clone();
    let (mut src, mut dst) = (&mut rows, &mut scratch);
    let mut width = SORT_RUN;
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
            merge_runs(&src[start..mid], &src[mid..end], &mut dst[start..end], cmp, cx)?;
        }
        std::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    Ok(std::mem::take(src))
}

/// Entries sorted by a single run.
const SORT_RUN: usize = 1 << 14;

/// Most packed entries sorted in one piece, in place.
const IN_PLACE_MAX: usize = 1 << 21;

/// Merges sorted runs `a` and `b` into `out` (as long as both), taking
/// from `a` on ties so the sort stays stable.
fn merge_runs<T: Copy>(
    a: &[T],
    b: &[T],
    out: &mut [T],
    cmp: &impl Fn(&T, &T) -> Ordering,
    cx: &ExecCtx,
) -> Result<()> {
    let (mut i, mut j) = (0, 0);
    for chunk in out.chunks_mut(SORT_RUN) {
        cx.tick(chunk.len() as u32)?;
        for slot in chunk {
            let take_a = j == b.len() || (i < a.len() && cmp(&b[j], &a[i]) != Ordering::Less);
            if take_a {
                *slot = a[i];
                i += 1;
            } else {
                *slot = b[j];
                j += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{compare_keys, pack, KeyRows};
    use crate::planner::expr::Expr;
    use crate::planner::plan::SortKey;
    use centum_types::Value;

    /// Packed keys order rows exactly as `compare_keys` does (stably), for
    /// every direction and NULL placement, mixed integer widths included.
    #[test]
    fn packed_keys_sort_as_the_keys_compare() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..16u32 {
            let key = |desc: bool, nulls_first: bool| SortKey { expr: Expr::Column(0), desc, nulls_first };
            let spec = vec![key(round & 1 != 0, round & 2 != 0), key(round & 4 != 0, round & 8 != 0)];
            let rows: Vec<Vec<Value>> = (0..2000)
                .map(|_| {
                    let a = match next() % 10 {
                        0 => Value::Null,
                        1 => Value::BigInt(i64::MIN),
                        2 => Value::BigInt(i64::MAX),
                        n => Value::Integer((next() % 7) as i32 - 3 + n as i32),
                    };
                    let b = match next() % 8 {
                        0 => Value::Null,
                        _ => Value::Boolean(next() % 2 == 0),
                    };
                    vec![a, b]
                })
                .collect();
            let mut want: Vec<usize> = (0..rows.len()).collect();
            want.sort_by(|x, y| compare_keys(&rows[*x], &rows[*y], &spec));
            let mut packed = pack::<2>(&keys(&rows), &spec).expect("integers and booleans pack");
            packed.sort();
            let got: Vec<usize> = packed.into_iter().map(|(_, i)| i as usize).collect();
            assert_eq!(got, want, "round {round}");
            // The first column alone, packed in one word.
            let firsts: Vec<Vec<Value>> = rows.iter().map(|r| vec![r[0].clone()]).collect();
            want.sort_by(|x, y| compare_keys(&firsts[*x], &firsts[*y], &spec[..1]).then(x.cmp(y)));
            let mut packed = pack::<1>(&keys(&firsts), &spec[..1]).expect("integers pack");
            packed.sort();
            let got: Vec<usize> = packed.into_iter().map(|(_, i)| i as usize).collect();
            assert_eq!(got, want, "round {round}, one key");
        }
    }

    #[test]
    fn other_keys_and_mixed_columns_do_not_pack() {
        let spec = vec![SortKey { expr: Expr::Column(0), desc: false, nulls_first: false }];
        assert!(pack::<1>(&keys(&[vec![Value::Text("a".into())]]), &spec).is_none());
        assert!(pack::<1>(&keys(&[vec![Value::Integer(1)], vec![Value::Boolean(true)]]), &spec).is_none());
        let three = vec![spec[0].clone(), spec[0].clone(), spec[0].clone()];
        assert!(pack::<2>(&keys(&[vec![Value::Integer(1); 3]]), &three).is_none());
    }

    /// A window with neither PARTITION BY nor ORDER BY sorts rows with no
    /// keys: they are still rows, and keep their order.
    #[test]
    fn rows_without_keys_are_counted_and_keep_their_order() {
        let mut k = KeyRows::with_capacity(0, 3);
        for _ in 0..3 {
            k.push(std::iter::empty()).unwrap();
        }
        assert_eq!(k.len(), 3);
        assert!(k.row(2).is_empty());
        let moved = k.permuted(&[2, 0, 1]);
        assert_eq!(moved.len(), 3);
    }

    /// Rows past a block's end are found where they were put, moved by
    /// `permuted` and taken by `take_row`.
    #[test]
    fn rows_across_blocks_keep_their_values() {
        let n = 2 * super::BLOCK_ROWS + 5;
        let mut k = KeyRows::with_capacity(2, 3);
        for i in 0..n {
            k.push_row(vec![Value::BigInt(i as i64), Value::Null]);
        }
        assert_eq!((k.len(), k.width()), (n, 2));
        assert_eq!(k.row(super::BLOCK_ROWS + 1), [Value::BigInt(super::BLOCK_ROWS as i64 + 1), Value::Null]);
        let order: Vec<usize> = (0..n).rev().collect();
        let mut moved = k.permuted(&order);
        assert_eq!(moved.row(0)[0], Value::BigInt(n as i64 - 1));
        assert_eq!(moved.row(n - 1)[0], Value::BigInt(0));
        let taken: Vec<Value> = moved.take_row(super::BLOCK_ROWS).collect();
        assert_eq!(taken[0], Value::BigInt((n - 1 - super::BLOCK_ROWS) as i64));
        assert_eq!(moved.row(super::BLOCK_ROWS)[0], Value::Null);
    }

    /// `rows` as sort keys.
    fn keys(rows: &[Vec<Value>]) -> KeyRows {
        let mut k = KeyRows::with_capacity(rows[0].len(), rows.len());
        for r in rows {
            k.push(r.iter().cloned().map(Ok)).unwrap();
        }
        k
    }
}
