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
//! A sort runs in runs of [`SORT_RUN`] entries, then merges neighbouring
//! runs, reading the deadline between runs and during merges: one sort of
//! tens of millions of rows takes seconds, and a comparison sort cannot be
//! stopped part-way.

use super::query::compare_keys;
use super::ExecCtx;
use crate::error::Result;
use crate::planner::plan::SortKey;
use centum_types::Value;
use std::cmp::Ordering;

/// Key columns packed at most.
const PACKED_KEYS: usize = 2;

/// Packed keys, then the row's number (which keeps the sort stable).
type Packed = ([u128; PACKED_KEYS], u32);

/// Bytes one entry of a sort takes, for the statement's memory budget.
pub(crate) const ENTRY_BYTES: usize = std::mem::size_of::<Packed>();

/// The row numbers of `keys` in sorted order (ties in input order).
pub(crate) fn sort_order(keys: &[Vec<Value>], spec: &[SortKey], cx: &ExecCtx) -> Result<Vec<usize>> {
    if let Some(packed) = pack(keys, spec) {
        let sorted = sort_runs(packed, &|a: &Packed, b: &Packed| a.cmp(b), cx)?;
        return Ok(sorted.into_iter().map(|(_, i)| i as usize).collect());
    }
    let order: Vec<usize> = (0..keys.len()).collect();
    sort_runs(order, &|a: &usize, b: &usize| compare_keys(&keys[*a], &keys[*b], spec), cx)
}

/// The kind of values a packed key column holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unknown,
    Integer,
    Boolean,
}

/// `keys` packed, or `None` when a column is not all integers or all
/// booleans (NULLs aside), or there are too many columns or rows.
fn pack(keys: &[Vec<Value>], spec: &[SortKey]) -> Option<Vec<Packed>> {
    if spec.len() > PACKED_KEYS || u32::try_from(keys.len()).is_err() {
        return None;
    }
    let mut kinds = [Kind::Unknown; PACKED_KEYS];
    let mut out = Vec::with_capacity(keys.len());
    for (i, row) in keys.iter().enumerate() {
        let mut words = [0u128; PACKED_KEYS];
        for (j, (v, k)) in row.iter().zip(spec).enumerate() {
            let (kind, n) = match v {
                Value::Null => {
                    words[j] = if k.nulls_first { 0 } else { 1 << 64 };
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
            words[j] = if k.nulls_first { (1 << 64) | u128::from(m) } else { u128::from(m) };
        }
        out.push((words, i as u32));
    }
    Some(out)
}

/// `rows` sorted by `cmp`, stably, in runs (see the module header).
fn sort_runs<T>(mut rows: Vec<T>, cmp: &impl Fn(&T, &T) -> Ordering, cx: &ExecCtx) -> Result<Vec<T>> {
    if rows.len() <= SORT_RUN {
        rows.sort_by(cmp);
        return Ok(rows);
    }
    let mut runs: Vec<Vec<T>> = Vec::with_capacity(rows.len().div_ceil(SORT_RUN));
    let mut rest = rows.into_iter();
    loop {
        let mut run: Vec<T> = rest.by_ref().take(SORT_RUN).collect();
        if run.is_empty() {
            break;
        }
        cx.check_deadline()?;
        run.sort_by(cmp);
        runs.push(run);
    }
    while runs.len() > 1 {
        let mut merged = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => merged.push(merge_runs(a, b, cmp, cx)?),
                None => merged.push(a),
            }
        }
        runs = merged;
    }
    Ok(runs.pop().unwrap_or_default())
}

/// Entries sorted by a single run.
const SORT_RUN: usize = 1 << 14;

/// Merges two sorted runs, taking from `a` on ties so the sort stays stable.
fn merge_runs<T>(a: Vec<T>, b: Vec<T>, cmp: &impl Fn(&T, &T) -> Ordering, cx: &ExecCtx) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        cx.tick(1)?;
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => cmp(y, x) != Ordering::Less,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return Ok(out),
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
}

#[cfg(test)]
mod tests {
    use super::{compare_keys, pack};
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
            let mut packed = pack(&rows, &spec).expect("integers and booleans pack");
            packed.sort();
            let got: Vec<usize> = packed.into_iter().map(|(_, i)| i as usize).collect();
            assert_eq!(got, want, "round {round}");
        }
    }

    #[test]
    fn other_keys_and_mixed_columns_do_not_pack() {
        let spec = vec![SortKey { expr: Expr::Column(0), desc: false, nulls_first: false }];
        assert!(pack(&[vec![Value::Text("a".into())]], &spec).is_none());
        assert!(pack(&[vec![Value::Integer(1)], vec![Value::Boolean(true)]], &spec).is_none());
        assert!(pack(&[vec![Value::Integer(1)]; 1], &[spec[0].clone(), spec[0].clone(), spec[0].clone()])
            .is_none());
    }
}
