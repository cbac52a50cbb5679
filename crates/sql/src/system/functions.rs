//! Functions over the catalog and the few array and regular-expression
//! functions psql and drivers send.
//!
//! A call is bound to a [`CatalogFn`] with its arguments coerced to the
//! parameter types; it runs with the statement's [`Snapshot`], so a
//! prepared statement sees the catalog as it is when it runs. Functions
//! that depend on the search path get it as a last argument, captured when
//! the statement was planned (as the rest of the SQL layer resolves names
//! at plan time).

use super::snapshot::{hash_buckets, ConKind, RelRef, Snapshot, TableRel};
use super::types;
use super::Identity;
use super::SystemTable;
use crate::catalog::RefAction;
use crate::error::{Error, Result};
use crate::functions::array_text;
use crate::functions::integer;
use crate::names::{quote_ident, quote_literal};
use crate::privileges::ObjectKind;
use centum_types::{DataType, Value};
use std::cell::RefCell;
use std::collections::HashMap;

/// A function of the virtual catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogFn {
    /// `pg_table_is_visible(oid)` (+ search path).
    TableIsVisible,
    /// `format_type(oid, typmod)`.
    FormatType,
    /// `pg_get_expr(text, oid [, pretty])`.
    GetExpr,
    /// `pg_get_indexdef(oid [, column, pretty])`.
    GetIndexdef,
    /// `pg_get_constraintdef(oid [, pretty])`.
    GetConstraintdef,
    /// `pg_get_userbyid(oid)`.
    GetUserById,
    /// `pg_encoding_to_char(int)`.
    EncodingToChar,
    /// `obj_description`, `col_description`, `shobj_description`: there
    /// are no comments.
    Description,
    /// `pg_get_statisticsobjdef_columns`: there are no such objects.
    NoObject,
    /// `pg_get_triggerdef(oid [, pretty])`: the CREATE TRIGGER text.
    TriggerDef,
    /// `pg_get_replica_identity_index(oid)`: the primary key's index.
    ReplicaIdentityIndex,
    /// A column of `pg_get_publication_tables(name)` (see
    /// [`PUBLICATION_TABLES`]).
    PublicationTables(u8),
    /// `pg_function_is_visible(oid)`: true for every routine (one
    /// namespace).
    FunctionIsVisible,
    /// `pg_get_function_result(oid)`.
    FunctionResult,
    /// `pg_get_function_arguments(oid)`.
    FunctionArguments,
    /// `pg_get_functiondef(oid)`: the CREATE text.
    FunctionDef,
    /// `pg_get_viewdef(oid [, pretty])`: a view's query.
    ViewDef,
    /// `pg_get_ruledef(oid [, pretty])`: a view's `_RETURN` rule as the
    /// CREATE RULE that would make it.
    RuleDef,
    /// `pg_relation_is_publishable(oid)`.
    RelationIsPublishable,
    /// `current_schemas(bool)` (+ search path).
    CurrentSchemas,
    /// `current_setting(name [, missing_ok])`: the session's value.
    CurrentSetting,
    /// `set_config(name, value, is_local)`: as SET [LOCAL], once the
    /// statement succeeds.
    SetConfig,
    /// `array_to_string(array, sep [, null])`.
    ArrayToString,
    /// `array_position(array, elem)`.
    ArrayPosition,
    /// `array_remove(array, elem)`: without the elements equal to `elem`.
    ArrayRemove,
    /// `array_upper(array, dim)`.
    ArrayUpper,
    /// `generate_subscripts(array, dim [, reverse])`, as the array of the
    /// subscripts that a select list sets out one per row: from 1 for an
    /// array, from 0 for a vector (`indkey`).
    Subscripts,
    /// `array_lower(array, dim)`.
    ArrayLower,
    /// `array_length(array, dim)`.
    ArrayLength,
    /// `ROW(a, b, ...)`: a record literal.
    Row,
    /// `(composite).field`: the field at the position its second argument
    /// gives.
    Field,
    /// `ARRAY[a, b, ...]`: an array literal.
    ArrayOf,
    /// `array[i]`.
    Subscript,
    /// `x = ANY(array)`, x as text.
    AnyEq,
    /// `pg_size_pretty(bigint)`.
    SizePretty,
    /// `pg_operator_is_visible`: true.
    Visible,
    /// `has_*_privilege([role,] object, privileges)` for objects of the
    /// kind (`None`: databases and columns, which carry no privileges of
    /// their own: true).
    HasPrivilege(Option<ObjectKind>),
    /// `acldefault(kind, owner)`: an object's ACL before any GRANT.
    AclDefault,
    /// `x::regclass` of an OID: its name (+ search path).
    RegclassOut,
    /// `x::regclass` of text: the OID (+ search path).
    RegclassIn,
    /// `x::regtype` of an OID: its name.
    RegtypeOut,
    /// `x::regnamespace` of an OID: its name.
    RegnamespaceOut,
    /// `~`, `~*`, `!~`, `!~*`: (case-insensitive, negated).
    Regex(bool, bool),
    /// `pg_table_size`, `pg_relation_size` (0), `pg_indexes_size` (1),
    /// `pg_total_relation_size` (2), `pg_database_size` (3): bytes in
    /// memory, from the engine's statistics.
    Size(u8),
    /// `pg_function_is_visible` and friends: there are no such objects.
    NotVisible,
    /// `quote_ident(text)`.
    QuoteIdent,
    /// `quote_literal(text)`: a string constant, with `E'...'` where it
    /// holds a backslash.
    QuoteLiteral,
    /// `current_user`, `session_user`, `user`: the session's role.
    CurrentUser,
    /// `current_database()`, `current_catalog`: the database the client
    /// named.
    CurrentDatabase,
    /// `pg_backend_pid()`: the process id the client knows its session by
    /// (the server's own outside it).
    BackendPid,
    /// `pg_cancel_backend(pid)`, `pg_terminate_backend(pid)` (true: end
    /// the session too).
    SignalBackend(bool),
    /// `pg_is_in_recovery()`: whether the database is a standby, applying
    /// a primary's changes and refusing writes (a server's own crash
    /// recovery ends before it accepts connections).
    InRecovery,
    /// `pg_drop_replication_slot(name)`.
    DropSlot,
    /// `pg_listening_channels()`: the channels the session listens on.
    ListeningChannels,
    /// `pg_blocking_pids(pid)`: the sessions whose transactions `pid`'s
    /// waits for, as an array.
    BlockingPids,
    /// `pg_stat_reset()`: the usage counters of every table and index, the
    /// transaction counts and the session totals start again from zero
    /// (superusers only, as in PostgreSQL).
    StatReset,
    /// `pg_sleep(seconds)`, `pg_sleep_for(interval)`,
    /// `pg_sleep_until(timestamptz)`: the statement pauses (see
    /// [`sleep_until`] and [`pause`]).
    Sleep(SleepFor),
    /// `pg_advisory_lock` and its family (see `crate::advisory`).
    Advisory(Advisory),
    /// `pg_notify(channel, payload)`: NOTIFY as a function.
    Notify,
    /// `to_regclass(text)`, `to_regtype(text)`, `to_regnamespace(text)`:
    /// the OID the name reads as, or NULL where nothing has that name.
    ToReg(RegKind),
    /// `pg_get_serial_sequence(table, column)`: the sequence a serial or
    /// identity column draws from, schema-qualified, or NULL.
    SerialSequence,
    /// The replicated group's functions (see `crate::cluster`).
    Cluster(ClusterFn),
}

/// Which function of the replicated group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterFn {
    /// `centum_applied_index()`.
    Applied,
    /// `centum_wait_applied(index [, timeout_ms])`.
    WaitApplied,
    /// `centum_add_member(id, address)`.
    Add,
    /// `centum_remove_member(id)`.
    Remove,
}

/// What a `to_reg*` function looks a name up as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegKind {
    Class,
    Type,
    Namespace,
}

/// Which advisory lock function: what it does, in which mode and scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Advisory {
    pub op: AdvisoryOp,
    /// The `_shared` forms.
    pub shared: bool,
    /// The `_xact_` forms: held until the transaction ends.
    pub xact: bool,
}

/// What an advisory lock function does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdvisoryOp {
    /// `pg_advisory_lock`: waits for the lock.
    Lock,
    /// `pg_try_advisory_lock`: takes it if free, says whether it did.
    TryLock,
    /// `pg_advisory_unlock`: releases one session-level hold.
    Unlock,
    /// `pg_advisory_unlock_all`.
    UnlockAll,
}

/// Every advisory lock function, by its name.
const ADVISORY: [(&str, Advisory); 11] = {
    use AdvisoryOp::*;
    const fn a(op: AdvisoryOp, shared: bool, xact: bool) -> Advisory {
        Advisory { op, shared, xact }
    }
    [
        ("pg_advisory_lock", a(Lock, false, false)),
        ("pg_advisory_lock_shared", a(Lock, true, false)),
        ("pg_advisory_xact_lock", a(Lock, false, true)),
        ("pg_advisory_xact_lock_shared", a(Lock, true, true)),
        ("pg_try_advisory_lock", a(TryLock, false, false)),
        ("pg_try_advisory_lock_shared", a(TryLock, true, false)),
        ("pg_try_advisory_xact_lock", a(TryLock, false, true)),
        ("pg_try_advisory_xact_lock_shared", a(TryLock, true, true)),
        ("pg_advisory_unlock", a(Unlock, false, false)),
        ("pg_advisory_unlock_shared", a(Unlock, true, false)),
        ("pg_advisory_unlock_all", a(UnlockAll, false, false)),
    ]
};

/// What a `pg_sleep` form's argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepFor {
    /// `pg_sleep(double precision)`.
    Seconds,
    /// `pg_sleep_for(interval)`.
    Interval,
    /// `pg_sleep_until(timestamptz)`.
    Until,
}

/// The columns of `pg_get_publication_tables(name)`, each returned by a
/// function of its own as an array that `unnest` turns into rows.
pub(crate) const PUBLICATION_TABLES: [(&str, &str); 3] = [
    ("relid", "centum_publication_relids"),
    ("attrs", "centum_publication_attrs"),
    ("qual", "centum_publication_quals"),
];

/// How a name resolves: the function, its parameter types (the last ones
/// optional from `min` on), its result type, whether it needs the search
/// path appended.
pub(crate) struct Signature {
    pub func: CatalogFn,
    pub params: Vec<DataType>,
    pub min: usize,
    pub ret: DataType,
    pub search_path: bool,
}

/// The catalog function `name` for `nargs` arguments, if there is one.
pub(crate) fn resolve(name: &str, nargs: usize) -> Option<Result<Signature>> {
    use DataType::{BigInt as I8, Boolean as B, Integer as I4, Text as T};
    let (func, params, min, ret, search_path) = match name {
        "pg_table_is_visible" | "pg_type_is_visible" => (CatalogFn::TableIsVisible, vec![I4], 1, B, true),
        "format_type" => (CatalogFn::FormatType, vec![I4, I4], 2, T, true),
        "pg_get_expr" => (CatalogFn::GetExpr, vec![T, I4, B], 2, T, true),
        "pg_get_indexdef" => (CatalogFn::GetIndexdef, vec![I4, I4, B], 1, T, true),
        "pg_get_constraintdef" => (CatalogFn::GetConstraintdef, vec![I4, B], 1, T, true),
        "pg_get_userbyid" => (CatalogFn::GetUserById, vec![I4], 1, T, false),
        "pg_encoding_to_char" => (CatalogFn::EncodingToChar, vec![I4], 1, T, false),
        // The object may come as a `regproc` (pg_operator.oprcode), which
        // reads as the function's name: a built-in, with no comment.
        "obj_description" => (CatalogFn::Description, vec![T, T], 1, T, false),
        "col_description" => (CatalogFn::Description, vec![I4, I4], 2, T, false),
        "shobj_description" => (CatalogFn::Description, vec![I4, T], 2, T, false),
        "pg_get_statisticsobjdef_columns" => (CatalogFn::NoObject, vec![I4], 1, T, false),
        "pg_get_triggerdef" => (CatalogFn::TriggerDef, vec![I4, B], 1, T, true),
        "pg_get_replica_identity_index" => {
            (CatalogFn::ReplicaIdentityIndex, vec![I4], 1, DataType::Oid, false)
        }
        "centum_publication_relids" => {
            (CatalogFn::PublicationTables(0), vec![T], 1, DataType::Array(Box::new(DataType::Oid)), false)
        }
        "centum_publication_attrs" => (
            CatalogFn::PublicationTables(1),
            vec![T],
            1,
            DataType::Array(Box::new(DataType::Int2Vector)),
            false,
        ),
        "centum_publication_quals" => {
            (CatalogFn::PublicationTables(2), vec![T], 1, DataType::Array(Box::new(T)), false)
        }
        "acldefault" => (CatalogFn::AclDefault, vec![T, I4], 2, T, false),
        "pg_relation_is_publishable" => (CatalogFn::RelationIsPublishable, vec![I4], 1, B, false),
        "current_schemas" => (CatalogFn::CurrentSchemas, vec![B], 1, DataType::Array(Box::new(T)), true),
        "current_setting" => (CatalogFn::CurrentSetting, vec![T, B], 1, T, false),
        "set_config" => (CatalogFn::SetConfig, vec![T, T, B], 3, T, false),
        "array_to_string" => (CatalogFn::ArrayToString, vec![T, T, T], 2, T, false),
        "array_position" => (CatalogFn::ArrayPosition, vec![T, T], 2, I4, false),
        "array_remove" => (CatalogFn::ArrayRemove, vec![T, T], 2, T, false),
        "array_upper" => (CatalogFn::ArrayUpper, vec![T, I4], 2, I4, false),
        "generate_subscripts" => {
            (CatalogFn::Subscripts, vec![T, I4, B], 2, DataType::Array(Box::new(I4)), false)
        }
        "array_lower" => (CatalogFn::ArrayLower, vec![T, I4], 2, I4, false),
        "array_length" => (CatalogFn::ArrayLength, vec![T, I4], 2, I4, false),
        "pg_size_pretty" => (CatalogFn::SizePretty, vec![I8], 1, T, false),
        "pg_table_size" | "pg_relation_size" => (CatalogFn::Size(0), vec![I4, T], 1, I8, false),
        "pg_indexes_size" => (CatalogFn::Size(1), vec![I4], 1, I8, false),
        "pg_total_relation_size" => (CatalogFn::Size(2), vec![I4], 1, I8, false),
        "pg_database_size" => (CatalogFn::Size(3), vec![T], 1, I8, false),
        "pg_function_is_visible" => (CatalogFn::FunctionIsVisible, vec![I4], 1, B, false),
        "pg_get_function_result" => (CatalogFn::FunctionResult, vec![I4], 1, T, false),
        "pg_get_function_arguments" | "pg_get_function_identity_arguments" => {
            (CatalogFn::FunctionArguments, vec![I4], 1, T, false)
        }
        "pg_get_functiondef" => (CatalogFn::FunctionDef, vec![I4], 1, T, false),
        "pg_get_viewdef" => (CatalogFn::ViewDef, vec![I4, B], 1, T, false),
        "pg_get_ruledef" => (CatalogFn::RuleDef, vec![I4, B], 1, T, false),
        // Operators are all in pg_catalog, which every search path has.
        "pg_operator_is_visible" => (CatalogFn::Visible, vec![I4], 1, B, false),
        "pg_opclass_is_visible"
        | "pg_collation_is_visible"
        | "pg_conversion_is_visible"
        | "pg_statistics_obj_is_visible"
        | "pg_ts_config_is_visible"
        | "pg_ts_dict_is_visible"
        | "pg_ts_parser_is_visible"
        | "pg_ts_template_is_visible"
        | "pg_opfamily_is_visible" => (CatalogFn::NotVisible, vec![I4], 1, B, false),
        "quote_ident" => (CatalogFn::QuoteIdent, vec![T], 1, T, false),
        "quote_literal" => (CatalogFn::QuoteLiteral, vec![T], 1, T, false),
        // SQL-standard bodies (BEGIN ATOMIC): routines are PL/pgSQL.
        "pg_get_function_sqlbody" => (CatalogFn::NoObject, vec![I4], 1, T, false),
        "current_user" | "session_user" | "user" => (CatalogFn::CurrentUser, vec![], 0, T, false),
        "current_database" | "current_catalog" => (CatalogFn::CurrentDatabase, vec![], 0, T, false),
        "pg_backend_pid" => (CatalogFn::BackendPid, vec![], 0, I4, false),
        // Their result is `void` in PostgreSQL, printed as an empty string.
        "pg_sleep" => (CatalogFn::Sleep(SleepFor::Seconds), vec![DataType::Double], 1, T, false),
        "pg_sleep_for" => (CatalogFn::Sleep(SleepFor::Interval), vec![DataType::Interval], 1, T, false),
        "pg_sleep_until" => (CatalogFn::Sleep(SleepFor::Until), vec![DataType::TimestampTz], 1, T, false),
        "pg_is_in_recovery" => (CatalogFn::InRecovery, vec![], 0, B, false),
        "centum_applied_index" => (CatalogFn::Cluster(ClusterFn::Applied), vec![], 0, I8, false),
        "centum_wait_applied" => (CatalogFn::Cluster(ClusterFn::WaitApplied), vec![I8, I8], 1, B, false),
        // `void`, printed as an empty string.
        "centum_add_member" => (CatalogFn::Cluster(ClusterFn::Add), vec![I8, T], 2, T, false),
        "centum_remove_member" => (CatalogFn::Cluster(ClusterFn::Remove), vec![I8], 1, T, false),
        "pg_drop_replication_slot" => (CatalogFn::DropSlot, vec![T], 1, T, false),
        // `void` in PostgreSQL, printed as an empty string.
        "pg_notify" => (CatalogFn::Notify, vec![T, T], 2, T, false),
        "to_regclass" => (CatalogFn::ToReg(RegKind::Class), vec![T], 1, I4, true),
        "to_regtype" => (CatalogFn::ToReg(RegKind::Type), vec![T], 1, I4, false),
        "to_regnamespace" => (CatalogFn::ToReg(RegKind::Namespace), vec![T], 1, I4, false),
        "pg_get_serial_sequence" => (CatalogFn::SerialSequence, vec![T, T], 2, T, true),
        // `void` in PostgreSQL, printed as an empty string.
        "pg_stat_reset" => (CatalogFn::StatReset, vec![], 0, T, false),
        "pg_blocking_pids" => (CatalogFn::BlockingPids, vec![I4], 1, DataType::Array(Box::new(I4)), false),
        // A set of text in PostgreSQL: the array's elements, one row each
        // (the planner unnests it in FROM and in a select list).
        "pg_listening_channels" => {
            (CatalogFn::ListeningChannels, vec![], 0, DataType::Array(Box::new(T)), false)
        }
        "pg_cancel_backend" => (CatalogFn::SignalBackend(false), vec![I4], 1, B, false),
        // The timeout PostgreSQL 14 added (wait for the end) is accepted
        // and not waited for.
        "pg_terminate_backend" => (CatalogFn::SignalBackend(true), vec![I4, I8], 1, B, false),
        "has_table_privilege" | "has_any_column_privilege" => {
            (CatalogFn::HasPrivilege(Some(ObjectKind::Relation)), vec![T, T, T], 2, B, true)
        }
        "has_sequence_privilege" => {
            (CatalogFn::HasPrivilege(Some(ObjectKind::Sequence)), vec![T, T, T], 2, B, true)
        }
        "has_schema_privilege" => {
            (CatalogFn::HasPrivilege(Some(ObjectKind::Schema)), vec![T, T, T], 2, B, true)
        }
        "has_function_privilege" => {
            (CatalogFn::HasPrivilege(Some(ObjectKind::Routine)), vec![T, T, T], 2, B, true)
        }
        "has_database_privilege" | "has_column_privilege" => {
            (CatalogFn::HasPrivilege(None), vec![T, T, T, T], 2, B, false)
        }
        n => {
            let (_, a) = ADVISORY.iter().find(|(name, _)| *name == n)?;
            // One bigint key, or two integer keys (a key space of its own).
            let params = match (a.op, nargs) {
                (AdvisoryOp::UnlockAll, _) => vec![],
                (_, 2) => vec![I4, I4],
                _ => vec![I8],
            };
            let ret = if matches!(a.op, AdvisoryOp::TryLock | AdvisoryOp::Unlock) { B } else { T };
            (CatalogFn::Advisory(*a), params.clone(), params.len(), ret, false)
        }
    };
    if nargs < min || nargs > params.len() {
        return Some(Err(Error::UndefinedFunction(format!("{name} with {nargs} arguments"))));
    }
    Some(Ok(Signature { func, params, min, ret, search_path }))
}

impl CatalogFn {
    /// Whether a NULL argument makes the result NULL.
    pub fn strict(self) -> bool {
        !matches!(
            self,
            CatalogFn::ArrayToString
                | CatalogFn::ArrayPosition
                | CatalogFn::ArrayRemove
                | CatalogFn::AnyEq
                | CatalogFn::FormatType
                | CatalogFn::Row
                | CatalogFn::ArrayOf
                | CatalogFn::SetConfig
                | CatalogFn::Notify
        )
    }

    /// The name shown by EXPLAIN.
    pub fn name(self) -> &'static str {
        match self {
            CatalogFn::TableIsVisible => "pg_table_is_visible",
            CatalogFn::FormatType => "format_type",
            CatalogFn::GetExpr => "pg_get_expr",
            CatalogFn::GetIndexdef => "pg_get_indexdef",
            CatalogFn::GetConstraintdef => "pg_get_constraintdef",
            CatalogFn::GetUserById => "pg_get_userbyid",
            CatalogFn::EncodingToChar => "pg_encoding_to_char",
            CatalogFn::Description => "obj_description",
            CatalogFn::NoObject => "pg_get_objectdef",
            CatalogFn::RelationIsPublishable => "pg_relation_is_publishable",
            CatalogFn::CurrentSchemas => "current_schemas",
            CatalogFn::CurrentSetting => "current_setting",
            CatalogFn::SetConfig => "set_config",
            CatalogFn::ArrayToString => "array_to_string",
            CatalogFn::ArrayPosition => "array_position",
            CatalogFn::ArrayRemove => "array_remove",
            CatalogFn::ArrayUpper => "array_upper",
            CatalogFn::Subscripts => "generate_subscripts",
            CatalogFn::ArrayLower => "array_lower",
            CatalogFn::ArrayLength => "array_length",
            CatalogFn::Row => "row",
            CatalogFn::Field => "field",
            CatalogFn::ArrayOf => "array",
            CatalogFn::Subscript => "array_subscript",
            CatalogFn::AnyEq => "any_eq",
            CatalogFn::SizePretty => "pg_size_pretty",
            CatalogFn::HasPrivilege(_) => "has_privilege",
            CatalogFn::AclDefault => "acldefault",
            CatalogFn::Visible => "pg_operator_is_visible",
            CatalogFn::RegclassOut => "regclassout",
            CatalogFn::RegclassIn => "regclassin",
            CatalogFn::RegtypeOut => "regtypeout",
            CatalogFn::RegnamespaceOut => "regnamespaceout",
            CatalogFn::Regex(..) => "textregexeq",
            CatalogFn::Size(_) => "pg_relation_size",
            CatalogFn::NotVisible => "pg_object_is_visible",
            CatalogFn::FunctionIsVisible => "pg_function_is_visible",
            CatalogFn::FunctionResult => "pg_get_function_result",
            CatalogFn::FunctionArguments => "pg_get_function_arguments",
            CatalogFn::FunctionDef => "pg_get_functiondef",
            CatalogFn::TriggerDef => "pg_get_triggerdef",
            CatalogFn::ReplicaIdentityIndex => "pg_get_replica_identity_index",
            CatalogFn::PublicationTables(c) => PUBLICATION_TABLES[c as usize].1,
            CatalogFn::ViewDef => "pg_get_viewdef",
            CatalogFn::RuleDef => "pg_get_ruledef",
            CatalogFn::QuoteIdent => "quote_ident",
            CatalogFn::QuoteLiteral => "quote_literal",
            CatalogFn::CurrentUser => "current_user",
            CatalogFn::CurrentDatabase => "current_database",
            CatalogFn::BackendPid => "pg_backend_pid",
            CatalogFn::Sleep(SleepFor::Seconds) => "pg_sleep",
            CatalogFn::Sleep(SleepFor::Interval) => "pg_sleep_for",
            CatalogFn::Sleep(SleepFor::Until) => "pg_sleep_until",
            CatalogFn::BlockingPids => "pg_blocking_pids",
            CatalogFn::ListeningChannels => "pg_listening_channels",
            CatalogFn::Notify => "pg_notify",
            CatalogFn::ToReg(RegKind::Class) => "to_regclass",
            CatalogFn::ToReg(RegKind::Type) => "to_regtype",
            CatalogFn::ToReg(RegKind::Namespace) => "to_regnamespace",
            CatalogFn::SerialSequence => "pg_get_serial_sequence",
            CatalogFn::Advisory(a) => {
                ADVISORY.iter().find(|(_, x)| *x == a).map_or("pg_advisory_lock", |(n, _)| n)
            }
            CatalogFn::InRecovery => "pg_is_in_recovery",
            CatalogFn::Cluster(ClusterFn::Applied) => "centum_applied_index",
            CatalogFn::Cluster(ClusterFn::WaitApplied) => "centum_wait_applied",
            CatalogFn::Cluster(ClusterFn::Add) => "centum_add_member",
            CatalogFn::Cluster(ClusterFn::Remove) => "centum_remove_member",
            CatalogFn::DropSlot => "pg_drop_replication_slot",
            CatalogFn::StatReset => "pg_stat_reset",
            CatalogFn::SignalBackend(false) => "pg_cancel_backend",
            CatalogFn::SignalBackend(true) => "pg_terminate_backend",
        }
    }

    /// Whether it reads the catalog (and so needs a snapshot).
    fn reads_catalog(self) -> bool {
        matches!(
            self,
            CatalogFn::TableIsVisible
                | CatalogFn::SignalBackend(_)
                | CatalogFn::StatReset
                | CatalogFn::Cluster(ClusterFn::Add | ClusterFn::Remove)
                | CatalogFn::DropSlot
                | CatalogFn::Size(_)
                | CatalogFn::GetUserById
                | CatalogFn::GetIndexdef
                | CatalogFn::GetExpr
                | CatalogFn::GetConstraintdef
                | CatalogFn::RelationIsPublishable
                | CatalogFn::CurrentSchemas
                | CatalogFn::RegclassOut
                | CatalogFn::RegclassIn
                | CatalogFn::RegnamespaceOut
                | CatalogFn::ToReg(RegKind::Class | RegKind::Namespace)
                | CatalogFn::SerialSequence
                | CatalogFn::FunctionIsVisible
                | CatalogFn::FunctionResult
                | CatalogFn::FunctionArguments
                | CatalogFn::FunctionDef
                | CatalogFn::TriggerDef
                | CatalogFn::ReplicaIdentityIndex
                | CatalogFn::PublicationTables(_)
                | CatalogFn::ViewDef
                | CatalogFn::RuleDef
                | CatalogFn::Description
                | CatalogFn::HasPrivilege(Some(_))
                | CatalogFn::AclDefault
        )
    }
}

fn oid_arg(v: &Value) -> i32 {
    match v {
        Value::Text(t) => t.trim().parse().unwrap_or(0),
        v => integer(v).and_then(|i| i32::try_from(i).ok()).unwrap_or(0),
    }
}

fn text(v: &Value) -> String {
    v.to_string()
}

fn bool_arg(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Boolean(true)))
}

/// The search path passed as the last argument.
fn search_path(args: &[Value]) -> Vec<String> {
    match args.last() {
        Some(Value::Text(s)) => array_text::parse(s).unwrap_or_default().into_iter().flatten().collect(),
        _ => vec![],
    }
}

/// Runs `f` on evaluated arguments. `snapshot` is called only by functions
/// that read the catalog; `interrupted` (the statement's cancel and
/// deadline check) only by those that wait.
pub(crate) fn eval(
    f: CatalogFn,
    args: &[Value],
    snapshot: &dyn Fn() -> Result<std::rc::Rc<Snapshot>>,
    id: &Identity,
    interrupted: &dyn Fn() -> Result<()>,
) -> Result<Value> {
    if f.strict() && args.iter().any(|a| a.is_null()) {
        return Ok(Value::Null);
    }
    let snap = if f.reads_catalog() { Some(snapshot()?) } else { None };
    let s = || snap.as_deref().ok_or_else(|| Error::other("XX000", "catalog snapshot missing"));
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    Ok(match f {
        CatalogFn::TableIsVisible => {
            let path = search_path(args);
            Value::Boolean(visible(s()?, oid_arg(arg(0)), &path))
        }
        CatalogFn::FormatType => match integer(arg(0)) {
            Some(o) if o >= i64::from(crate::catalog::FIRST_ENUM_OID) => {
                let snap = snapshot()?;
                match snap.user_type(o as i32) {
                    Some((e, array)) => {
                        // Qualified where the search path does not reach
                        // it, as pg_dump (with an empty path) needs.
                        let (schema, bare) = super::snapshot::split_name(e);
                        let path = search_path(args);
                        let name = if path.contains(&schema) { bare } else { format!("{schema}.{bare}") };
                        Value::Text(if array { format!("{name}[]") } else { name })
                    }
                    None => Value::Text("???".into()),
                }
            }
            Some(o) => Value::Text(types::format_type(o as i32, integer(arg(1)).map(|m| m as i32))),
            None => Value::Null,
        },
        CatalogFn::GetExpr => match arg(0) {
            Value::Text(e) => {
                // The stored form is the plain style; the pretty one drops
                // the parentheses around operators.
                let pretty = args.len() > 3 && bool_arg(args.get(2));
                let shown = match s()?.rel(oid_arg(arg(1))) {
                    Some(RelRef::Table(t)) if pretty => {
                        let style = super::deparse::Style { pretty: true, implicit: false };
                        super::deparse::show(e, t.info.table.columns(), None, style)
                    }
                    _ => None,
                };
                Value::Text(unqualified_sequences(shown.as_ref().unwrap_or(e), &search_path(args)))
            }
            v => v.clone(),
        },
        CatalogFn::GetIndexdef => {
            let path = search_path(args);
            let col = if args.len() > 2 { integer(arg(1)).unwrap_or(0) } else { 0 };
            let pretty = args.len() > 3 && bool_arg(args.get(2));
            indexdef(s()?, oid_arg(arg(0)), col, pretty, &path).map_or(Value::Null, Value::Text)
        }
        CatalogFn::GetConstraintdef => {
            let path = search_path(args);
            let pretty = args.len() > 2 && bool_arg(args.get(1));
            constraintdef(s()?, oid_arg(arg(0)), pretty, &path).map_or(Value::Null, Value::Text)
        }
        CatalogFn::GetUserById => {
            let o = oid_arg(arg(0));
            Value::Text(s()?.role_name(o, id.user).unwrap_or_else(|| format!("unknown (OID={o})")))
        }
        CatalogFn::Size(what) => size(s()?, what, arg(0), id).map_or(Value::Null, Value::BigInt),
        CatalogFn::NotVisible => Value::Boolean(false),
        CatalogFn::FunctionIsVisible => Value::Boolean(s()?.routine(oid_arg(arg(0))).is_some()),
        CatalogFn::FunctionResult => {
            s()?.routine(oid_arg(arg(0))).and_then(|r| r.result.clone()).map_or(Value::Null, Value::Text)
        }
        CatalogFn::FunctionArguments => {
            s()?.routine(oid_arg(arg(0))).map_or(Value::Null, |r| Value::Text(r.arguments.clone()))
        }
        CatalogFn::TriggerDef => s()?.trigger(oid_arg(arg(0))).map_or(Value::Null, |(schema, name, x)| {
            // Pretty text names the table as the search path finds it.
            let pretty = matches!(arg(1), Value::Boolean(true));
            let table = if pretty { crate::names::qualify(schema, name) } else { format!("{schema}.{name}") };
            // The function is qualified where the search path does not
            // find it (pg_dump empties the path).
            let found = search_path(args).iter().any(|s| s == "public");
            Value::Text(x.def.text(&table, !found))
        }),
        CatalogFn::FunctionDef => {
            s()?.routine(oid_arg(arg(0))).map_or(Value::Null, |r| Value::Text(format!("{};\n", r.source)))
        }
        CatalogFn::ViewDef => {
            let snap = s()?;
            let def = match snap.rel(oid_arg(arg(0))) {
                Some(RelRef::View(v)) => Some(&v.def),
                Some(RelRef::Table(t)) => t.materialized.as_ref(),
                _ => None,
            };
            def.map_or(Value::Null, |d| Value::Text(super::tables::view_definition(d)))
        }
        CatalogFn::RuleDef => {
            let snap = s()?;
            let rule = oid_arg(arg(0));
            let found = super::tables::view_rules(snap).into_iter().find(|(r, _, _)| *r == rule);
            found.map_or(Value::Null, |(_, _, def)| {
                // PostgreSQL names the view with its schema.
                let (schema, name) = super::snapshot::split_name(&def.name);
                Value::Text(format!(
                    "CREATE RULE \"_RETURN\" AS\n    ON SELECT TO {schema}.{name} DO INSTEAD {}",
                    super::tables::view_definition(def)
                ))
            })
        }
        CatalogFn::QuoteIdent => Value::Text(quote_ident(&text(arg(0)))),
        CatalogFn::QuoteLiteral => Value::Text(quote_literal(&text(arg(0)))),
        CatalogFn::CurrentUser => Value::from(id.user),
        CatalogFn::CurrentDatabase => Value::from(id.database),
        CatalogFn::BackendPid => Value::Integer(id.pid()),
        CatalogFn::Sleep(how) => {
            pause(sleep_until(how, arg(0))?, interrupted)?;
            Value::Text(String::new())
        }
        CatalogFn::Advisory(a) => advisory(a, args, id, interrupted)?,
        CatalogFn::Notify => {
            // As NOTIFY: a standby's commits publish nothing.
            if id.txn.standby {
                return Err(Error::during_recovery("NOTIFY"));
            }
            let Some(notes) = id.notes else {
                return Err(Error::other("55000", "pg_notify is called by a session"));
            };
            let text = |v: &Value| if v.is_null() { String::new() } else { v.to_string() };
            crate::notify::queue(notes, text(arg(0)), text(arg(1)))?;
            Value::Text(String::new())
        }
        CatalogFn::ReplicaIdentityIndex => match s()?.rel(oid_arg(arg(0))) {
            Some(RelRef::Table(t)) => t
                .info
                .meta
                .primary_key
                .as_ref()
                .and_then(|pk| t.indexes.iter().find(|i| &i.def.name == pk))
                .map_or(Value::Null, |i| Value::Integer(i.oid)),
            _ => Value::Null,
        },
        CatalogFn::PublicationTables(col) => {
            let name = arg(0).to_string();
            let snap = s()?;
            let Some(p) = snap.publications.iter().find(|p| p.def.name == name) else {
                return Err(Error::UndefinedObject(format!("publication \"{name}\" does not exist")));
            };
            let rels = p.tables.iter().filter_map(|t| snap.table_by_name(t));
            // No column lists or row filters: attrs and qual are null.
            Value::Array(match col {
                0 => rels.map(|t| Value::Integer(t.oid)).collect(),
                _ => rels.map(|_| Value::Null).collect(),
            })
        }
        CatalogFn::ListeningChannels => {
            let channels = id.activity.map(|a| a.notify.channels(id.holder)).unwrap_or_default();
            Value::Array(channels.into_iter().map(Value::Text).collect())
        }
        CatalogFn::BlockingPids => {
            let pids = id.activity.map(|a| a.blocking_pids(oid_arg(arg(0)))).unwrap_or_default();
            Value::Array(pids.into_iter().map(Value::Integer).collect())
        }
        CatalogFn::SignalBackend(terminate) => {
            let pid = oid_arg(arg(0));
            let superuser = s()?.role_rows(id.user).iter().any(|r| r.1 == id.user && r.2);
            let outcome = match id.activity {
                Some(a) => a.signal(pid, terminate, id.user, superuser),
                None => crate::activity::Signal::NoSuchBackend,
            };
            match outcome {
                crate::activity::Signal::Sent => Value::Boolean(true),
                crate::activity::Signal::NoSuchBackend => Value::Boolean(false),
                crate::activity::Signal::NotAllowed => {
                    let what = if terminate { "terminate process" } else { "cancel query" };
                    return Err(Error::other(
                        "42501",
                        format!(
                            "permission denied to {what}: only a superuser or the session's own role may"
                        ),
                    ));
                }
            }
        }
        CatalogFn::InRecovery => Value::Boolean(id.txn.standby),
        CatalogFn::Cluster(f) => {
            let cluster = id.activity.and_then(|a| a.cluster.get());
            if f == ClusterFn::Applied {
                return Ok(cluster.map_or(Value::Null, |c| Value::BigInt(c.applied() as i64)));
            }
            let Some(c) = cluster else {
                return Err(Error::other("55000", "this server is not a member of a replicated group"));
            };
            let index = integer(arg(0)).unwrap_or(0);
            match f {
                ClusterFn::WaitApplied => {
                    let timeout = integer(arg(1)).unwrap_or(10_000).max(0) as u64;
                    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(timeout);
                    loop {
                        if c.applied() >= index.max(0) as u64 {
                            break Value::Boolean(true);
                        }
                        let left = deadline.saturating_duration_since(std::time::Instant::now());
                        if left.is_zero() {
                            break Value::Boolean(false);
                        }
                        pause(left.min(std::time::Duration::from_millis(2)), interrupted)?;
                    }
                }
                _ => {
                    if !s()?.role_rows(id.user).iter().any(|r| r.1 == id.user && r.2) {
                        return Err(Error::other(
                            "42501",
                            format!("permission denied for function {}", CatalogFn::Cluster(f).name()),
                        ));
                    }
                    if index <= 0 {
                        return Err(Error::other("22023", format!("{index} is not a member id")));
                    }
                    match f {
                        ClusterFn::Add => c.add_member(index as u64, &text(arg(1)))?,
                        _ => c.remove_member(index as u64)?,
                    }
                    Value::Text(String::new())
                }
            }
        }
        CatalogFn::DropSlot => {
            crate::replication::drop_slot(&s()?.db, &arg(0).to_string(), id.pid() as u32)?;
            Value::Null
        }
        CatalogFn::StatReset => {
            let s = s()?;
            if !s.role_rows(id.user).iter().any(|r| r.1 == id.user && r.2) {
                return Err(Error::other("42501", "permission denied for function pg_stat_reset"));
            }
            s.db.reset_usage();
            if let Some(a) = id.activity {
                a.reset();
            }
            Value::Text(String::new())
        }
        CatalogFn::EncodingToChar => Value::from(if integer(arg(0)) == Some(6) { "UTF8" } else { "" }),
        CatalogFn::Description => {
            // obj_description(oid [, catalog]), col_description(table, attnum)
            // and shobj_description(oid, catalog) (no shared object has one).
            let object = oid_arg(arg(0));
            let (class, sub) = match args.get(1) {
                None => (None, 0),
                Some(Value::Text(c)) => (Some(SystemTable::lookup(None, c).map_or(0, |t| t.oid())), 0),
                Some(n) => (Some(SystemTable::Class.oid()), oid_arg(n)),
            };
            s()?.descriptions()
                .iter()
                .find(|d| d.0 == object && d.2 == sub && class.is_none_or(|c| c == d.1))
                .map_or(Value::Null, |d| Value::Text(d.3.clone()))
        }
        CatalogFn::NoObject => Value::Null,
        CatalogFn::RelationIsPublishable => {
            Value::Boolean(matches!(s()?.rel(oid_arg(arg(0))), Some(RelRef::Table(_))))
        }
        CatalogFn::CurrentSchemas => {
            let path = search_path(args);
            let snap = s()?;
            let mut out = Vec::new();
            if bool_arg(args.first()) && !path.iter().any(|p| p == "pg_catalog") {
                out.push("pg_catalog".to_string());
            }
            out.extend(path.into_iter().filter(|p| snap.schemas.iter().any(|(_, n)| n == p)));
            Value::Array(out.into_iter().map(Value::Text).collect())
        }
        CatalogFn::CurrentSetting => current_setting(args, id)?,
        CatalogFn::SetConfig => set_config(args, id)?,
        CatalogFn::ArrayToString => array_to_string(args)?,
        // An anonymous row, each field typed by what it holds.
        CatalogFn::Row => {
            let types = args.iter().map(|v| v.data_type().unwrap_or(DataType::Text)).collect();
            centum_types::CompositeType::anonymous(types).value(args.to_vec())
        }
        CatalogFn::Field => match (arg(0), arg(1)) {
            (Value::Composite(c), Value::Integer(i)) => {
                c.fields.get(*i as usize).cloned().unwrap_or(Value::Null)
            }
            _ => Value::Null,
        },
        // The binder made every element of the element type.
        CatalogFn::ArrayOf => Value::Array(args.to_vec()),
        CatalogFn::ArrayPosition => {
            let (Value::Text(a), e) = (arg(0), arg(1)) else { return Ok(Value::Null) };
            let e = (!e.is_null()).then(|| text(e));
            let items = array_text::parse(a)?;
            items.iter().position(|x| *x == e).map_or(Value::Null, |p| Value::Integer(p as i32 + 1))
        }
        CatalogFn::ArrayRemove => {
            let Value::Text(a) = arg(0) else { return Ok(Value::Null) };
            let e = (!arg(1).is_null()).then(|| text(arg(1)));
            let kept: Vec<Option<String>> = array_text::parse(a)?.into_iter().filter(|x| *x != e).collect();
            Value::Text(array_text::render_opt(&kept.iter().map(|s| s.as_deref()).collect::<Vec<_>>()))
        }
        CatalogFn::Subscripts => {
            let (first, n) = match arg(0) {
                Value::Null => (1, 0),
                Value::Text(t) if !t.trim_start().starts_with('{') => (0, t.split_whitespace().count()),
                v => (1, crate::functions::arrays::elements(v)?.len()),
            };
            let n = if integer(arg(1)) == Some(1) { n as i32 } else { 0 };
            let mut subs: Vec<Value> = (first..first + n).map(Value::Integer).collect();
            if bool_arg(args.get(2)) {
                subs.reverse();
            }
            Value::Array(subs)
        }
        CatalogFn::ArrayUpper | CatalogFn::ArrayLower | CatalogFn::ArrayLength => {
            let n = array_text::parse(&text(arg(0)))?.len();
            if n == 0 || integer(arg(1)) != Some(1) {
                return Ok(Value::Null);
            }
            Value::Integer(match f {
                CatalogFn::ArrayLower => 1,
                _ => n as i32,
            })
        }
        CatalogFn::Subscript => {
            let t = text(arg(0));
            // A vector (`int2vector`, `oidvector`: numbers apart by
            // spaces) and a `name` (typname[0], a fixed array of
            // characters) count from 0.
            if !t.starts_with('{') {
                let i = integer(arg(1)).and_then(|i| usize::try_from(i).ok());
                let item = match arg(2) {
                    Value::Boolean(true) => i.and_then(|i| t.split_whitespace().nth(i)).map(str::to_string),
                    _ => i.and_then(|i| t.chars().nth(i)).map(|c| c.to_string()),
                };
                return Ok(item.map_or(Value::Null, Value::Text));
            }
            let items = array_text::parse(&t)?;
            let i = integer(arg(1)).unwrap_or(0);
            match usize::try_from(i - 1).ok().and_then(|i| items.get(i)) {
                Some(Some(v)) => Value::Text(v.clone()),
                _ => Value::Null,
            }
        }
        CatalogFn::AnyEq => {
            let (l, a) = (arg(0), arg(1));
            if a.is_null() {
                return Ok(Value::Null);
            }
            let items = array_text::parse(&text(a))?;
            if l.is_null() {
                return Ok(if items.is_empty() { Value::Boolean(false) } else { Value::Null });
            }
            let l = text(l);
            if items.iter().any(|x| x.as_deref() == Some(l.as_str())) {
                Value::Boolean(true)
            } else if items.iter().any(|x| x.is_none()) {
                Value::Null
            } else {
                Value::Boolean(false)
            }
        }
        CatalogFn::SizePretty => Value::Text(size_pretty(integer(arg(0)).unwrap_or(0))),
        CatalogFn::HasPrivilege(None) | CatalogFn::Visible => Value::Boolean(true),
        CatalogFn::HasPrivilege(Some(kind)) => {
            let path = search_path(args);
            let given = &args[..args.len().saturating_sub(1)];
            let snap = s()?;
            let (user, object, wanted) = match given {
                [u, o, p] => {
                    let name = match u {
                        Value::Text(t) => t.clone(),
                        v => snap.role_name(oid_arg(v), id.user).unwrap_or_default(),
                    };
                    (name, o, p)
                }
                [o, p] => (id.user.to_string(), o, p),
                _ => return Ok(Value::Null),
            };
            Value::Boolean(has_privilege(snap, kind, &user, object, &text(wanted), &path)?)
        }
        CatalogFn::AclDefault => {
            let snap = s()?;
            let owner = snap.role_name(oid_arg(arg(1)), id.user).unwrap_or_default();
            let kind = match text(arg(0)).as_str() {
                "r" => Some(ObjectKind::Relation),
                "s" => Some(ObjectKind::Sequence),
                "n" => Some(ObjectKind::Schema),
                "f" | "p" => Some(ObjectKind::Routine),
                _ => None,
            };
            match kind {
                Some(k) => {
                    Value::Text(crate::privileges::acl_text(&crate::privileges::default_acl(k, "", &owner)))
                }
                None => Value::Null,
            }
        }
        CatalogFn::RegclassOut => {
            let o = oid_arg(arg(0));
            Value::Text(rel_display(s()?, o, &search_path(args)).unwrap_or_else(|| o.to_string()))
        }
        CatalogFn::RegclassIn => Value::Integer(regclass_in(s()?, &text(arg(0)), &search_path(args))?),
        CatalogFn::ToReg(kind) => {
            let name = text(arg(0));
            let oid = match kind {
                RegKind::Class => regclass_in(s()?, &name, &search_path(args)),
                RegKind::Type => regtype_in(&name),
                RegKind::Namespace => regnamespace_in(s()?, &name),
            };
            oid.map_or(Value::Null, Value::Integer)
        }
        CatalogFn::SerialSequence => serial_sequence(s()?, &text(arg(0)), &text(arg(1)), &search_path(args))?,
        CatalogFn::RegtypeOut => {
            let o = oid_arg(arg(0));
            match types::by_oid(o) {
                Some(t) => Value::Text(t.display.to_string()),
                None if i64::from(o) >= i64::from(crate::catalog::FIRST_ENUM_OID) => {
                    let snap = snapshot()?;
                    Value::Text(snap.user_type(o).map_or_else(
                        || o.to_string(),
                        |(e, array)| {
                            let n = crate::catalog::display_name(e);
                            if array {
                                format!("{n}[]")
                            } else {
                                n
                            }
                        },
                    ))
                }
                None => Value::Text(o.to_string()),
            }
        }
        CatalogFn::RegnamespaceOut => {
            let o = oid_arg(arg(0));
            Value::Text(s()?.schema_name(o).map_or_else(|| o.to_string(), str::to_string))
        }
        CatalogFn::Regex(ci, neg) => {
            let m = regex_match(&text(arg(0)), &text(arg(1)), ci)?;
            Value::Boolean(m != neg)
        }
    })
}

/// A stored expression as `pg_get_expr` shows it: a sequence named as
/// `'schema.name'::regclass` loses its schema when that schema is on the
/// search path, as PostgreSQL prints a regclass constant.
pub(crate) fn unqualified_sequences(expr: &str, path: &[String]) -> String {
    let mut out = expr.to_string();
    for schema in path {
        out = out.replace(&format!("nextval('{}.", quote_ident(schema)), "nextval('");
    }
    out
}

/// Bytes a relation (or the database) holds in memory: row versions for
/// a table, the index's own bytes for an index.
fn size(s: &Snapshot, what: u8, arg: &Value, id: &Identity) -> Option<i64> {
    let total = |t: &TableRel| {
        let st = t.info.table.stats();
        (st.row_bytes, st.indexes.iter().map(|i| i.bytes).sum::<u64>())
    };
    let bytes = match what {
        3 => {
            if text(arg) != id.database && integer(arg) != Some(i64::from(super::snapshot::DATABASE)) {
                return None;
            }
            s.tables.iter().map(total).map(|(r, i)| r + i).sum()
        }
        _ => match s.rel(oid_arg(arg))? {
            RelRef::Table(t) => {
                let (rows, indexes) = total(t);
                match what {
                    0 => rows,
                    1 => indexes,
                    _ => rows + indexes,
                }
            }
            RelRef::Index(t, ix) => {
                let st = t.info.table.stats();
                let own = st.indexes.iter().find(|i| i.name == ix.def.name).map_or(0, |i| i.bytes);
                if what == 1 {
                    0
                } else {
                    own
                }
            }
            RelRef::Sequence(_) | RelRef::View(_) => 0,
        },
    };
    i64::try_from(bytes).ok()
}

/// Whether relation `oid` is found first by its bare name on the path.
fn visible(s: &Snapshot, oid: i32, path: &[String]) -> bool {
    let user_type = s.user_type(oid).map(|(name, _)| name);
    if let Some(name) = user_type.or_else(|| s.composite_rel(oid).map(|(e, _)| e.name.as_str())) {
        let (schema, _) = super::snapshot::split_name(name);
        return schema == "public" || path.contains(&schema);
    }
    let name = match s.rel(oid) {
        Some(RelRef::Table(t)) => t.name.clone(),
        Some(RelRef::Index(_, ix)) => super::tables::index_name(&ix.def.name),
        Some(RelRef::Sequence(q)) => q.name.clone(),
        Some(RelRef::View(v)) => v.name.clone(),
        None => return false,
    };
    s.rel_oid(None, &name, path) == Some(oid)
}

/// A relation's name as regclass prints it: qualified unless visible.
fn rel_display(s: &Snapshot, oid: i32, path: &[String]) -> Option<String> {
    if let Some(t) = SystemTable::by_oid(oid) {
        let (schema, name) = t.name();
        return Some(if schema == "pg_catalog" { name.to_string() } else { format!("{schema}.{name}") });
    }
    if let Some((e, _)) = s.composite_rel(oid) {
        let (schema, name) = super::snapshot::split_name(&e.name);
        return Some(if visible(s, oid, path) { quote_ident(&name) } else { format!("{schema}.{name}") });
    }
    let (schema, name) = match s.rel(oid)? {
        RelRef::Table(t) => (t.schema.clone(), t.name.clone()),
        RelRef::Index(t, ix) => (t.schema.clone(), super::tables::index_name(&ix.def.name)),
        RelRef::Sequence(q) => (q.schema.clone(), q.name.clone()),
        RelRef::View(v) => (v.schema.clone(), v.name.clone()),
    };
    Some(if visible(s, oid, path) {
        quote_ident(&name)
    } else {
        format!("{}.{}", quote_ident(&schema), quote_ident(&name))
    })
}

/// `'name'::regclass`: a relation's OID by (possibly qualified) name, or
/// a number taken as an OID as it is.
pub(crate) fn regclass_in(s: &Snapshot, name: &str, path: &[String]) -> Result<i32> {
    let t = name.trim();
    if let Ok(o) = t.parse::<i64>() {
        return i32::try_from(o).map_err(|_| Error::other("22003", format!("OID out of range: {t}")));
    }
    let parts: Vec<String> = t
        .split('.')
        .map(|p| {
            if p.len() >= 2 && p.starts_with('"') && p.ends_with('"') {
                p[1..p.len() - 1].replace("\"\"", "\"")
            } else {
                p.to_lowercase()
            }
        })
        .collect();
    let found = match parts.as_slice() {
        [n] => s.rel_oid(None, n, path).or_else(|| SystemTable::lookup(None, n).map(SystemTable::oid)),
        [sc, n] | [_, sc, n] => {
            s.rel_oid(Some(sc), n, path).or_else(|| SystemTable::lookup(Some(sc), n).map(SystemTable::oid))
        }
        _ => None,
    };
    found.ok_or_else(|| Error::UndefinedTable(t.to_string()))
}

/// `'name'::regtype`.
pub(crate) fn regtype_in(name: &str) -> Result<i32> {
    let t = name.trim().to_lowercase();
    if let Ok(o) = t.parse::<i32>() {
        return Ok(o);
    }
    let t = t.strip_prefix("pg_catalog.").unwrap_or(&t);
    types::by_name(t)
        .map(|t| t.oid)
        .ok_or_else(|| Error::UndefinedObject(format!("type \"{t}\" does not exist")))
}

/// `pg_get_serial_sequence(table, column)`: the sequence named in the
/// column's `nextval('...')` default (serial and identity columns have
/// one), qualified by its schema; NULL for a column without one.
fn serial_sequence(s: &Snapshot, table: &str, column: &str, path: &[String]) -> Result<Value> {
    let oid = regclass_in(s, table, path)?;
    let Some(RelRef::Table(t)) = s.rel(oid) else { return Ok(Value::Null) };
    let column = column.trim_matches('"');
    let Ok(i) = t.info.table.column_index(column) else {
        return Err(Error::UndefinedColumn(format!("\"{column}\" of relation \"{}\"", t.name)));
    };
    let default = t.info.meta.columns.get(i).and_then(|c| c.default.clone()).unwrap_or_default();
    let Some(seq) = default.strip_prefix("nextval('").and_then(|r| r.split('\'').next()) else {
        return Ok(Value::Null);
    };
    Ok(Value::Text(match seq.split_once('.') {
        Some((schema, name)) => format!("{}.{}", quote_ident(schema), quote_ident(name)),
        None => format!("public.{}", quote_ident(seq)),
    }))
}

/// `'name'::regnamespace`.
pub(crate) fn regnamespace_in(s: &Snapshot, name: &str) -> Result<i32> {
    let t = name.trim();
    if let Ok(o) = t.parse::<i32>() {
        return Ok(o);
    }
    let t = t.to_lowercase();
    match s.schema_oid(&t) {
        0 => Err(Error::UndefinedObject(format!("schema \"{t}\" does not exist"))),
        o => Ok(o),
    }
}

fn table_display(s: &Snapshot, t: &TableRel, path: &[String], pretty: bool) -> String {
    if pretty && visible(s, t.oid, path) {
        quote_ident(&t.name)
    } else {
        format!("{}.{}", quote_ident(&t.schema), quote_ident(&t.name))
    }
}

/// `pg_get_indexdef`: the CREATE INDEX statement, or one key column.
pub(super) fn indexdef(s: &Snapshot, oid: i32, col: i64, pretty: bool, path: &[String]) -> Option<String> {
    let Some(RelRef::Index(t, ix)) = s.rel(oid) else { return None };
    let desc = |k: usize| if ix.def.descending.get(k).copied().unwrap_or(false) { " DESC" } else { "" };
    let columns = t.info.table.columns();
    let show = |text: &str| {
        let style = super::deparse::Style { pretty, implicit: false };
        super::deparse::show(text, columns, None, style).unwrap_or_else(|| text.to_string())
    };
    // A key as PostgreSQL prints it: a column by name, a function call as
    // it is, any other expression in parentheses.
    let key = |k: usize| -> Option<String> {
        let text = match (&ix.shape, ix.attnums.get(k)?) {
            (Some(sh), 0) => {
                let shown = show(sh.keys.get(k)?);
                let call = crate::planner::dml::parse_expr(sh.keys.get(k)?)
                    .is_ok_and(|e| matches!(e, sqlparser::ast::Expr::Function(_)));
                if call {
                    shown
                } else {
                    format!("({shown})")
                }
            }
            (_, &a) => quote_ident(&columns.get(a as usize - 1)?.name),
        };
        Some(format!("{text}{}", desc(k)))
    };
    if col > 0 {
        return key((col - 1) as usize);
    }
    let keys: Vec<String> = (0..ix.attnums.len()).map(key).collect::<Option<_>>()?;
    let (am, with) = match hash_buckets(&ix.def) {
        Some(n) => ("hash", format!(" WITH (bucket_count={n})")),
        None => ("btree", String::new()),
    };
    // The predicate as the deparser prints it (with its own parentheses
    // unless pretty), or as written.
    let predicate = match ix.shape.as_ref().and_then(|sh| sh.predicate.as_deref()) {
        Some(p) => {
            let style = super::deparse::Style { pretty, implicit: false };
            match super::deparse::show(p, columns, None, style) {
                Some(shown) => format!(" WHERE {shown}"),
                None if pretty => format!(" WHERE {p}"),
                None => format!(" WHERE ({p})"),
            }
        }
        None => String::new(),
    };
    Some(format!(
        "CREATE {}INDEX {} ON {} USING {am} ({}){with}{predicate}",
        if ix.def.unique { "UNIQUE " } else { "" },
        quote_ident(&super::tables::index_name(&ix.def.name)),
        table_display(s, t, path, pretty),
        keys.join(", ")
    ))
}

fn action(a: RefAction) -> &'static str {
    match a {
        RefAction::Restrict => "",
        RefAction::Cascade => "CASCADE",
        RefAction::SetNull => "SET NULL",
        RefAction::SetDefault => "SET DEFAULT",
    }
}

/// `pg_get_constraintdef`.
fn constraintdef(s: &Snapshot, oid: i32, pretty: bool, path: &[String]) -> Option<String> {
    let (t, c) = s.constraint(oid)?;
    let meta = &t.info.meta;
    let names = |cols: &[String]| cols.iter().map(|c| quote_ident(c)).collect::<Vec<_>>().join(", ");
    Some(match &c.kind {
        ConKind::Key { index, primary } => {
            let ix = &t.indexes[*index];
            format!("{} ({})", if *primary { "PRIMARY KEY" } else { "UNIQUE" }, names(&ix.def.columns))
        }
        ConKind::Check(i) => {
            let e = &meta.checks[*i].expr;
            let style = super::deparse::Style { pretty, implicit: true };
            if let Some(shown) = super::deparse::show(e, t.info.table.columns(), None, style) {
                return Some(format!("CHECK ({shown})"));
            }
            if pretty {
                format!("CHECK ({e})")
            } else {
                format!("CHECK (({e}))")
            }
        }
        ConKind::Foreign(i) => {
            let fk = &meta.foreign_keys[*i];
            let cols = t.info.table.columns();
            let own: Vec<String> =
                fk.columns.iter().filter_map(|&c| cols.get(c).map(|c| c.name.clone())).collect();
            let target = match s.table_by_name(&fk.ref_table) {
                Some(r) => table_display(s, r, path, true),
                None => fk.ref_table.clone(),
            };
            let mut out =
                format!("FOREIGN KEY ({}) REFERENCES {target}({})", names(&own), names(&fk.ref_columns));
            for (what, a) in [("UPDATE", fk.on_update), ("DELETE", fk.on_delete)] {
                if a != RefAction::Restrict {
                    out.push_str(&format!(" ON {what} {}", action(a)));
                }
            }
            out
        }
    })
}

/// The attribute numbers of `t`'s columns named in expression `expr`.
pub(crate) fn columns_in(expr: &str, t: &TableRel) -> Vec<i16> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, expr).tokenize() else { return vec![] };
    let mut out = Vec::new();
    for tok in tokens {
        if let Token::Word(w) = tok {
            let name = if w.quote_style.is_some() { w.value } else { w.value.to_lowercase() };
            if let Some(p) = t.info.table.columns().iter().position(|c| c.name == name) {
                let a = p as i16 + 1;
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
    }
    out.sort();
    out
}

fn current_setting(args: &[Value], id: &Identity) -> Result<Value> {
    let name = text(&args[0]).to_lowercase();
    let missing_ok = bool_arg(args.get(1));
    // A set_config() earlier in the same statement.
    if let Some(c) = id.config_changes.and_then(|c| c.borrow().iter().rev().find(|c| c.name == name).cloned())
    {
        return Ok(Value::Text(c.value));
    }
    match id.vars().get(&name, id.txn) {
        Some(v) => Ok(Value::Text(v)),
        None if missing_ok => Ok(Value::Null),
        None => Err(Error::UndefinedObject(format!("unrecognized configuration parameter \"{name}\""))),
    }
}

/// `set_config(name, value, is_local)`: checks the value now (a bad one
/// fails the statement) and leaves the change for the session.
fn set_config(args: &[Value], id: &Identity) -> Result<Value> {
    if args[0].is_null() {
        return Err(Error::other("22023", "SET requires parameter name"));
    }
    let name = text(&args[0]).to_lowercase();
    let value = if args[1].is_null() { String::new() } else { text(&args[1]) };
    let local = bool_arg(args.get(2));
    let Some(changes) = id.config_changes else {
        return Err(Error::other("0A000", "set_config() can only be used in a session"));
    };
    let mut check = id.vars().into_owned();
    check.set(&name, std::slice::from_ref(&value))?;
    // The transaction has run a query (this one): it can no longer turn
    // READ WRITE, as in PostgreSQL.
    if name == "transaction_read_only" && id.txn.read_only && !crate::settings::parse_bool(&name, &value)? {
        return Err(Error::other("25001", "transaction read-write mode must be set before any query"));
    }
    let shown = check.get(&name, id.txn).unwrap_or_else(|| value.clone());
    changes.borrow_mut().push(crate::settings::ConfigChange { name, value, local });
    Ok(Value::Text(shown))
}

fn array_to_string(args: &[Value]) -> Result<Value> {
    let (Value::Text(a), sep) = (&args[0], &args[1]) else { return Ok(Value::Null) };
    if sep.is_null() {
        return Ok(Value::Null);
    }
    let null = args.get(2).filter(|v| !v.is_null()).map(text);
    let items: Vec<String> =
        array_text::parse(a)?.into_iter().filter_map(|x| x.or_else(|| null.clone())).collect();
    Ok(Value::Text(items.join(&text(sep))))
}

/// PostgreSQL's `pg_size_pretty`: bytes below 10 kB, then kB, MB, GB, TB,
/// PB, halving with rounding at each step.
fn size_pretty(size: i64) -> String {
    const LIMIT: i64 = 10 * 1024;
    const LIMIT2: i64 = LIMIT * 2 - 1;
    let half_rounded = |x: i64| (x + if x < 0 { -1 } else { 1 }) / 2;
    if size.abs() < LIMIT {
        return format!("{size} bytes");
    }
    let mut size = size >> 9;
    for unit in ["kB", "MB", "GB", "TB"] {
        if size.abs() < LIMIT2 {
            return format!("{} {unit}", half_rounded(size));
        }
        size >>= 10;
    }
    format!("{} PB", half_rounded(size))
}

thread_local! {
    static REGEXES: RefCell<HashMap<(String, bool), regex::Regex>> = RefCell::new(HashMap::new());
}

/// The longest regular expression compiled: compiling takes time in
/// proportion to the pattern and cannot be stopped part-way, and a
/// megabytes-long pattern takes seconds.
const MAX_PATTERN: usize = 64 << 10;

/// Whether `pattern` (a POSIX regular expression) matches anywhere in `s`.
fn regex_match(s: &str, pattern: &str, ci: bool) -> Result<bool> {
    if pattern.len() > MAX_PATTERN {
        return Err(Error::other(
            "2201B",
            "invalid regular expression: regular expression is too complex (longer than 64kB)",
        ));
    }
    REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        let key = (pattern.to_string(), ci);
        if !cache.contains_key(&key) {
            let re = regex::RegexBuilder::new(pattern).case_insensitive(ci).build().map_err(|e| {
                // The regex crate's message spans lines; keep its last.
                let text = e.to_string();
                let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
                let last = last.trim().trim_start_matches("error: ");
                Error::other("2201B", format!("invalid regular expression: {last}"))
            })?;
            if cache.len() >= 256 {
                cache.clear();
            }
            cache.insert(key.clone(), re);
        }
        Ok(cache[&key].is_match(s))
    })
}

/// When a `pg_sleep` form called with `arg` (not NULL) should wake, as a
/// time from now: PostgreSQL's `pg_sleep_for(i)` is `pg_sleep_until(now +
/// i)` with calendar arithmetic, and a time in the past, or a negative or
/// NaN number of seconds, does not pause at all.
fn sleep_until(how: SleepFor, arg: &Value) -> Result<std::time::Duration> {
    let now = centum_types::TimestampTz::now();
    let micros = match (how, arg) {
        (SleepFor::Seconds, v) => {
            let secs = crate::functions::operators::f64_of(v).unwrap_or(0.0);
            if secs.is_nan() || secs <= 0.0 {
                0
            } else {
                (secs * 1e6).min(i64::MAX as f64) as i64
            }
        }
        (SleepFor::Interval, Value::Interval(i)) => {
            centum_types::interval::add_to_timestamp(now.0, *i)?.saturating_sub(now.0)
        }
        (SleepFor::Until, Value::TimestampTz(t)) => t.0.saturating_sub(now.0),
        (_, v) => return Err(Error::other("XX000", format!("pg_sleep of {v:?}"))),
    };
    Ok(std::time::Duration::from_micros(micros.max(0) as u64))
}

/// Runs advisory lock function `a` for the session `id` names. `void`
/// results print as an empty string.
fn advisory(
    a: Advisory,
    args: &[Value],
    id: &Identity,
    interrupted: &dyn Fn() -> Result<()>,
) -> Result<Value> {
    use crate::advisory::{Holder, Key, Mode, Scope, Wait};
    let Some(activity) = id.activity.filter(|_| id.holder != 0) else {
        return Err(Error::other("55000", "advisory locks are taken by a session"));
    };
    let locks = &activity.advisory;
    let int = |i: usize| args.get(i).and_then(integer).unwrap_or(0);
    let key = match args.len() {
        2 => Key::pair(int(0) as i32, int(1) as i32),
        _ => Key::bigint(int(0)),
    };
    let holder = Holder { id: id.holder, pid: id.backend.map(|b| b.pid) };
    let mode = if a.shared { Mode::Shared } else { Mode::Exclusive };
    let scope = if a.xact { Scope::Transaction } else { Scope::Session };
    Ok(match a.op {
        AdvisoryOp::Lock => {
            let wait = Wait { timeout: id.vars().lock_timeout, interrupted };
            locks.lock(holder, key, mode, scope, &wait)?;
            Value::Text(String::new())
        }
        AdvisoryOp::TryLock => Value::Boolean(locks.try_lock(holder, key, mode, scope)),
        AdvisoryOp::Unlock => Value::Boolean(locks.unlock(id.holder, key, mode)),
        AdvisoryOp::UnlockAll => {
            locks.unlock_all(id.holder);
            Value::Text(String::new())
        }
    })
}

/// Sleeps for `d` (pg_sleep), in slices, so that a cancel, the statement
/// timeout or a vanished client (`interrupted`) ends it within moments
/// (57014). On a server worker the pause is a blocking section: the
/// worker's other sessions go on meanwhile.
fn pause(d: std::time::Duration, interrupted: &dyn Fn() -> Result<()>) -> Result<()> {
    const SLICE: std::time::Duration = std::time::Duration::from_millis(10);
    let until = std::time::Instant::now().checked_add(d);
    loop {
        interrupted()?;
        let left = match until {
            Some(u) => u.saturating_duration_since(std::time::Instant::now()),
            None => SLICE,
        };
        if left.is_zero() {
            return Ok(());
        }
        centum_engine::blocking::section(|| std::thread::sleep(left.min(SLICE)));
    }
}

/// Whether role `user` holds `wanted` (`SELECT`, `SELECT, INSERT`, with
/// `WITH GRANT OPTION` where asked) on `object` (a name or an OID) of
/// `kind`: any one of the listed privileges, as in PostgreSQL.
fn has_privilege(
    snap: &Snapshot,
    kind: ObjectKind,
    user: &str,
    object: &Value,
    wanted: &str,
    path: &[String],
) -> Result<bool> {
    use crate::privileges::{held, named};
    let (kind, name) = match kind {
        ObjectKind::Relation | ObjectKind::Sequence => {
            let o = match object {
                Value::Text(t) => regclass_in(snap, t, path)?,
                v => oid_arg(v),
            };
            match snap.rel(o) {
                Some(RelRef::Table(t)) => (ObjectKind::Relation, t.engine_name.clone()),
                Some(RelRef::View(v)) => (ObjectKind::Relation, v.def.name.clone()),
                Some(RelRef::Sequence(q)) => (ObjectKind::Sequence, q.engine_name.clone()),
                _ => return Err(Error::other("42P01", format!("relation with OID {o} does not exist"))),
            }
        }
        ObjectKind::Schema => {
            let n = match object {
                Value::Text(t) => t.clone(),
                v => snap.schema_name(oid_arg(v)).map(str::to_string).unwrap_or_default(),
            };
            if snap.schema_oid(&n) == 0 {
                return Err(Error::other("3F000", format!("schema \"{n}\" does not exist")));
            }
            (ObjectKind::Schema, n)
        }
        ObjectKind::Routine => {
            let n = match object {
                Value::Text(t) => t.split('(').next().unwrap_or_default().trim().to_string(),
                v => snap.routine(oid_arg(v)).map(|r| r.name.clone()).unwrap_or_default(),
            };
            let n = n.rsplit('.').next().unwrap_or_default().to_string();
            if !snap.routines.iter().any(|(_, r)| r.name == n) {
                // Built-in functions: everyone may execute them.
                return Ok(true);
            }
            (ObjectKind::Routine, n)
        }
    };
    let mut asked = Vec::new();
    for part in wanted.split(',') {
        let p = part.trim().to_ascii_uppercase();
        let (word, option) = match p.strip_suffix("WITH GRANT OPTION") {
            Some(w) => (w.trim().to_string(), true),
            None => (p.clone(), false),
        };
        let bit = named(&word).filter(|b| b & kind.all() != 0).ok_or_else(|| {
            Error::other("22023", format!("unrecognized privilege type: \"{}\"", part.trim()))
        })?;
        asked.push((bit, option));
    }
    let role = snap.roles.iter().find(|(_, r)| r.name == user);
    match role {
        None => return Ok(true),
        Some((_, r)) if r.superuser => return Ok(true),
        Some(_) => {}
    }
    let db_owner = snap.role_name(snap.owner, user).unwrap_or_default();
    let acl = snap.privs_of(kind, &name).effective(kind, &name, &db_owner);
    let (privs, options) = held(&acl, user);
    Ok(asked.iter().any(|(bit, option)| privs & bit != 0 && (!option || options & bit != 0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_pretty_matches_postgres() {
        assert_eq!(size_pretty(1234567), "1206 kB");
        assert_eq!(size_pretty(10239), "10239 bytes");
        assert_eq!(size_pretty(10240), "10 kB");
        assert_eq!(size_pretty(1 << 40), "1024 GB");
    }

    #[test]
    fn regex_anchors_and_errors() {
        assert!(regex_match("t", "^(t)$", false).unwrap());
        assert!(!regex_match("t2", "^(t)$", false).unwrap());
        let huge = "(a|b)*c".repeat(100_000);
        assert!(regex_match("abc", &huge, false).is_err());
        assert!(regex_match("PG_toast", "^pg_", true).unwrap());
        assert_eq!(regex_match("x", "(", false).unwrap_err().sqlstate(), "2201B");
    }
}
