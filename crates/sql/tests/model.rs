//! Model-based test: random sequences of INSERT / UPDATE / DELETE / SELECT
//! by key and by range on `t(k int PRIMARY KEY, v int, w text)` with a
//! range index on `v`, checked against a `BTreeMap` after every statement.
//!
//! Blocks (BEGIN ... COMMIT / ROLLBACK, at any isolation level) are part of
//! the sequence: inside one the model works on a copy that COMMIT adopts
//! and ROLLBACK drops; an error inside a block fails it (25P02 for every
//! statement until it ends, and COMMIT rolls back). After each statement
//! the working session's view (when it can read) and a second session's
//! view (committed rows only) are compared with the model.

mod common;

use centum_sql::{Error, QueryResult, Session, TxnStatus};
use centum_types::Value;
use common::db;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::BTreeMap;

type Row = (Option<i32>, Option<String>);
type Model = BTreeMap<i32, Row>;

const KEYS: i32 = 24;
const VALS: i32 = 12;
const WORDS: [&str; 5] = ["a", "bb", "", "it's", "x y"];

#[derive(Clone, Debug)]
enum Op {
    /// One INSERT of one or more rows (all or nothing).
    Insert(Vec<(i32, Option<i32>, Option<usize>)>),
    /// `UPDATE t SET v = .., w = .. WHERE k = ..`
    UpdateByKey(i32, Option<i32>, Option<usize>),
    /// `UPDATE t SET k = new WHERE k = old` (primary key change).
    MoveKey(i32, i32),
    /// `UPDATE t SET v = v + d WHERE v >= lo` (updates the indexed column
    /// while scanning that index).
    ShiftFrom(i32, i32),
    /// `UPDATE t SET w = .. WHERE v BETWEEN lo AND hi`
    UpdateRange(i32, i32, Option<usize>),
    DeleteByKey(i32),
    /// `DELETE FROM t WHERE v BETWEEN lo AND hi`
    DeleteRange(i32, i32),
    /// `DELETE FROM t WHERE k >= lo AND k < hi`
    DeleteKeyRange(i32, i32),
    SelectByKey(i32),
    /// `SELECT .. WHERE v BETWEEN lo AND hi`
    SelectRange(i32, i32),
    /// `SELECT .. WHERE v > lo ORDER BY v DESC, k LIMIT n`
    SelectTop(i32, usize),
    /// `SELECT .. WHERE k >= lo AND k < hi`
    SelectKeyRange(i32, i32),
    /// `SELECT count(*), sum(v) WHERE v IS NULL / NOT NULL`
    Aggregate,
    /// BEGIN at READ COMMITTED, REPEATABLE READ or SERIALIZABLE.
    Begin(usize),
    Commit,
    Rollback,
}

fn word() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![4 => (0..WORDS.len()).prop_map(Some), 1 => Just(None)]
}

fn val() -> impl Strategy<Value = Option<i32>> {
    prop_oneof![6 => (0..VALS).prop_map(Some), 1 => Just(None)]
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS;
    let v = 0..VALS;
    prop_oneof![
        8 => prop::collection::vec((key.clone(), val(), word()), 1..4).prop_map(Op::Insert),
        4 => (key.clone(), val(), word()).prop_map(|(k, v, w)| Op::UpdateByKey(k, v, w)),
        2 => (key.clone(), key.clone()).prop_map(|(a, b)| Op::MoveKey(a, b)),
        2 => (v.clone(), 1..3i32).prop_map(|(lo, d)| Op::ShiftFrom(lo, d)),
        2 => (v.clone(), v.clone(), word()).prop_map(|(a, b, w)| Op::UpdateRange(a.min(b), a.max(b), w)),
        3 => key.clone().prop_map(Op::DeleteByKey),
        2 => (v.clone(), v.clone()).prop_map(|(a, b)| Op::DeleteRange(a.min(b), a.max(b))),
        1 => (key.clone(), key.clone()).prop_map(|(a, b)| Op::DeleteKeyRange(a.min(b), a.max(b))),
        3 => key.clone().prop_map(Op::SelectByKey),
        3 => (v.clone(), v.clone()).prop_map(|(a, b)| Op::SelectRange(a.min(b), a.max(b))),
        2 => (v.clone(), 0..5usize).prop_map(|(lo, n)| Op::SelectTop(lo, n)),
        2 => (key.clone(), key).prop_map(|(a, b)| Op::SelectKeyRange(a.min(b), a.max(b))),
        1 => Just(Op::Aggregate),
        3 => (0..3usize).prop_map(Op::Begin),
        2 => Just(Op::Commit),
        2 => Just(Op::Rollback),
    ]
}

fn lit_int(v: Option<i32>) -> String {
    v.map_or("NULL".into(), |v| v.to_string())
}

fn lit_word(w: Option<usize>) -> String {
    w.map_or("NULL".into(), |i| format!("'{}'", WORDS[i].replace('\'', "''")))
}

fn word_of(w: Option<usize>) -> Option<String> {
    w.map(|i| WORDS[i].to_string())
}

/// A result row as (k, v, w).
fn decode(row: &[Value]) -> (i32, Row) {
    let int = |v: &Value| match v {
        Value::Integer(n) => Some(*n),
        Value::Null => None,
        other => panic!("not an int: {other:?}"),
    };
    let text = |v: &Value| match v {
        Value::Text(s) => Some(s.clone()),
        Value::Null => None,
        other => panic!("not text: {other:?}"),
    };
    (int(&row[0]).expect("k is never NULL"), (int(&row[1]), text(&row[2])))
}

fn rows_of(r: &QueryResult) -> Vec<(i32, Row)> {
    r.rows.iter().map(|row| decode(row)).collect()
}

fn sorted(mut v: Vec<(i32, Row)>) -> Vec<(i32, Row)> {
    v.sort();
    v
}

fn in_range(v: Option<i32>, lo: i32, hi: i32) -> bool {
    v.is_some_and(|v| (lo..=hi).contains(&v))
}

/// What a statement should do to the model: the expected result (rows
/// and/or tag) or an error code.
enum Expect {
    Rows(Vec<(i32, Row)>, /* ordered */ bool),
    Tag(String),
    Scalar(Vec<Option<i64>>),
    Error(&'static str),
}

/// The model's transaction state.
struct State {
    committed: Model,
    /// The block's working copy (None outside a block).
    block: Option<Model>,
    failed: bool,
}

impl State {
    fn current(&mut self) -> &mut Model {
        self.block.as_mut().unwrap_or(&mut self.committed)
    }
}

/// Applies `op` to the model (a copy of it, kept only on success) and
/// returns the SQL and what to expect.
fn plan(op: &Op, m: &Model) -> (String, Expect, Option<Model>) {
    let mut next = m.clone();
    let changed = |next: Model, tag: String| (Expect::Tag(tag), Some(next));
    let (sql, (expect, model)) = match op {
        Op::Insert(rows) => {
            let values: Vec<String> =
                rows.iter().map(|(k, v, w)| format!("({k}, {}, {})", lit_int(*v), lit_word(*w))).collect();
            let sql = format!("INSERT INTO t VALUES {}", values.join(", "));
            let mut dup = false;
            for (k, v, w) in rows {
                if next.insert(*k, (*v, word_of(*w))).is_some() {
                    dup = true;
                }
            }
            if dup {
                (sql, (Expect::Error("23505"), None))
            } else {
                (sql, changed(next, format!("INSERT 0 {}", rows.len())))
            }
        }
        Op::UpdateByKey(k, v, w) => {
            let sql = format!("UPDATE t SET v = {}, w = {} WHERE k = {k}", lit_int(*v), lit_word(*w));
            let n = match next.get_mut(k) {
                Some(row) => {
                    *row = (*v, word_of(*w));
                    1
                }
                None => 0,
            };
            (sql, changed(next, format!("UPDATE {n}")))
        }
        Op::MoveKey(old, new) => {
            let sql = format!("UPDATE t SET k = {new} WHERE k = {old}");
            match next.remove(old) {
                None => (sql, changed(next, "UPDATE 0".into())),
                Some(_) if old != new && m.contains_key(new) => (sql, (Expect::Error("23505"), None)),
                Some(row) => {
                    next.insert(*new, row);
                    (sql, changed(next, "UPDATE 1".into()))
                }
            }
        }
        Op::ShiftFrom(lo, d) => {
            let sql = format!("UPDATE t SET v = v + {d} WHERE v >= {lo}");
            let mut n = 0;
            for (v, _) in next.values_mut() {
                if let Some(x) = v.as_mut().filter(|x| **x >= *lo) {
                    *x += d;
                    n += 1;
                }
            }
            (sql, changed(next, format!("UPDATE {n}")))
        }
        Op::UpdateRange(lo, hi, w) => {
            let sql = format!("UPDATE t SET w = {} WHERE v BETWEEN {lo} AND {hi}", lit_word(*w));
            let mut n = 0;
            for (v, old) in next.values_mut() {
                if in_range(*v, *lo, *hi) {
                    *old = word_of(*w);
                    n += 1;
                }
            }
            (sql, changed(next, format!("UPDATE {n}")))
        }
        Op::DeleteByKey(k) => {
            let n = usize::from(next.remove(k).is_some());
            (format!("DELETE FROM t WHERE k = {k}"), changed(next, format!("DELETE {n}")))
        }
        Op::DeleteRange(lo, hi) => {
            let before = next.len();
            next.retain(|_, (v, _)| !in_range(*v, *lo, *hi));
            let n = before - next.len();
            (format!("DELETE FROM t WHERE v BETWEEN {lo} AND {hi}"), changed(next, format!("DELETE {n}")))
        }
        Op::DeleteKeyRange(lo, hi) => {
            let before = next.len();
            next.retain(|k, _| !(lo..hi).contains(&k));
            let n = before - next.len();
            (format!("DELETE FROM t WHERE k >= {lo} AND k < {hi}"), changed(next, format!("DELETE {n}")))
        }
        Op::SelectByKey(k) => {
            let want = m.get(k).map(|r| (*k, r.clone())).into_iter().collect();
            (format!("SELECT k, v, w FROM t WHERE k = {k}"), (Expect::Rows(want, false), None))
        }
        Op::SelectRange(lo, hi) => {
            let want =
                m.iter().filter(|(_, (v, _))| in_range(*v, *lo, *hi)).map(|(k, r)| (*k, r.clone())).collect();
            (
                format!("SELECT k, v, w FROM t WHERE v BETWEEN {lo} AND {hi}"),
                (Expect::Rows(want, false), None),
            )
        }
        Op::SelectTop(lo, n) => {
            let mut all: Vec<(i32, Row)> = m
                .iter()
                .filter(|(_, (v, _))| v.is_some_and(|v| v > *lo))
                .map(|(k, r)| (*k, r.clone()))
                .collect();
            all.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
            all.truncate(*n);
            (
                format!("SELECT k, v, w FROM t WHERE v > {lo} ORDER BY v DESC, k LIMIT {n}"),
                (Expect::Rows(all, true), None),
            )
        }
        Op::SelectKeyRange(lo, hi) => {
            let want = m.range(*lo..*hi).map(|(k, r)| (*k, r.clone())).collect();
            (
                format!("SELECT k, v, w FROM t WHERE k >= {lo} AND k < {hi} ORDER BY k"),
                (Expect::Rows(want, true), None),
            )
        }
        Op::Aggregate => {
            let nulls = m.values().filter(|(v, _)| v.is_none()).count() as i64;
            let vals: Vec<i64> = m.values().filter_map(|(v, _)| v.map(i64::from)).collect();
            let sum = (!vals.is_empty()).then(|| vals.iter().sum());
            (
                "SELECT (SELECT count(*) FROM t WHERE v IS NULL), count(*), sum(v) FROM t WHERE v IS NOT NULL"
                    .into(),
                (Expect::Scalar(vec![Some(nulls), Some(vals.len() as i64), sum]), None),
            )
        }
        Op::Begin(_) | Op::Commit | Op::Rollback => unreachable!(),
    };
    (sql, expect, model)
}

fn check_result(
    sql: &str,
    expect: &Expect,
    got: Result<Vec<QueryResult>, Error>,
) -> Result<(), TestCaseError> {
    match (expect, got) {
        (Expect::Error(code), Err(e)) => {
            prop_assert_eq!(e.sqlstate(), *code, "{}: {}", sql, e);
        }
        (Expect::Error(code), Ok(r)) => {
            return Err(TestCaseError::fail(format!("{sql}: expected {code}, got {:?}", r[0].tag)));
        }
        (_, Err(e)) => return Err(TestCaseError::fail(format!("{sql}: ERROR {}: {e}", e.sqlstate()))),
        (Expect::Tag(tag), Ok(r)) => prop_assert_eq!(&r[0].tag, tag, "{}", sql),
        (Expect::Rows(want, ordered), Ok(r)) => {
            let got = rows_of(&r[0]);
            if *ordered {
                prop_assert_eq!(&got, want, "{}", sql);
            } else {
                prop_assert_eq!(sorted(got), sorted(want.clone()), "{}", sql);
            }
            prop_assert_eq!(&r[0].tag, &format!("SELECT {}", want.len()), "{}", sql);
        }
        (Expect::Scalar(want), Ok(r)) => {
            prop_assert_eq!(r[0].rows.len(), 1, "{}", sql);
            let got: Vec<Option<i64>> = r[0].rows[0]
                .iter()
                .map(|v| match v {
                    Value::Null => None,
                    Value::Integer(n) => Some(i64::from(*n)),
                    Value::BigInt(n) => Some(*n),
                    other => Some(other.to_string().parse().unwrap()),
                })
                .collect();
            prop_assert_eq!(&got, want, "{}", sql);
        }
    }
    Ok(())
}

/// Compares a session's full view of the table with `m`.
fn check_view(s: &mut Session, m: &Model, who: &str) -> Result<(), TestCaseError> {
    // Through the primary key's range: an index scan when the key is a
    // range index (a sequential scan of such a table is slow, see `Layout`).
    let r = s
        .execute("SELECT k, v, w FROM t WHERE k BETWEEN -1000 AND 1000 ORDER BY k")
        .map_err(|e| TestCaseError::fail(format!("{who}: {e}")))?;
    let want: Vec<(i32, Row)> = m.iter().map(|(k, r)| (*k, r.clone())).collect();
    prop_assert_eq!(rows_of(&r[0]), want, "{} view", who);
    // The range index holds exactly the rows with a non-NULL v.
    let r = s
        .execute(&format!("SELECT k, v, w FROM t WHERE v BETWEEN -1000 AND {}", i32::MAX))
        .map_err(|e| TestCaseError::fail(format!("{who}: {e}")))?;
    let want_indexed: Vec<(i32, Row)> =
        m.iter().filter(|(_, (v, _))| v.is_some()).map(|(k, r)| (*k, r.clone())).collect();
    prop_assert_eq!(sorted(rows_of(&r[0])), want_indexed, "{} view through the v index", who);
    Ok(())
}

/// How the table's primary key is built.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// The default: a range (B+tree) primary key. The engine sizes the
    /// scan list of such a table for a million rows, so every sequential
    /// scan of it costs milliseconds even when it is empty: the views
    /// checked after each statement go through indexes.
    RangeKey,
    /// `WITH (bucket_count = 64)`: a hash primary key; key ranges are
    /// answered by sequential scans.
    HashKey,
}

fn run_ops(layout: Layout, ops: &[Op]) -> Result<(), TestCaseError> {
    let db = db();
    let mut s = db.session();
    let mut observer = db.session();
    s.execute(match layout {
        Layout::RangeKey => "CREATE TABLE t (k int PRIMARY KEY, v int, w text)",
        Layout::HashKey => "CREATE TABLE t (k int PRIMARY KEY, v int, w text) WITH (bucket_count = 64)",
    })
    .unwrap();
    s.execute("CREATE INDEX t_v ON t (v)").unwrap();
    let plan_line = s.execute("EXPLAIN SELECT k FROM t WHERE v BETWEEN 1 AND 2").unwrap();
    prop_assert!(plan_line[0].rows[0][0].to_string().contains("t_v"));

    let mut st = State { committed: Model::new(), block: None, failed: false };
    for op in ops {
        match op {
            Op::Begin(level) => {
                let level = ["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"][*level];
                let r = s.execute(&format!("BEGIN ISOLATION LEVEL {level}")).unwrap();
                prop_assert_eq!(&r[0].tag, "BEGIN");
                if st.block.is_some() {
                    prop_assert!(!r[0].notices.is_empty(), "nested BEGIN gives a notice");
                } else {
                    st.block = Some(st.committed.clone());
                }
            }
            Op::Commit | Op::Rollback => {
                let sql = if matches!(op, Op::Commit) { "COMMIT" } else { "ROLLBACK" };
                let r = s.execute(sql).map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
                let block = st.block.take();
                let want_tag = if st.failed { "ROLLBACK" } else { sql };
                prop_assert_eq!(&r[0].tag, want_tag);
                if block.is_none() {
                    prop_assert!(!r[0].notices.is_empty(), "{} outside a block gives a notice", sql);
                }
                if let (Some(b), Op::Commit, false) = (block, op, st.failed) {
                    st.committed = b;
                }
                st.failed = false;
            }
            op => {
                let (sql, expect, next) = plan(op, st.current());
                let got = s.execute(&sql);
                if st.failed {
                    match got {
                        Err(e) => prop_assert_eq!(e.sqlstate(), "25P02", "{}: {}", sql, e),
                        Ok(_) => return Err(TestCaseError::fail(format!("{sql}: ran in a failed block"))),
                    }
                } else {
                    check_result(&sql, &expect, got)?;
                    if let Expect::Error(_) = expect {
                        if st.block.is_some() {
                            st.failed = true;
                        }
                    } else if let Some(next) = next {
                        *st.current() = next;
                    }
                }
            }
        }
        let want_status = match (&st.block, st.failed) {
            (None, _) => TxnStatus::Idle,
            (Some(_), false) => TxnStatus::InBlock,
            (Some(_), true) => TxnStatus::Failed,
        };
        prop_assert_eq!(s.status(), want_status, "after {:?}", op);
        if !st.failed {
            let m = st.current().clone();
            check_view(&mut s, &m, "session")?;
        }
        check_view(&mut observer, &st.committed, "observer")?;
    }
    // End any block and check the committed state once more.
    s.execute("ROLLBACK").unwrap();
    check_view(&mut s, &st.committed, "final")?;
    Ok(())
}

fn random(layout: Layout) {
    let config = Config { cases: 64, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    runner
        .run(&prop::collection::vec(op(), 1..60), |ops| run_ops(layout, &ops))
        .unwrap_or_else(|e| panic!("{layout:?}: {e}"));
}

#[test]
fn random_statements_match_a_btreemap_range_key() {
    random(Layout::RangeKey);
}

#[test]
fn random_statements_match_a_btreemap_hash_key() {
    random(Layout::HashKey);
}

/// A fixed sequence that hits the interesting paths regardless of what
/// the random cases draw.
#[test]
fn fixed_sequence() {
    use Op::*;
    let ops = vec![
        Insert(vec![(1, Some(1), Some(0)), (2, Some(2), Some(1)), (3, None, None), (4, Some(4), Some(3))]),
        Insert(vec![(5, Some(5), None), (1, Some(9), None)]),
        ShiftFrom(2, 1),
        SelectRange(0, 20),
        Begin(1),
        DeleteRange(3, 3),
        UpdateByKey(1, Some(7), Some(4)),
        SelectTop(0, 2),
        Rollback,
        Begin(2),
        MoveKey(1, 10),
        MoveKey(2, 10),
        SelectByKey(10),
        Commit,
        Begin(0),
        Insert(vec![(20, Some(1), None)]),
        Insert(vec![(20, Some(1), None)]),
        SelectByKey(20),
        Commit,
        Begin(0),
        Insert(vec![(21, Some(1), None)]),
        Commit,
        DeleteKeyRange(0, 6),
        Aggregate,
        SelectKeyRange(0, KEYS),
    ];
    run_ops(Layout::RangeKey, &ops).unwrap();
    run_ops(Layout::HashKey, &ops).unwrap();
}
