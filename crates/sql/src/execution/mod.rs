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
pub mod functions;
pub(crate) mod query;

use crate::catalog::Catalog;
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
    pub catalog: &'a Catalog,
    /// Parameter values, already of their inferred types.
    pub params: &'a [Value],
    /// The session's last `nextval` per sequence.
    pub currval: &'a RefCell<HashMap<String, i64>>,
    /// When the statement started, read on first use.
    pub statement_time: OnceCell<TimestampTz>,
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
    /// The virtual catalog's view of the catalog, taken on first use so
    /// every catalog table and function in the statement agrees.
    pub(crate) system: OnceCell<std::rc::Rc<crate::system::snapshot::Snapshot>>,
    /// Who runs the statement (`current_user`, the catalog's role).
    pub(crate) identity: crate::system::Identity<'a>,
}

impl<'a> ExecCtx<'a> {
    /// A context for one statement.
    pub fn new(
        txn: &'a Transaction,
        catalog: &'a Catalog,
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
            transaction_time,
            deadline,
            cancel: None,
            subqueries: RefCell::new(HashMap::new()),
            system: OnceCell::new(),
            identity: crate::system::Identity::DEFAULT,
        }
    }

    /// The same context for a session that logged in as `user` to
    /// `database`.
    pub fn with_identity(mut self, user: &'a str, database: &'a str) -> ExecCtx<'a> {
        self.identity = crate::system::Identity { user, database };
        self
    }

    /// The statement's snapshot of the catalog for the virtual catalog.
    pub(crate) fn system_snapshot(
        &self,
    ) -> crate::error::Result<std::rc::Rc<crate::system::snapshot::Snapshot>> {
        if let Some(s) = self.system.get() {
            return Ok(s.clone());
        }
        let s = std::rc::Rc::new(crate::system::snapshot::Snapshot::take(self.catalog)?);
        Ok(self.system.get_or_init(|| s).clone())
    }

    /// Fails once the statement has run past its deadline.
    pub(crate) fn check_deadline(&self) -> crate::error::Result<()> {
        if self.cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(crate::error::Error::Canceled("user request"));
        }
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(crate::error::Error::Canceled("statement timeout")),
            _ => Ok(()),
        }
    }
}
