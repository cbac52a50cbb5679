//! Execution: runs plans inside an engine transaction.
//!
//! Operators are iterators that pull rows from their inputs ([`query`]);
//! a leaf reads the engine through its access path, so `LIMIT` over an
//! index scan stops reading when it has enough. Sorting, grouping and the
//! build side of a hash join gather their input first. DML ([`dml`])
//! drives the same leaves to find the rows it changes.

pub(crate) mod aggregate;
pub(crate) mod ddl;
pub(crate) mod dml;
pub(crate) mod eval;
pub(crate) mod grant;
pub(crate) mod prefilter;
pub mod profile;
pub(crate) mod query;
pub(crate) mod routine;
pub(crate) mod sort;
pub(crate) mod triggers;
pub(crate) mod views;
pub(crate) mod window;

use crate::error::Result;
use crate::planner::Dictionary;
use crate::planner::Statement;
use crate::settings::DEFAULT_STATEMENT_MEM;
use centum_engine::Transaction;
use centum_types::{TimestampTz, Value};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::time::Instant;

/// Everything a running statement needs.
pub struct ExecCtx<'a> {
    /// The transaction it runs in.
    pub txn: &'a Transaction,
    /// The SQL catalog.
    pub catalog: &'a Dictionary,
    /// Parameter values, already of their inferred types.
    pub params: &'a [Value],
    /// The session's last `nextval` per sequence.
    pub currval: &'a RefCell<HashMap<String, i64>>,
    /// When the statement started, read on first use.
    pub statement_time: OnceCell<TimestampTz>,
    /// For a statement inside a routine or trigger: the calling
    /// statement's time, which it shares (read on first use by either).
    pub outer_time: Option<&'a OnceCell<TimestampTz>>,
    /// When the transaction block started (`None`: a lone statement, whose
    /// transaction starts with it).
    pub transaction_time: Option<TimestampTz>,
    /// When the statement must stop (`statement_timeout`).
    pub deadline: Option<Instant>,
    /// Set by a client's cancel request while the statement runs.
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// Results of subqueries that read no outer column, computed once per
    /// statement; `None` marks a correlated subquery. Keyed by the plan's
    /// address, which is stable while the statement runs.
    pub(crate) subqueries: RefCell<HashMap<usize, Option<std::rc::Rc<eval::SubqueryRows>>>>,
    /// Membership sets of `IN` lists and `= ANY` arrays whose members are
    /// constant for the statement, built on first use; `None` marks one
    /// that is not. Keyed by the expression's address.
    pub(crate) in_sets: RefCell<HashMap<usize, Option<std::rc::Rc<eval::InSet>>>>,
    /// The rows the last round of each running `WITH RECURSIVE` added,
    /// by its work id (see `Plan::Recursive`).
    pub(crate) work_tables: RefCell<HashMap<usize, std::rc::Rc<Vec<Vec<Value>>>>>,
    /// The virtual catalog's view of the catalog, taken on first use so
    /// every catalog table and function in the statement agrees.
    pub(crate) system: OnceCell<std::rc::Rc<crate::system::snapshot::Snapshot>>,
    /// Who runs the statement (`current_user`, the catalog's role).
    pub(crate) identity: crate::system::Identity<'a>,
    /// NOTICEs raised while the statement runs (RAISE NOTICE in a
    /// routine), shared with the contexts of statements nested in it.
    pub(crate) notices: std::rc::Rc<RefCell<Vec<String>>>,
    /// The transaction is READ ONLY: a write a routine attempts fails.
    pub(crate) read_only: bool,
    /// The memory the statement's buffers may hold, shared with the
    /// statements of the routines it calls.
    pub(crate) budget: std::rc::Rc<Budget>,
    /// Work done since the deadline was last read (see [`ExecCtx::tick`]).
    ticks: std::cell::Cell<u32>,
    /// Set under EXPLAIN ANALYZE: what each plan node did.
    pub(crate) profile: Option<profile::Profile>,
    /// Rows that an INSERT ... VALUES of parameters takes instead of its
    /// VALUES, one parameter list each (COPY FROM, see [`Bulk`]).
    pub(crate) bulk: Option<&'a Bulk>,
}

/// Rows for one run of a prepared `INSERT INTO t (cols) VALUES ($1, ...)`,
/// each the parameters of one run, already of the columns' types: COPY
/// FROM inserts a batch of lines as one statement instead of one
/// statement per line.
#[derive(Default)]
pub(crate) struct Bulk {
    /// The rows, taken by the INSERT.
    pub(crate) rows: RefCell<Vec<Vec<Value>>>,
    /// How many of them the INSERT has inserted (on an error: the
    /// position of the row that failed).
    pub(crate) done: std::cell::Cell<usize>,
}

/// A statement's memory budget (`statement_mem`): every row an operator
/// holds on to (a sort's input, a hash table, grouped rows, a
/// materialised subquery, the rows a DML statement changes, the result)
/// is charged to it, and the statement fails with 53200 past it. Charges
/// are only ever added: what one operator frees is not given back to
/// another, so the bound is on everything the statement buffered.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: std::cell::Cell<usize>,
}

/// Units of work between two reads of the clock (see [`ExecCtx::tick`]).
pub(crate) const TICKS_PER_CHECK: u32 = 64;

/// Result of a DDL statement: the command tag and notices.
pub(crate) struct DdlOutcome {
    pub tag: String,
    pub notices: Vec<String>,
}

/// Bytes of one string that count as one unit of work: about the bytes a
/// row's worth of time copies or scans.
pub(crate) const TICK_BYTES: usize = 16 * 1024;

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Budget {
        Budget { limit, used: std::cell::Cell::new(0) }
    }

    /// The bytes charged so far.
    pub(crate) fn used(&self) -> usize {
        self.used.get()
    }

    /// Charges `bytes`; fails with 53200 once the total passes the limit.
    #[inline]
    pub(crate) fn charge(&self, bytes: usize) -> Result<()> {
        let used = self.used.get().saturating_add(bytes);
        self.used.set(used);
        if used > self.limit {
            return Err(crate::error::Error::OutOfMemory(format!(
                "out of memory: the statement holds more than statement_mem ({})",
                centum_engine::memory::show_size(self.limit)
            )));
        }
        Ok(())
    }

    /// Charges what `row` takes.
    #[inline]
    pub(crate) fn hold(&self, row: &[Value]) -> Result<()> {
        self.charge(row_bytes(row))
    }

    /// Charges `row` as kept in `rows`, then keeps it: its allocation as
    /// allocated (capacity, not length) and its slot twice, since `rows`
    /// grows by doubling.
    #[inline]
    pub(crate) fn keep(&self, rows: &mut Vec<Vec<Value>>, row: Vec<Value>) -> Result<()> {
        let slack = (row.capacity() - row.len()) * std::mem::size_of::<Value>();
        self.charge(row_bytes(&row) + slack + std::mem::size_of::<Vec<Value>>())?;
        rows.push(row);
        Ok(())
    }
}

/// About the bytes a buffered row takes: its vector, its values, and what
/// they point to.
pub(crate) fn row_bytes(row: &[Value]) -> usize {
    let heap: usize = row
        .iter()
        .map(|v| match v {
            Value::Text(s) => s.capacity(),
            Value::Bytea(b) => b.capacity(),
            Value::Array(items) => row_bytes(items),
            _ => 0,
        })
        .sum();
    std::mem::size_of::<Vec<Value>>() + std::mem::size_of_val(row) + heap
}

impl<'a> ExecCtx<'a> {
    /// A context for one statement.
    pub fn new(
        txn: &'a Transaction,
        catalog: &'a Dictionary,
        params: &'a [Value],
        currval: &'a RefCell<HashMap<String, i64>>,
        transaction_time: Option<TimestampTz>,
        deadline: Option<Instant>,
    ) -> ExecCtx<'a> {
        ExecCtx {
            txn,
            catalog,
            params,
            currval,
            statement_time: OnceCell::new(),
            outer_time: None,
            transaction_time,
            deadline,
            cancel: None,
            subqueries: RefCell::new(HashMap::new()),
            in_sets: RefCell::new(HashMap::new()),
            work_tables: RefCell::new(HashMap::new()),
            system: OnceCell::new(),
            identity: crate::system::Identity::DEFAULT,
            notices: Default::default(),
            read_only: false,
            budget: std::rc::Rc::new(Budget::new(DEFAULT_STATEMENT_MEM)),
            ticks: Default::default(),
            profile: None,
            bulk: None,
        }
    }

    /// A context for a statement run inside a routine called by this
    /// statement: the same transaction, times, limits and identity, with
    /// the routine's slots as parameters.
    pub(crate) fn nested<'b>(&'b self, params: &'b [Value]) -> ExecCtx<'b> {
        ExecCtx {
            txn: self.txn,
            catalog: self.catalog,
            params,
            currval: self.currval,
            statement_time: OnceCell::new(),
            outer_time: Some(self.outer_time.unwrap_or(&self.statement_time)),
            transaction_time: self.transaction_time,
            deadline: self.deadline,
            cancel: self.cancel,
            subqueries: RefCell::new(HashMap::new()),
            in_sets: RefCell::new(HashMap::new()),
            work_tables: RefCell::new(HashMap::new()),
            system: OnceCell::new(),
            identity: self.identity,
            notices: self.notices.clone(),
            read_only: self.read_only,
            budget: self.budget.clone(),
            ticks: Default::default(),
            // A routine's statements are not part of the caller's plan.
            profile: None,
            bulk: None,
        }
    }

    /// Queues a NOTICE for the client.
    pub(crate) fn notice(&self, text: String) {
        self.notices.borrow_mut().push(text);
    }

    /// The same context for a session known as `id`.
    pub(crate) fn identified(mut self, id: crate::system::Identity<'a>) -> ExecCtx<'a> {
        self.identity = id;
        self
    }

    /// The statement's snapshot of the catalog for the virtual catalog.
    pub(crate) fn system_snapshot(
        &self,
    ) -> crate::error::Result<std::rc::Rc<crate::system::snapshot::Snapshot>> {
        if let Some(s) = self.system.get() {
            return Ok(s.clone());
        }
        let s = std::rc::Rc::new(self.catalog.snapshot()?);
        Ok(self.system.get_or_init(|| s).clone())
    }

    /// Counts `work` units (a row is one; a long string is one per
    /// [`TICK_BYTES`]) and reads the clock and the cancel flag once every
    /// [`TICKS_PER_CHECK`] units, so a statement notices its deadline within
    /// a bounded amount of work however the work is spread over its rows,
    /// at the price of one clock read per 64 rows.
    #[inline]
    pub(crate) fn tick(&self, work: u32) -> crate::error::Result<()> {
        let t = self.ticks.get().saturating_add(work);
        if t < TICKS_PER_CHECK {
            self.ticks.set(t);
            return Ok(());
        }
        self.ticks.set(0);
        self.check_deadline()
    }

    /// [`ExecCtx::tick`] for handling `bytes` of a value at once.
    #[inline]
    pub(crate) fn tick_bytes(&self, bytes: usize) -> crate::error::Result<()> {
        if bytes < TICK_BYTES {
            return Ok(());
        }
        self.tick(u32::try_from(bytes / TICK_BYTES).unwrap_or(u32::MAX))
    }

    /// Fails once the statement has run past its deadline.
    pub(crate) fn check_deadline(&self) -> crate::error::Result<()> {
        // A long statement gives up its server worker here.
        centum_engine::blocking::checkpoint();
        if self.cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(crate::error::Error::Canceled("user request"));
        }
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(crate::error::Error::Canceled("statement timeout")),
            _ => Ok(()),
        }
    }
}

/// Runs the data-modifying statements of a WITH, in order, keeping each
/// one's RETURNING rows under its work id (see `Plan::Writes`).
pub(crate) fn run_writes(writes: &[(usize, Statement)], cx: &ExecCtx) -> Result<()> {
    for (work, statement) in writes {
        let (rows, _) = run_statement(statement, cx)?;
        cx.work_tables.borrow_mut().insert(*work, std::rc::Rc::new(rows));
    }
    Ok(())
}

/// Runs a planned statement in `cx`: its rows (for a query or RETURNING)
/// and the number of rows it returned or changed.
pub(crate) fn run_statement(statement: &Statement, cx: &ExecCtx) -> Result<(Vec<Vec<Value>>, u64)> {
    if cx.read_only {
        let write = match statement {
            Statement::Insert(_) => Some("INSERT"),
            Statement::Update(_) => Some("UPDATE"),
            Statement::Delete(_) => Some("DELETE"),
            Statement::Merge(_) => Some("MERGE"),
            Statement::ViewWrite(w) => Some(w.command()),
            _ => None,
        };
        if let Some(w) = write {
            return Err(crate::error::Error::read_only(w));
        }
    }
    Ok(match statement {
        Statement::Query(plan) => {
            if cx.profile.is_none() {
                if let Some(rows) = query::point(plan, cx, &[])? {
                    let n = rows.len() as u64;
                    return Ok((rows, n));
                }
            }
            let mut rows = Vec::new();
            for r in query::open(plan, cx, vec![])? {
                let r = r?;
                cx.budget.hold(&r)?;
                rows.push(r);
                cx.tick(1)?;
            }
            let n = rows.len() as u64;
            (rows, n)
        }
        Statement::Insert(i) => {
            let o = dml::insert(i, cx)?;
            (o.rows, o.count)
        }
        Statement::Update(u) => {
            let o = dml::update(u, cx)?;
            (o.rows, o.count)
        }
        Statement::Delete(d) => {
            let o = dml::delete(d, cx)?;
            (o.rows, o.count)
        }
        Statement::Merge(m) => {
            let o = dml::merge(m, cx)?;
            (o.rows, o.count)
        }
        Statement::ViewWrite(w) => {
            let o = dml::view_write(w, cx)?;
            (o.rows, o.count)
        }
        Statement::Call(c) => {
            let mut args = Vec::with_capacity(c.args.len());
            for a in &c.args {
                args.push(eval::eval(a, &[], &[], cx)?);
            }
            let out = crate::execution::routine::call(&c.routine, args, cx)?;
            if out.outs.is_empty() {
                (vec![], 0)
            } else {
                (vec![out.outs], 1)
            }
        }
        Statement::Explain(_) => (vec![], 0),
        Statement::ExplainAnalyze(_) => {
            return Err(crate::error::Error::unsupported("EXPLAIN ANALYZE inside a routine"))
        }
        Statement::Utility(s) => {
            return Err(crate::error::Error::other(
                "0A000",
                format!("{} cannot run here", s.to_string().split_whitespace().next().unwrap_or("")),
            ))
        }
    })
}
