//! Errors of the SQL layer.
//!
//! One small enum for everything a statement can fail with. Each variant
//! maps to the PostgreSQL SQLSTATE a client expects ([`Error::sqlstate`]),
//! and [`Error::is_retryable`] tells a client (or the server's retry loop)
//! that running the whole transaction again may succeed. Engine and type
//! errors keep their own codes.

use centum_types::TypeError;

/// The SQL layer's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Context lines an error collects at most (a runaway recursion would
/// otherwise carry one per level).
pub const MAX_CONTEXT_LINES: usize = 32;

/// Everything a statement can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not SQL the parser understands (42601).
    #[error("{0}")]
    Syntax(String),
    /// The storage engine refused (its own SQLSTATE).
    #[error(transparent)]
    Engine(#[from] centum_engine::Error),
    /// A value could not be converted or is out of range (class 22 / 42804).
    #[error(transparent)]
    Type(#[from] TypeError),
    /// No such table (42P01).
    #[error("relation \"{0}\" does not exist")]
    UndefinedTable(String),
    /// No such column (42703).
    #[error("column {0} does not exist")]
    UndefinedColumn(String),
    /// A column name matches more than one table in scope (42702).
    #[error("column reference \"{0}\" is ambiguous")]
    AmbiguousColumn(String),
    /// No such function for these argument types (42883).
    #[error("function {0} does not exist")]
    UndefinedFunction(String),
    /// No such index, sequence, schema, constraint or setting (42704).
    #[error("{0}")]
    UndefinedObject(String),
    /// An object of that name exists already (42P07, 42710 for others).
    #[error("{message}")]
    Duplicate {
        /// 42P07 for relations, 42710 for other objects, 42P06 for schemas.
        code: &'static str,
        /// The message.
        message: String,
    },
    /// Operand types that no operator or context accepts (42804 / 42883).
    #[error("{message}")]
    TypeMismatch {
        /// 42804 datatype_mismatch or 42883 undefined_function (operators).
        code: &'static str,
        /// The message.
        message: String,
    },
    /// A column used outside GROUP BY, an aggregate where none is allowed
    /// (42803).
    #[error("{0}")]
    Grouping(String),
    /// Division by zero (22012).
    #[error("division by zero")]
    DivisionByZero,
    /// A CHECK constraint failed (23514).
    #[error("new row for relation \"{table}\" violates check constraint \"{constraint}\"")]
    CheckViolation {
        /// The table.
        table: String,
        /// The constraint.
        constraint: String,
    },
    /// A FOREIGN KEY constraint failed (23503).
    #[error("{message}")]
    ForeignKeyViolation {
        message: String,
        /// The key and what it is missing from or still referenced by.
        detail: Option<String>,
        /// The table the constraint belongs to (engine name).
        table: String,
        constraint: String,
    },
    /// A scalar subquery returned more than one row (21000).
    #[error("more than one row returned by a subquery used as an expression")]
    Cardinality,
    /// A statement inside a failed transaction block (25P02).
    #[error("current transaction is aborted, commands ignored until end of transaction block")]
    InFailedTransaction,
    /// A statement not allowed in the transaction's current state (25001 and
    /// friends).
    #[error("{message}")]
    TransactionState {
        /// The SQLSTATE.
        code: &'static str,
        /// The message.
        message: String,
    },
    /// A statement ran past `statement_timeout` or was cancelled (57014).
    #[error("canceling statement due to {0}")]
    Canceled(&'static str),
    /// A statement nested deeper than the stack allows (54001): the
    /// message says what was nested.
    #[error("stack depth limit exceeded ({0})")]
    StackDepth(&'static str),
    /// A statement needed more memory than its budget or the server's
    /// limit allows (53200); the message names the limit.
    #[error("{0}")]
    OutOfMemory(String),
    /// Valid SQL that Centum does not implement (0A000).
    #[error("{0}")]
    Unsupported(String),
    /// An invalid argument or setting value (22023).
    #[error("{0}")]
    InvalidParameter(String),
    /// RAISE EXCEPTION in a routine, with its SQLSTATE and USING options.
    #[error("{message}")]
    Raised {
        /// The SQLSTATE (P0001 unless the RAISE names one).
        code: &'static str,
        /// The message.
        message: String,
        /// USING DETAIL.
        detail: Option<String>,
        /// USING HINT.
        hint: Option<String>,
    },
    /// An error raised inside a routine, with where it happened: one line
    /// per routine, innermost first (PostgreSQL's CONTEXT field).
    #[error("{inner}")]
    Context {
        /// The error.
        inner: Box<Error>,
        /// The context lines.
        context: String,
    },
    /// A table or definition that an open transaction has changed and not
    /// yet committed (55P03 where it is met too late to wait for it). The
    /// session waits for `owner` and plans the statement again when it
    /// meets this while planning.
    #[error(
        "could not obtain lock on relation \"{relation}\": a transaction in progress changed its definition"
    )]
    Claimed {
        /// The transaction holding the change.
        owner: centum_engine::TxnId,
        /// The relation (or other object) it changed.
        relation: String,
    },
    /// Any other error with a SQLSTATE of its own.
    #[error("{message}")]
    Other {
        /// The SQLSTATE.
        code: &'static str,
        /// The message.
        message: String,
    },
}

impl Error {
    /// The PostgreSQL SQLSTATE for this error.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            Error::Syntax(_) => "42601",
            Error::Engine(e) => e.sqlstate(),
            Error::Type(e) => e.sqlstate(),
            Error::UndefinedTable(_) => "42P01",
            Error::UndefinedColumn(_) => "42703",
            Error::AmbiguousColumn(_) => "42702",
            Error::UndefinedFunction(_) => "42883",
            Error::UndefinedObject(_) => "42704",
            Error::Duplicate { code, .. } => code,
            Error::TypeMismatch { code, .. } => code,
            Error::Grouping(_) => "42803",
            Error::DivisionByZero => "22012",
            Error::CheckViolation { .. } => "23514",
            Error::ForeignKeyViolation { .. } => "23503",
            Error::Cardinality => "21000",
            Error::InFailedTransaction => "25P02",
            Error::TransactionState { code, .. } => code,
            Error::Canceled(_) => "57014",
            Error::StackDepth(_) => "54001",
            Error::OutOfMemory(_) => "53200",
            Error::Unsupported(_) => "0A000",
            Error::InvalidParameter(_) => "22023",
            Error::Raised { code, .. } => code,
            Error::Context { inner, .. } => inner.sqlstate(),
            Error::Claimed { .. } => "55P03",
            Error::Other { code, .. } => code,
        }
    }

    /// The transaction whose uncommitted schema change the statement met
    /// ([`Error::Claimed`], inside routines' context too).
    pub fn claimed_by(&self) -> Option<centum_engine::TxnId> {
        match self {
            Error::Claimed { owner, .. } => Some(*owner),
            Error::Context { inner, .. } => inner.claimed_by(),
            _ => None,
        }
    }

    /// Where the error happened inside routines (CONTEXT), if it did.
    pub fn context(&self) -> Option<&str> {
        match self {
            Error::Context { context, .. } => Some(context),
            _ => None,
        }
    }

    /// The DETAIL a RAISE (or a foreign key's failure) gave.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Error::Raised { detail, .. } | Error::ForeignKeyViolation { detail, .. } => detail.as_deref(),
            Error::Context { inner, .. } => inner.detail(),
            Error::Type(TypeError::MalformedRecord { detail, .. }) => Some(detail),
            _ => None,
        }
    }

    /// The HINT a RAISE (or the error itself) gave.
    pub fn hint(&self) -> Option<&str> {
        match self {
            Error::Raised { hint, .. } => hint.as_deref(),
            Error::Context { inner, .. } => inner.hint(),
            _ => None,
        }
    }

    /// What a constraint violation names, as PostgreSQL's error fields
    /// carry it: the schema and table, the column (NOT NULL) and the
    /// constraint. Drivers read them (psycopg's `diag.constraint_name`).
    pub fn fields(&self) -> ErrorFields {
        let (table, column, constraint) = match self {
            Error::Context { inner, .. } => return inner.fields(),
            Error::CheckViolation { table, constraint } => (table, None, Some(constraint)),
            Error::ForeignKeyViolation { table, constraint, .. } => (table, None, Some(constraint)),
            Error::Engine(centum_engine::Error::UniqueViolation { index, table }) => {
                (table, None, Some(index))
            }
            Error::Engine(centum_engine::Error::NotNullViolation { table, column }) => {
                (table, Some(column), None)
            }
            _ => return ErrorFields::default(),
        };
        let (schema, table) = match table.split_once('.') {
            Some((s, t)) => (s.to_string(), t.to_string()),
            None => ("public".to_string(), table.clone()),
        };
        ErrorFields {
            schema: Some(schema),
            table: Some(table),
            column: column.cloned(),
            constraint: constraint.cloned(),
        }
    }

    /// The same error with one more context line (an outer routine), up
    /// to [`MAX_CONTEXT_LINES`] lines.
    pub fn with_context(self, line: String) -> Error {
        match self {
            // A deep recursion's context stops growing after a while: its
            // first lines say where it went wrong.
            Error::Context { inner, context } if context.matches('\n').count() + 1 >= MAX_CONTEXT_LINES => {
                Error::Context { inner, context }
            }
            Error::Context { inner, context } => {
                Error::Context { inner, context: format!("{context}\n{line}") }
            }
            e => Error::Context { inner: Box::new(e), context: line },
        }
    }

    /// The engine's [`centum_engine::Error::WouldWait`] inside this error,
    /// if it is one (see `Session::set_asynchronous`): no handler catches
    /// it, and no client sees it.
    pub fn would_wait(&self) -> Option<&centum_engine::Error> {
        match self {
            Error::Engine(e @ centum_engine::Error::WouldWait { .. }) => Some(e),
            Error::Context { inner, .. } => inner.would_wait(),
            _ => None,
        }
    }

    /// Whether running the whole transaction again may succeed (40001,
    /// 40P01).
    pub fn is_retryable(&self) -> bool {
        matches!(self.sqlstate(), "40001" | "40P01")
    }

    /// A 0A000 error for a feature Centum does not have.
    pub fn unsupported(what: impl std::fmt::Display) -> Error {
        Error::Unsupported(format!("{what} is not supported"))
    }

    /// A type error with 42804 (datatype_mismatch).
    pub fn mismatch(message: impl Into<String>) -> Error {
        Error::TypeMismatch { code: "42804", message: message.into() }
    }

    /// 25006: `what` cannot run in a READ ONLY transaction.
    pub fn read_only(what: &str) -> Error {
        Error::TransactionState {
            code: "25006",
            message: format!("cannot execute {what} in a read-only transaction"),
        }
    }

    /// 25006: `what`, which a READ ONLY transaction may run, cannot run on
    /// a standby (PostgreSQL's "during recovery").
    pub fn during_recovery(what: &str) -> Error {
        Error::TransactionState { code: "25006", message: format!("cannot execute {what} during recovery") }
    }

    /// An error with an explicit SQLSTATE.
    pub fn other(code: &'static str, message: impl Into<String>) -> Error {
        Error::Other { code, message: message.into() }
    }
}

/// The objects an error names (see [`Error::fields`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorFields {
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub constraint: Option<String>,
}
