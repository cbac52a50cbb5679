//! Physical plans: the operators a statement runs, chosen at plan time.
//!
//! Every operator produces rows (vectors of values). Leaves read a table
//! through one access path ([`Access`]); joins, aggregation, sorting and
//! limits sit above. `EXPLAIN` prints the tree with [`Plan::explain`].

use super::expr::Expr;
use centum_engine::{Direction, Table};
use centum_types::DataType;
use std::ops::Bound;
use std::sync::Arc;

/// How a leaf reads its table.
#[derive(Clone, Debug)]
pub enum AccessPath {
    /// Every row (the scan list).
    Scan,
    /// Rows whose key equals `key` in a hash or range index (every key
    /// column given).
    Key {
        /// The index.
        index: String,
        /// Whether it is a hash index (for EXPLAIN).
        hash: bool,
        /// Whether at most one row can match.
        unique: bool,
        /// One expression per key column, constant per execution.
        key: Vec<Expr>,
        /// The key columns' types, to convert key values to.
        key_types: Vec<centum_types::DataType>,
    },
    /// Rows whose key is one of `keys` (`column IN (...)` on an index of
    /// that one column): one look-up per distinct key.
    Keys {
        /// The index.
        index: String,
        /// Whether it is a hash index (for EXPLAIN).
        hash: bool,
        /// Whether at most one row can match each key.
        unique: bool,
        /// The keys, each constant per execution.
        keys: Vec<Expr>,
        /// `keys` is one array whose elements are the keys
        /// (`column = ANY(array)`).
        spread: bool,
        /// The key column's type, to convert key values to.
        key_type: centum_types::DataType,
    },
    /// Rows of a range index between bounds, in index order.
    Range {
        /// The index.
        index: String,
        /// Values of the leading key columns.
        eq: Vec<Expr>,
        /// Lower bound of the next column.
        lower: Bound<Expr>,
        /// Upper bound of the next column.
        upper: Bound<Expr>,
        /// Scan direction.
        dir: Direction,
    },
}

/// A leaf: one table read through one access path, rows filtered.
#[derive(Clone, Debug)]
pub struct Access {
    /// The table.
    pub table: Arc<Table>,
    /// The alias it is known by in the query.
    pub alias: String,
    /// How it is read.
    pub path: AccessPath,
    /// Conditions rows must meet (on the table's columns).
    pub filter: Option<Expr>,
    /// The conditions that gave a range path its bounds. The scan checks
    /// them on each row unless the index answers them exactly: an integer
    /// key column that holds no NULLs, and bounds whose values are keys of
    /// the column's type (not `id > 2.5` on an int key, where the scan
    /// starts from an open side).
    pub bound_check: Option<Box<Expr>>,
    /// The access conditions and filter as SQL text, for EXPLAIN.
    pub cond_text: String,
    /// The filter as SQL text, for EXPLAIN.
    pub filter_text: String,
    /// Which of the table's columns the query reads (`None`: all); the
    /// others are not decoded and read as NULL. Set by
    /// [`Plan::prune_columns`].
    pub columns: Option<Box<[bool]>>,
    /// Of those, the columns the access's consumer reads, leaving out the
    /// ones only its own conditions read (`None`: all). A scan whose
    /// filter is answered whole on the stored bytes decodes only these.
    /// Set by [`Plan::prune_columns`].
    pub consumer_columns: Option<Box<[bool]>>,
    /// The keys of the table's indexes on expressions and partial
    /// indexes, which conditions are matched against (see
    /// [`super::access::HiddenKey`]).
    pub keys: Vec<super::access::HiddenKey>,
}

/// Join kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// Inner join.
    Inner,
    /// Left outer join.
    Left,
    /// Right outer join (hash join only).
    Right,
    /// Full outer join (hash join only).
    Full,
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    /// `count(*)`.
    CountStar,
    /// `count(x)`.
    Count,
    /// `sum(x)`.
    Sum,
    /// `avg(x)`.
    Avg,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
    /// `bool_and(x)`.
    BoolAnd,
    /// `bool_or(x)`.
    BoolOr,
    /// `string_agg(x, sep)`.
    StringAgg,
    /// `array_agg(x)`: an array of x's type (NULLs included).
    ArrayAgg,
    /// `jsonb_agg`.
    JsonbAgg,
    /// `json_agg`.
    JsonAgg,
    /// `jsonb_object_agg`.
    JsonbObjectAgg,
    /// `json_object_agg`.
    JsonObjectAgg,
    /// `any_value(x)`: some non-null input (PostgreSQL 16). Also what a
    /// column reads in a query grouped by its table's primary key: every
    /// row of a group has the same value there.
    AnyValue,
}

/// One aggregate call.
#[derive(Clone, Debug)]
pub struct AggCall {
    /// The function.
    pub func: AggFunc,
    /// Its arguments (none for `count(*)`).
    pub args: Vec<Expr>,
    /// `DISTINCT`.
    pub distinct: bool,
    /// `FILTER (WHERE ...)`.
    pub filter: Option<Expr>,
    /// `ORDER BY` inside the call: the order the inputs are aggregated in.
    pub order: Vec<SortKey>,
    /// Result type.
    pub ty: Option<DataType>,
}

/// A sort key.
#[derive(Clone, Debug)]
pub struct SortKey {
    /// What to sort by.
    pub expr: Expr,
    /// Descending.
    pub desc: bool,
    /// NULLs before non-NULLs.
    pub nulls_first: bool,
}

/// Grouping sets: each the positions of the GROUP BY keys it groups by.
pub type GroupingSets = Vec<Vec<usize>>;

/// A window function (an aggregate called with `OVER` is
/// [`WindowFunc::Aggregate`]).
#[derive(Clone, Debug)]
pub enum WindowFunc {
    /// `row_number()`.
    RowNumber,
    /// `rank()`.
    Rank,
    /// `dense_rank()`.
    DenseRank,
    /// `percent_rank()`.
    PercentRank,
    /// `cume_dist()`.
    CumeDist,
    /// `ntile(buckets)`.
    Ntile,
    /// `lag(x [, offset [, default]])`.
    Lag,
    /// `lead(x [, offset [, default]])`.
    Lead,
    /// `first_value(x)`.
    FirstValue,
    /// `last_value(x)`.
    LastValue,
    /// `nth_value(x, n)`.
    NthValue,
    /// An aggregate over the frame.
    Aggregate(Box<AggCall>),
}

/// How a frame's bounds count: rows, peer values, or peer groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUnits {
    /// `ROWS`.
    Rows,
    /// `RANGE`: offsets are distances in the one ORDER BY key's values.
    Range,
    /// `GROUPS`.
    Groups,
}

/// One end of a window frame.
#[derive(Clone, Debug)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`.
    UnboundedPreceding,
    /// `n PRECEDING` (a constant per execution).
    Preceding(Expr),
    /// `CURRENT ROW`.
    CurrentRow,
    /// `n FOLLOWING`.
    Following(Expr),
    /// `UNBOUNDED FOLLOWING`.
    UnboundedFollowing,
}

/// A window frame: which rows of the partition an aggregate or
/// first/last/nth_value sees from the current row.
#[derive(Clone, Debug)]
pub struct Frame {
    /// How the bounds count.
    pub units: FrameUnits,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where it ends.
    pub end: FrameBound,
}

/// One window function call: its function, arguments, window and frame.
#[derive(Clone, Debug)]
pub struct WindowCall {
    /// The function.
    pub func: WindowFunc,
    /// Its arguments (an aggregate's are in its [`AggCall`]).
    pub args: Vec<Expr>,
    /// `PARTITION BY`.
    pub partition: Vec<Expr>,
    /// `ORDER BY` of the window: the partition's order and its peers.
    pub order: Vec<SortKey>,
    /// The frame.
    pub frame: Frame,
}

/// Set operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    /// `UNION`.
    Union,
    /// `INTERSECT`.
    Intersect,
    /// `EXCEPT`.
    Except,
}

/// A query plan.
// A table access is the largest operator; plans are built once per
// prepared statement and walked by reference, so its size costs nothing
// that boxing it would save.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Plan {
    /// Literal rows (`VALUES`, or one empty row for `SELECT` without FROM).
    Values {
        /// The rows.
        rows: Vec<Vec<Expr>>,
    },
    /// A table read.
    Access(Access),
    /// A virtual catalog table, its rows made when it is opened.
    System(crate::system::SystemTable),
    /// Rows of `input` that satisfy `pred`.
    Filter {
        /// Input.
        input: Box<Plan>,
        /// Condition.
        pred: Expr,
    },
    /// Computes output columns.
    Project {
        /// Input.
        input: Box<Plan>,
        /// One expression per output column.
        exprs: Vec<Expr>,
    },
    /// For each left row, runs `right` with the left row appended to the
    /// outer row (when `lateral`), and joins.
    NestedLoop {
        /// Outer side.
        left: Box<Plan>,
        /// Inner side (may read the left row as outer columns).
        right: Box<Plan>,
        /// Whether `right` reads the left row: a table access keyed or
        /// filtered on it, a LATERAL subquery. A derived table that does
        /// not was bound without the left row in its outer row, so it runs
        /// once, over the statement's outer row, and its rows are kept.
        lateral: bool,
        /// Join kind.
        kind: JoinKind,
        /// Condition over `left ++ right`.
        on: Option<Expr>,
        /// Width of the right rows (for NULL padding).
        right_width: usize,
    },
    /// Builds a hash table of the right side on `right_keys`, probes it
    /// with each left row.
    HashJoin {
        /// Probe side.
        left: Box<Plan>,
        /// Build side.
        right: Box<Plan>,
        /// Join kind.
        kind: JoinKind,
        /// Key expressions over the left row.
        left_keys: Vec<Expr>,
        /// Key expressions over the right row.
        right_keys: Vec<Expr>,
        /// Residual condition over `left ++ right`.
        on: Option<Expr>,
        /// Width of the left rows.
        left_width: usize,
        /// Width of the right rows.
        right_width: usize,
    },
    /// Groups and aggregates; output = group values ++ aggregate values.
    Aggregate {
        /// Input.
        input: Box<Plan>,
        /// Grouping expressions.
        group: Vec<Expr>,
        /// Aggregates.
        aggs: Vec<AggCall>,
        /// GROUPING SETS, ROLLUP, CUBE: the grouping sets, each the
        /// positions in `group` it groups by, in output order. The last
        /// group column is then the set's number (`group`'s last
        /// expression is a placeholder), and a key outside a row's set
        /// is NULL in that row.
        sets: Option<GroupingSets>,
    },
    /// Window functions: every input row, then one column per call,
    /// computed over the row's partition (the rows come out in the last
    /// call's partition and window order).
    Window {
        /// Input.
        input: Box<Plan>,
        /// The calls.
        calls: Vec<WindowCall>,
    },
    /// Sorts.
    Sort {
        /// Input.
        input: Box<Plan>,
        /// Keys, most significant first.
        keys: Vec<SortKey>,
    },
    /// SELECT ... FOR UPDATE: each input row names a row of `table` by its
    /// key in `index` (the input's columns from `key_from` on). That row is
    /// locked (see `Transaction::lock_row`), and if it still satisfies
    /// `recheck`, `exprs` over it are the output row. Pulled lazily, so a
    /// LIMIT above it locks only the rows it returns.
    Lock {
        /// The candidate rows, in order, keys last.
        input: Box<Plan>,
        /// The table whose rows are locked.
        table: Arc<Table>,
        /// A unique index of it.
        index: String,
        /// Where the key starts in an input row.
        key_from: usize,
        /// The WHERE, over the table's row.
        recheck: Option<Expr>,
        /// The output columns, over the table's row.
        exprs: Vec<Expr>,
        /// What to do with a row another transaction holds.
        on_held: centum_engine::OnHeld,
        /// The statement as a READ ONLY transaction's refusal names it
        /// (`SELECT FOR UPDATE`, `SELECT FOR SHARE`).
        command: &'static str,
    },
    /// Skips `offset` rows and returns at most `limit`.
    Limit {
        /// Input.
        input: Box<Plan>,
        /// Row limit.
        limit: Option<Expr>,
        /// Rows to skip.
        offset: Option<Expr>,
    },
    /// Removes duplicate rows (on the first `on` columns when set:
    /// DISTINCT ON).
    Distinct {
        /// Input.
        input: Box<Plan>,
        /// Key width for DISTINCT ON.
        on: Option<usize>,
    },
    /// UNION / INTERSECT / EXCEPT.
    SetOp {
        /// Operation.
        op: SetOpKind,
        /// Keep duplicates.
        all: bool,
        /// Left input.
        left: Box<Plan>,
        /// Right input.
        right: Box<Plan>,
    },
    /// `WITH RECURSIVE`: the anchor's rows, then the step run again and
    /// again over the rows the round before added (read through
    /// [`Plan::WorkTable`] with the same `work` id), until a round adds
    /// none. `distinct` (UNION rather than UNION ALL) drops every row seen
    /// before, which also ends a recursion that finds nothing new.
    Recursive { anchor: Box<Plan>, step: Box<Plan>, distinct: bool, work: usize },
    /// Inside a recursive step: the rows the last round added. Also the
    /// RETURNING rows of a data-modifying statement in WITH (see
    /// [`Plan::Writes`]).
    WorkTable { work: usize },
    /// A statement whose WITH holds data-modifying statements (`WITH d AS
    /// (DELETE ... RETURNING *) ...`): each runs once, in order, before
    /// `input` is opened, and its RETURNING rows are kept under its `work`
    /// id for the [`Plan::WorkTable`]s that read it.
    Writes { writes: Vec<(usize, super::Statement)>, input: Box<Plan> },
    /// `unnest(x)` in a select list: each input row once per element of
    /// its arrays in columns `sets` (NULL past a shorter one's end), the
    /// other columns repeated; a row whose arrays are all empty or NULL
    /// gives none.
    ProjectSet { input: Box<Plan>, sets: Vec<usize> },
    /// `unnest(a, b, ...)` in FROM: row i holds element i of each array
    /// (NULL past an array's end), converted to the array's element type;
    /// then the ordinality if asked for.
    Unnest {
        /// The arrays, in PostgreSQL's text form.
        args: Vec<Expr>,
        /// Their element types.
        types: Vec<DataType>,
        /// WITH ORDINALITY.
        ordinality: bool,
    },
    /// `generate_series(start, stop [, step])`.
    Series {
        /// Start, stop, step.
        args: Vec<Expr>,
    },
    /// A logical decoding function called in FROM
    /// (`pg_logical_slot_get_changes` and its kin): run once, when the
    /// statement reads it.
    Decoding {
        /// Which one.
        call: crate::replication::SqlCall,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// The rows of a set-returning PL/pgSQL function (or the one row of a
    /// scalar one) called in FROM.
    Routine {
        /// The function.
        routine: std::sync::Arc<crate::planner::routines::Compiled>,
        /// Its arguments.
        args: Vec<Expr>,
    },
}

impl Plan {
    /// The plan as indented text, one operator per line, PostgreSQL-like,
    /// with `annotate(key)` appended to each operator's line, `key` being
    /// the operator's address (EXPLAIN ANALYZE's actual figures; see
    /// `execution::query::node_key`).
    pub fn explain_with(&self, annotate: &dyn Fn(usize) -> String) -> Vec<String> {
        let mut out = Vec::new();
        self.explain_into(&mut out, 0, annotate);
        out
    }

    fn explain_into(&self, out: &mut Vec<String>, depth: usize, ann: &dyn Fn(usize) -> String) {
        let pad = pad(depth);
        let key = self as *const Plan as usize;
        let node = |out: &mut Vec<String>, text: String| out.push(format!("{pad}{text}{}", ann(key)));
        match self {
            Plan::Values { rows } => node(out, format!("Values ({} rows)", rows.len())),
            Plan::Access(a) => a.explain_into(out, depth, ann),
            Plan::Filter { input, .. } => {
                node(out, "Filter".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::Project { input, .. } => input.explain_into(out, depth, ann),
            Plan::Lock { input, .. } => {
                node(out, "LockRows".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::NestedLoop { left, right, kind, .. } => {
                node(out, format!("Nested Loop{}", join_suffix(*kind)));
                left.explain_into(out, depth + 1, ann);
                right.explain_into(out, depth + 1, ann);
            }
            Plan::HashJoin { left, right, kind, .. } => {
                node(out, format!("Hash Join{}", join_suffix(*kind)));
                left.explain_into(out, depth + 1, ann);
                out.push(format!("{}Hash", self::pad(depth + 1)));
                right.explain_into(out, depth + 2, ann);
            }
            Plan::Aggregate { input, group, .. } => {
                node(out, (if group.is_empty() { "Aggregate" } else { "HashAggregate" }).into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::Sort { input, .. } => {
                node(out, "Sort".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::Window { input, .. } => {
                node(out, "WindowAgg".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::Limit { input, .. } => {
                node(out, "Limit".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::Distinct { input, .. } => {
                node(out, "Unique".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::SetOp { op, left, right, .. } => {
                let name = match op {
                    SetOpKind::Union => "Append",
                    SetOpKind::Intersect => "HashSetOp Intersect",
                    SetOpKind::Except => "HashSetOp Except",
                };
                node(out, name.into());
                left.explain_into(out, depth + 1, ann);
                right.explain_into(out, depth + 1, ann);
            }
            Plan::Recursive { anchor, step, .. } => {
                node(out, "Recursive Union".into());
                anchor.explain_into(out, depth + 1, ann);
                step.explain_into(out, depth + 1, ann);
            }
            Plan::WorkTable { .. } => node(out, "WorkTable Scan".into()),
            Plan::Writes { writes, input } => {
                let what: Vec<String> = writes.iter().map(|(_, w)| w.describe()).collect();
                node(out, format!("Writes ({})", what.join(", ")));
                input.explain_into(out, depth + 1, ann);
            }
            Plan::ProjectSet { input, .. } => {
                node(out, "ProjectSet".into());
                input.explain_into(out, depth + 1, ann);
            }
            Plan::Series { .. } => node(out, "Function Scan on generate_series".into()),
            Plan::Unnest { .. } => node(out, "Function Scan on unnest".into()),
            Plan::Routine { routine, .. } => node(out, format!("Function Scan on {}", routine.name)),
            Plan::Decoding { call, .. } => node(out, format!("Function Scan on {}", call.name())),
            Plan::System(t) => node(out, format!("System Scan on {}.{}", t.name().0, t.name().1)),
        }
    }
}

/// The indentation of an operator's line at `depth`, PostgreSQL's.
fn pad(depth: usize) -> String {
    if depth == 0 {
        String::new()
    } else {
        format!("{}->  ", "  ".repeat(depth * 3 - 2))
    }
}

impl Access {
    /// The access as EXPLAIN lines at `depth` (see [`Plan::explain_with`];
    /// its key is the access's address).
    pub fn explain_into(&self, out: &mut Vec<String>, depth: usize, ann: &dyn Fn(usize) -> String) {
        let pad = pad(depth);
        let note = ann(self as *const Access as usize);
        let detail =
            |out: &mut Vec<String>, text: String| out.push(format!("{}  {text}", " ".repeat(depth * 6)));
        let name = self.table.name();
        let alias = if self.alias != name { format!(" {}", self.alias) } else { String::new() };
        match &self.path {
            AccessPath::Scan => out.push(format!("{pad}Seq Scan on {name}{alias}{note}")),
            AccessPath::Key { index, hash, .. } | AccessPath::Keys { index, hash, .. } => {
                let kind = if *hash { "Hash Index Lookup" } else { "Index Scan" };
                out.push(format!("{pad}{kind} using {index} on {name}{alias}{note}"));
                detail(out, format!("Index Cond: {}", self.cond_text));
            }
            AccessPath::Range { index, dir, .. } => {
                let kind = match dir {
                    centum_engine::Direction::Forward => "Index Scan",
                    centum_engine::Direction::Backward => "Index Scan Backward",
                };
                out.push(format!("{pad}{kind} using {index} on {name}{alias}{note}"));
                if !self.cond_text.is_empty() {
                    detail(out, format!("Index Cond: {}", self.cond_text));
                }
            }
        }
        if !self.filter_text.is_empty() {
            detail(out, format!("Filter: {}", self.filter_text));
        }
    }
}

fn join_suffix(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "",
        JoinKind::Left => " Left Join",
        JoinKind::Right => " Right Join",
        JoinKind::Full => " Full Join",
    }
}

impl Plan {
    /// Whether any expression of the plan, its inputs or its subqueries
    /// reads an outer column: a plan that does not gives the same rows
    /// wherever it is evaluated in one statement.
    pub fn reads_outer(&self) -> bool {
        let mut found = false;
        self.each_expr(&mut |e| {
            e.walk(&mut |x| match x {
                Expr::Outer(_) => found = true,
                Expr::Subquery(p, _) => found |= p.reads_outer(),
                _ => {}
            })
        });
        found
    }

    /// Whether running the plan could read rows of `table`: it reads the
    /// table, or calls a routine (which may read anything). An INSERT
    /// whose source cannot see its own rows can stream them.
    pub fn may_read(&self, table: &centum_engine::Table) -> bool {
        let mut found = false;
        let mut check = |e: &Expr| {
            e.walk(&mut |x| match x {
                Expr::Subquery(p, _) => found |= p.may_read(table),
                Expr::Routine(..) => found = true,
                _ => {}
            })
        };
        self.each_expr(&mut check);
        found || self.inputs_read(table)
    }

    fn inputs_read(&self, table: &centum_engine::Table) -> bool {
        match self {
            Plan::Access(a) => a.table.id() == table.id(),
            Plan::Routine { .. } => true,
            p => {
                let mut found = false;
                p.each_input(&mut |i| found |= i.inputs_read(table));
                found
            }
        }
    }

    /// Calls `f` on every expression of this plan and its inputs.
    pub(crate) fn each_expr(&self, f: &mut impl FnMut(&Expr)) {
        self.own_exprs(f);
        self.each_input(&mut |p| p.each_expr(f));
    }

    /// Calls `f` on each input of this operator (none for a leaf).
    fn each_input(&self, f: &mut impl FnMut(&Plan)) {
        match self {
            Plan::Values { .. }
            | Plan::Access(_)
            | Plan::System(_)
            | Plan::Series { .. }
            | Plan::Routine { .. }
            | Plan::Decoding { .. }
            | Plan::WorkTable { .. }
            | Plan::Unnest { .. } => {}
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Window { input, .. }
            | Plan::Limit { input, .. }
            | Plan::ProjectSet { input, .. }
            | Plan::Lock { input, .. }
            | Plan::Writes { input, .. }
            | Plan::Distinct { input, .. } => f(input),
            Plan::NestedLoop { left, right, .. }
            | Plan::HashJoin { left, right, .. }
            | Plan::SetOp { left, right, .. }
            | Plan::Recursive { anchor: left, step: right, .. } => {
                f(left);
                f(right);
            }
        }
    }

    /// Calls `f` on the expressions of this operator itself, not of its
    /// inputs.
    fn own_exprs(&self, f: &mut impl FnMut(&Expr)) {
        let bound = |b: &std::ops::Bound<Expr>, f: &mut dyn FnMut(&Expr)| {
            if let std::ops::Bound::Included(e) | std::ops::Bound::Excluded(e) = b {
                f(e);
            }
        };
        match self {
            Plan::Values { rows } => rows.iter().flatten().for_each(&mut *f),
            Plan::Access(a) => {
                match &a.path {
                    AccessPath::Scan => {}
                    AccessPath::Key { key, .. } => key.iter().for_each(&mut *f),
                    AccessPath::Keys { keys, .. } => keys.iter().for_each(&mut *f),
                    AccessPath::Range { eq, lower, upper, .. } => {
                        eq.iter().for_each(&mut *f);
                        bound(lower, f);
                        bound(upper, f);
                    }
                }
                a.filter.iter().chain(a.bound_check.as_deref()).for_each(&mut *f);
            }
            Plan::Filter { pred, .. } => f(pred),
            Plan::Project { exprs, .. } => exprs.iter().for_each(&mut *f),
            Plan::NestedLoop { on, .. } => on.iter().for_each(&mut *f),
            Plan::HashJoin { left_keys, right_keys, on, .. } => {
                left_keys.iter().chain(right_keys).chain(on).for_each(&mut *f)
            }
            Plan::Aggregate { group, aggs, .. } => {
                group.iter().for_each(&mut *f);
                for a in aggs {
                    a.args.iter().for_each(&mut *f);
                    a.order.iter().for_each(|k| f(&k.expr));
                    a.filter.iter().for_each(&mut *f);
                }
            }
            Plan::Sort { keys, .. } => keys.iter().for_each(|k| f(&k.expr)),
            Plan::Window { calls, .. } => {
                for c in calls {
                    c.args.iter().chain(&c.partition).for_each(&mut *f);
                    c.order.iter().for_each(|k| f(&k.expr));
                    for b in [&c.frame.start, &c.frame.end] {
                        if let FrameBound::Preceding(e) | FrameBound::Following(e) = b {
                            f(e);
                        }
                    }
                    if let WindowFunc::Aggregate(a) = &c.func {
                        a.args.iter().chain(&a.filter).for_each(&mut *f);
                        a.order.iter().for_each(|k| f(&k.expr));
                    }
                }
            }
            Plan::Limit { limit, offset, .. } => limit.iter().chain(offset).for_each(&mut *f),
            Plan::Lock { recheck, exprs, .. } => recheck.iter().chain(exprs).for_each(&mut *f),
            Plan::Distinct { .. }
            | Plan::SetOp { .. }
            | Plan::System(_)
            | Plan::Recursive { .. }
            | Plan::ProjectSet { .. }
            | Plan::Writes { .. }
            | Plan::WorkTable { .. } => {}
            Plan::Series { args }
            | Plan::Routine { args, .. }
            | Plan::Unnest { args, .. }
            | Plan::Decoding { args, .. } => args.iter().for_each(&mut *f),
        }
    }

    /// Marks in each table access the columns the plan reads, so that the
    /// others are never decoded (left NULL); `needed` are the columns of
    /// this operator's output that its consumer reads, `None` for all.
    ///
    /// The pass is conservative: an operator that passes rows through
    /// (filter, sort, limit) adds the columns its own expressions read;
    /// one that computes its output (projection, aggregate) asks only for
    /// what its expressions read; joins, set operations and DISTINCT ask
    /// for every column; and an expression with a subquery asks for every
    /// column, because the subquery sees the whole row as its outer row.
    pub fn prune_columns(&mut self, needed: Option<Vec<usize>>) {
        let mut own: Option<Vec<usize>> = Some(Vec::new());
        self.own_exprs(&mut |e| {
            e.walk(&mut |x| match x {
                Expr::Column(c) => own.iter_mut().for_each(|v| v.push(*c)),
                Expr::Subquery(..) => own = None,
                _ => {}
            })
        });
        let consumer = if matches!(self, Plan::Access(_)) { needed.clone() } else { None };
        // What the consumer reads and what this operator's own expressions
        // read, for operators that pass rows through.
        let both = |own: Option<Vec<usize>>| {
            needed.zip(own).map(|(mut n, o)| {
                n.extend(o);
                n
            })
        };
        match self {
            Plan::Access(a) => {
                let width = a.table.columns().len();
                let mask = |cols: Vec<usize>| {
                    let mut mask = vec![false; width];
                    for c in cols {
                        if let Some(m) = mask.get_mut(c) {
                            *m = true;
                        }
                    }
                    mask.into_boxed_slice()
                };
                a.consumer_columns = consumer.map(mask);
                a.columns = both(own).map(mask);
            }
            // A window passes its input's rows through, its own columns
            // after them.
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Writes { input, .. }
            | Plan::Window { input, .. } => input.prune_columns(both(own)),
            Plan::Project { input, .. } | Plan::Aggregate { input, .. } => input.prune_columns(own),
            Plan::Values { .. }
            | Plan::System(_)
            | Plan::Series { .. }
            | Plan::Routine { .. }
            | Plan::Decoding { .. }
            | Plan::WorkTable { .. }
            | Plan::Unnest { .. } => {}
            // A lock's expressions read the locked row, not its input's.
            Plan::Distinct { input, .. } | Plan::ProjectSet { input, .. } | Plan::Lock { input, .. } => {
                input.prune_columns(None)
            }
            Plan::NestedLoop { left, right, .. }
            | Plan::HashJoin { left, right, .. }
            | Plan::SetOp { left, right, .. }
            | Plan::Recursive { anchor: left, step: right, .. } => {
                left.prune_columns(None);
                right.prune_columns(None);
            }
        }
    }
}
