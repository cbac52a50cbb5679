//! Session settings: what `SET`, `RESET`, `SHOW`, `set_config()`,
//! `current_setting()` and `pg_settings` read and change, and how a
//! transaction block takes its changes back.
//!
//! A session's settings are one [`Settings`] value: the few that steer
//! the engine held typed (isolation, read-only default, search path,
//! timeouts, statement memory, synchronous commit), and every setting a
//! client gave, by name, as text. Names Centum does not know are kept and
//! shown, as PostgreSQL keeps custom settings (`myapp.tenant`); a client's
//! `SET extra_float_digits = 3` thus succeeds. The server's fixed facts
//! (`server_version_num`, `lc_collate`, ...) are shown and cannot be set
//! (55P02).
//!
//! A few describe the transaction a statement runs in rather than the
//! session ([`TxnView`]): `transaction_isolation`, `transaction_read_only`
//! (on in a READ ONLY transaction, and always on a standby) and
//! `in_hot_standby`; `default_transaction_read_only` shows on for a
//! standby too, as the server reports it to clients.
//!
//! Inside a transaction block changes are transactional, as in
//! PostgreSQL:
//!
//! ```text
//!   BEGIN; SET a = 1; SET LOCAL b = 2; ...
//!     COMMIT           a stays 1; b goes back to its value before the block
//!     ROLLBACK         a and b go back
//!     ROLLBACK TO sp   what was set after sp goes back
//! ```
//!
//! [`BlockSettings`] holds what that needs: the settings as the block
//! found them (what ROLLBACK restores), and, once the block has a LOCAL
//! change, the settings without its LOCAL changes (what COMMIT keeps). A
//! savepoint copies both when it is taken, if the block has changed
//! anything yet.

use crate::error::{Error, Result};
use centum_engine::Isolation;
use std::collections::HashMap;
use std::time::Duration;

/// A setting Centum knows: its name as PostgreSQL spells it, the group
/// `pg_settings` puts it in, whether a client may change it, and what it
/// does.
struct Known {
    name: &'static str,
    category: &'static str,
    preset: bool,
    about: &'static str,
}

const fn known(name: &'static str, category: &'static str, about: &'static str) -> Known {
    Known { name, category, preset: false, about }
}

const fn fixed(name: &'static str, about: &'static str) -> Known {
    Known { name, category: "Preset Options", preset: true, about }
}

const LOCALE: &str = "Client Connection Defaults / Locale and Formatting";
const STATEMENT: &str = "Client Connection Defaults / Statement Behavior";

/// Every setting `SHOW ALL` and `pg_settings` list (besides any a client
/// set), by name.
const KNOWN: &[Known] = &[
    known("DateStyle", LOCALE, "How dates and times are written out."),
    known("TimeZone", LOCALE, "The time zone times are shown in (always UTC)."),
    known(
        "application_name",
        "Reporting and Logging / What to Log",
        "The name the client gave, shown in pg_stat_activity.",
    ),
    known("client_encoding", LOCALE, "The client's character encoding (always UTF8)."),
    known(
        "default_text_search_config",
        LOCALE,
        "The text search configuration of to_tsvector, to_tsquery and @@ when none is named.",
    ),
    known(
        "default_table_access_method",
        STATEMENT,
        "How new tables store their rows: heap, the only method, as pg_am lists it (Centum keeps every table's row versions in memory).",
    ),
    known("default_transaction_isolation", STATEMENT, "The isolation level new transactions start with."),
    known(
        "default_transaction_read_only",
        STATEMENT,
        "Whether new transactions start READ ONLY (always on a standby).",
    ),
    known(
        "idle_in_transaction_session_timeout",
        STATEMENT,
        "How long a session may sit idle inside a block before it is ended (0: no limit).",
    ),
    known(
        "idle_session_timeout",
        STATEMENT,
        "How long a session may sit idle outside a block before it is ended (0: no limit).",
    ),
    fixed("in_hot_standby", "Whether the server is a standby, serving reads while it applies a primary's changes."),
    fixed("integer_datetimes", "Whether times are stored as integers (always on)."),
    known(
        "jit",
        "Query Tuning / Other Planner Options",
        "PostgreSQL's JIT compilation of queries; Centum compiles routines when they are created and has none, so it is off unless set.",
    ),
    fixed("lc_collate", "How text is ordered: by its bytes."),
    fixed("lc_ctype", "How characters are classified: C."),
    known(
        "lock_timeout",
        STATEMENT,
        "How long one wait for a row another transaction holds may last (0: no limit).",
    ),
    known(
        "log_min_duration_statement",
        "Reporting and Logging / When to Log",
        "Logs each request that runs at least this long, with the plans of its statements (-1: none, 0: all).",
    ),
    fixed("max_identifier_length", "The longest name an identifier may have."),
    known("search_path", STATEMENT, "The schemas unqualified names are looked up in, in order."),
    fixed("server_encoding", "The database's character encoding (always UTF8)."),
    fixed("server_version", "The PostgreSQL version the server answers as."),
    fixed("server_version_num", "The PostgreSQL version the server answers as, as a number."),
    fixed("data_directory_mode", "The permissions of the data directory (replication clients read them)."),
    fixed("wal_level", "What the log records: replica, or logical for logical decoding (set when the server starts)."),
    known(
        "standard_conforming_strings",
        "Version and Platform Compatibility / Previous PostgreSQL Versions",
        "Whether backslashes in '...' strings are ordinary characters (always on).",
    ),
    known(
        "statement_mem",
        "Resource Usage / Memory",
        "How much one statement's sorts, hash tables and results may hold.",
    ),
    known("statement_timeout", STATEMENT, "How long one statement may run (0: no limit)."),
    known(
        "synchronous_commit",
        "Write-Ahead Log / Settings",
        "Whether a commit waits until its log record is on disk.",
    ),
    known("transaction_isolation", STATEMENT, "The isolation level of the current transaction."),
    known(
        "transaction_read_only",
        STATEMENT,
        "Whether the current transaction is READ ONLY (always on a standby).",
    ),
];

fn find_known(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name.eq_ignore_ascii_case(name))
}

/// The transaction a setting is read in, and the server's role: what the
/// settings that describe them show.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxnView {
    /// The open transaction's isolation level (`None`: none is open).
    pub isolation: Option<Isolation>,
    /// The transaction may not write: READ ONLY, or begun so by
    /// `default_transaction_read_only`, or on a standby.
    pub read_only: bool,
    /// The database is a standby.
    pub standby: bool,
}

impl TxnView {
    /// Outside any transaction, on a primary.
    pub const NONE: TxnView = TxnView { isolation: None, read_only: false, standby: false };
}

/// One session's settings.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The isolation level new transactions start with.
    pub isolation: Isolation,
    /// `default_transaction_read_only`: new transactions start READ ONLY.
    pub default_read_only: bool,
    pub search_path: Vec<String>,
    /// `statement_timeout`: none is no limit.
    pub statement_timeout: Option<Duration>,
    /// What one statement's buffers may hold (`statement_mem`).
    pub statement_mem: usize,
    /// `synchronous_commit = off`.
    pub delayed_durability: bool,
    /// The longest one wait for a row another transaction holds may last
    /// (`lock_timeout`): then 55P03.
    pub lock_timeout: Option<Duration>,
    /// `idle_in_transaction_session_timeout` and `idle_session_timeout`.
    pub idle_timeouts: (Option<Duration>, Option<Duration>),
    /// `log_min_duration_statement`: requests at least this long are
    /// logged; `None` (-1) logs none.
    pub log_min_duration: Option<Duration>,
    /// `default_text_search_config`.
    pub text_search_config: centum_types::tsearch::config::Config,
    /// `wal_level = logical` (the server's, shown only).
    pub wal_level_logical: bool,
    /// Every setting a client set, by lower-case name, as it gave it.
    text: HashMap<String, String>,
}

impl Default for Settings {
    /// The built-in defaults.
    fn default() -> Settings {
        Settings {
            isolation: Isolation::ReadCommitted,
            default_read_only: false,
            search_path: vec!["public".into()],
            statement_timeout: None,
            statement_mem: DEFAULT_STATEMENT_MEM,
            delayed_durability: false,
            lock_timeout: None,
            idle_timeouts: (None, None),
            log_min_duration: None,
            text_search_config: centum_types::tsearch::config::Config::English,
            wal_level_logical: false,
            text: HashMap::new(),
        }
    }
}

/// Whether only a superuser may change setting `name`, as PostgreSQL's
/// `superuser` parameters: what goes to the server's log is the
/// operator's to decide, not any client's.
pub fn superuser_only(name: &str) -> bool {
    matches!(name, "log_min_duration_statement")
}

impl Settings {
    /// `SET name = values`: checks the value and takes it.
    pub fn set(&mut self, name: &str, values: &[String]) -> Result<()> {
        let joined = values.join(", ");
        match name {
            "search_path" => {
                self.search_path = values
                    .iter()
                    .flat_map(|v| v.split(','))
                    .map(|v| v.trim().trim_matches('"').to_lowercase())
                    .filter(|v| !v.is_empty())
                    .collect();
            }
            "transaction_isolation" | "default_transaction_isolation" => {
                self.isolation = parse_isolation(&joined)?
            }
            "default_transaction_read_only" => self.default_read_only = parse_bool(name, &joined)?,
            // The transaction's, not the session's: the session takes it
            // (see `Session::set_transaction_read_only`); only checked here.
            "transaction_read_only" => {
                parse_bool(name, &joined)?;
                return Ok(());
            }
            "statement_timeout" => self.statement_timeout = parse_duration(name, &joined)?,
            "lock_timeout" => self.lock_timeout = parse_duration(name, &joined)?,
            "idle_in_transaction_session_timeout" => self.idle_timeouts.0 = parse_duration(name, &joined)?,
            "idle_session_timeout" => self.idle_timeouts.1 = parse_duration(name, &joined)?,
            "statement_mem" => self.statement_mem = parse_bytes(name, &joined)?,
            "log_min_duration_statement" => self.log_min_duration = parse_log_duration(name, &joined)?,
            "default_table_access_method" if joined.trim() != "heap" => {
                return Err(Error::InvalidParameter(format!(
                    "invalid value for parameter \"default_table_access_method\": \"{}\"\nDETAIL:  Table access method \"{}\" does not exist.",
                    joined.trim(),
                    joined.trim()
                )));
            }
            "jit" => {
                parse_bool(name, &joined)?;
            }
            "synchronous_commit" => {
                self.delayed_durability =
                    matches!(joined.to_lowercase().as_str(), "off" | "false" | "0" | "local")
            }
            "default_text_search_config" => {
                self.text_search_config =
                    centum_types::tsearch::config::Config::from_name(&joined).map_err(|_| {
                        Error::InvalidParameter(format!(
                            "invalid value for parameter \"{name}\": \"{joined}\""
                        ))
                    })?;
                // Kept as PostgreSQL shows it, schema-qualified.
                let shown = format!("pg_catalog.{}", self.text_search_config.name());
                self.text.insert(name.to_string(), shown);
                return Ok(());
            }
            _ => {
                if let Some(k) = find_known(name).filter(|k| k.preset) {
                    return Err(Error::other("55P02", format!("parameter \"{}\" cannot be changed", k.name)));
                }
            }
        }
        self.text.insert(name.to_string(), joined);
        Ok(())
    }

    /// `RESET name` (every setting when `None`): back to `defaults`.
    pub fn reset(&mut self, name: Option<&str>, defaults: &Settings) {
        let Some(n) = name else {
            *self = defaults.clone();
            return;
        };
        let all = |d: &Settings, s: &mut Settings| match n {
            "search_path" => s.search_path = d.search_path.clone(),
            "transaction_isolation" | "default_transaction_isolation" => s.isolation = d.isolation,
            "default_transaction_read_only" => s.default_read_only = d.default_read_only,
            "statement_timeout" => s.statement_timeout = d.statement_timeout,
            "lock_timeout" => s.lock_timeout = d.lock_timeout,
            "idle_in_transaction_session_timeout" => s.idle_timeouts.0 = d.idle_timeouts.0,
            "idle_session_timeout" => s.idle_timeouts.1 = d.idle_timeouts.1,
            "statement_mem" => s.statement_mem = d.statement_mem,
            "log_min_duration_statement" => s.log_min_duration = d.log_min_duration,
            "synchronous_commit" => s.delayed_durability = d.delayed_durability,
            "default_text_search_config" => s.text_search_config = d.text_search_config,
            _ => {}
        };
        all(defaults, self);
        match defaults.text.get(n) {
            Some(v) => self.text.insert(n.to_string(), v.clone()),
            None => self.text.remove(n),
        };
    }

    /// A setting's value as SHOW prints it, in transaction `txn`.
    pub fn show(&self, name: &str, txn: TxnView) -> Result<String> {
        self.get(name, txn)
            .ok_or_else(|| Error::UndefinedObject(format!("unrecognized configuration parameter \"{name}\"")))
    }

    /// [`Settings::show`], `None` for a setting nobody set and Centum does
    /// not know.
    pub fn get(&self, name: &str, txn: TxnView) -> Option<String> {
        let name = name.to_lowercase();
        let duration = |d: Option<Duration>| d.map_or_else(|| "0".into(), |d| show_duration(d.as_millis()));
        let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
        Some(match name.as_str() {
            "transaction_isolation" | "transaction isolation level" => {
                isolation_name(txn.isolation.unwrap_or(self.isolation)).into()
            }
            "default_transaction_isolation" => isolation_name(self.isolation).into(),
            "transaction_read_only" => on_off(txn.read_only),
            "default_transaction_read_only" => on_off(self.default_read_only || txn.standby),
            "in_hot_standby" => on_off(txn.standby),
            "search_path" => self.search_path.join(", "),
            "statement_timeout" => duration(self.statement_timeout),
            "lock_timeout" => duration(self.lock_timeout),
            "idle_in_transaction_session_timeout" => duration(self.idle_timeouts.0),
            "idle_session_timeout" => duration(self.idle_timeouts.1),
            "statement_mem" => centum_engine::memory::show_size(self.statement_mem),
            "log_min_duration_statement" => match self.log_min_duration {
                None => "-1".into(),
                Some(d) if d.is_zero() => "0".into(),
                Some(d) => show_duration(d.as_millis()),
            },
            "synchronous_commit" => if self.delayed_durability { "off" } else { "on" }.into(),
            "jit" => if self.flag("jit", false) { "on" } else { "off" }.into(),
            "default_table_access_method" => "heap".into(),
            "default_text_search_config" => format!("pg_catalog.{}", self.text_search_config.name()),
            "server_version" => "15.0".into(),
            "server_version_num" => "150000".into(),
            "server_encoding" | "client_encoding" => "UTF8".into(),
            "lc_collate" | "lc_ctype" => "C".into(),
            "datestyle" => "ISO, MDY".into(),
            "timezone" | "time zone" => "UTC".into(),
            "standard_conforming_strings" | "integer_datetimes" => "on".into(),
            "max_identifier_length" => "63".into(),
            "data_directory_mode" => "0700".into(),
            "wal_level" => if self.wal_level_logical { "logical" } else { "replica" }.into(),
            other => match self.text.get(other) {
                Some(v) => v.clone(),
                None if other == "application_name" => String::new(),
                None => return None,
            },
        })
    }

    /// Goes back to `earlier` (a block's end, ROLLBACK TO), keeping the
    /// custom names defined since as empty, as PostgreSQL keeps a
    /// placeholder once defined.
    pub fn restore(&mut self, earlier: Settings) {
        let mut defined: Vec<String> = self
            .text
            .keys()
            .filter(|n| find_known(n).is_none() && !earlier.text.contains_key(*n))
            .cloned()
            .collect();
        *self = earlier;
        for n in defined.drain(..) {
            self.text.insert(n, String::new());
        }
    }

    /// A boolean setting (`on`, `true`, `yes`, `1` and their opposites),
    /// `default` when unset or unreadable.
    pub fn flag(&self, name: &str, default: bool) -> bool {
        match self.text.get(name).map(|v| v.trim().to_lowercase()).as_deref() {
            Some("on" | "true" | "yes" | "1") => true,
            Some("off" | "false" | "no" | "0") => false,
            _ => default,
        }
    }

    /// A setting as `pg_settings` shows it: durations in milliseconds and
    /// sizes in kilobytes, with that unit; otherwise as SHOW shows it.
    pub fn in_unit(&self, name: &str, txn: TxnView) -> Option<(String, Option<&'static str>)> {
        let ms = |d: Option<Duration>| Some((d.map_or(0, |d| d.as_millis()).to_string(), Some("ms")));
        match name.to_lowercase().as_str() {
            "statement_timeout" => ms(self.statement_timeout),
            "lock_timeout" => ms(self.lock_timeout),
            "idle_in_transaction_session_timeout" => ms(self.idle_timeouts.0),
            "idle_session_timeout" => ms(self.idle_timeouts.1),
            "statement_mem" => Some(((self.statement_mem >> 10).to_string(), Some("kB"))),
            "log_min_duration_statement" => {
                let ms = self.log_min_duration.map_or(-1, |d| d.as_millis() as i128);
                Some((ms.to_string(), Some("ms")))
            }
            _ => self.get(name, txn).map(|v| (v, None)),
        }
    }

    /// Every setting: the known ones and any a client set, sorted by name,
    /// with its value, its group, whether it is fixed, and what it does.
    pub fn all(&self, txn: TxnView) -> Vec<Listed> {
        let mut names: Vec<String> = KNOWN.iter().map(|k| k.name.to_string()).collect();
        names.extend(self.text.keys().filter(|n| find_known(n).is_none()).cloned());
        names.sort_by_key(|n| n.to_lowercase());
        names
            .into_iter()
            .filter_map(|name| {
                let value = self.get(&name, txn)?;
                let k = find_known(&name);
                Some(Listed {
                    value,
                    category: k.map_or("Customized Options", |k| k.category),
                    preset: k.is_some_and(|k| k.preset),
                    about: k.map_or("", |k| k.about),
                    name,
                })
            })
            .collect()
    }
}

/// One line of [`Settings::all`].
pub(crate) struct Listed {
    pub name: String,
    pub value: String,
    pub category: &'static str,
    pub preset: bool,
    pub about: &'static str,
}

/// The settings changes of an open block (see the module header).
#[derive(Clone, Debug)]
pub(crate) struct BlockSettings {
    /// The settings before the block's first change: ROLLBACK restores
    /// them.
    pub before: Settings,
    /// The settings without the block's LOCAL changes, once it has made
    /// one: COMMIT keeps them.
    pub kept: Option<Settings>,
}

/// A `set_config()` call of the statement running: applied to the
/// session when the statement succeeds.
#[derive(Clone, Debug)]
pub(crate) struct ConfigChange {
    pub name: String,
    pub value: String,
    /// `is_local`: until the block ends.
    pub local: bool,
}

pub(crate) fn isolation_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadCommitted => "read committed",
        Isolation::Snapshot => "repeatable read",
        Isolation::Serializable => "serializable",
    }
}

/// A boolean setting's value: `on`, `true`, `yes`, `1` and their
/// opposites, as PostgreSQL reads them.
pub(crate) fn parse_bool(name: &str, text: &str) -> Result<bool> {
    match text.trim().trim_matches('\'').to_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(Error::InvalidParameter(format!("parameter \"{name}\" requires a Boolean value"))),
    }
}

fn parse_isolation(text: &str) -> Result<Isolation> {
    match text.trim().to_lowercase().replace(['\'', '"'], "").as_str() {
        "read committed" | "read uncommitted" => Ok(Isolation::ReadCommitted),
        "repeatable read" | "snapshot" => Ok(Isolation::Snapshot),
        "serializable" => Ok(Isolation::Serializable),
        other => Err(Error::InvalidParameter(format!(
            "invalid value for parameter \"transaction_isolation\": \"{other}\""
        ))),
    }
}

/// A duration setting `name`: milliseconds, or with a unit; 0 is none.
pub(crate) fn parse_duration(name: &str, s: &str) -> Result<Option<Duration>> {
    let s = s.trim().trim_matches('\'').to_lowercase();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| Error::InvalidParameter(format!("invalid value for parameter \"{name}\": \"{s}\"")))?;
    let ms = match unit.trim() {
        "" | "ms" => n,
        "s" => n * 1000,
        "min" => n * 60_000,
        "h" => n * 3_600_000,
        "d" => n * 86_400_000,
        other => {
            return Err(Error::InvalidParameter(format!("invalid unit \"{other}\" for parameter \"{name}\"")))
        }
    };
    Ok((ms > 0).then(|| Duration::from_millis(ms)))
}

/// `log_min_duration_statement`: -1 (none), or milliseconds (0 and up)
/// with an optional unit, as [`parse_duration`] reads them.
fn parse_log_duration(name: &str, s: &str) -> Result<Option<Duration>> {
    let t = s.trim().trim_matches('\'');
    if t == "-1" {
        return Ok(None);
    }
    if t.starts_with('-') {
        return Err(Error::InvalidParameter(format!(
            "{t} is outside the valid range for parameter \"{name}\" (-1 .. 2147483647)"
        )));
    }
    Ok(Some(parse_duration(name, t)?.unwrap_or(Duration::ZERO)))
}

/// A memory size setting: a number of bytes, or with PostgreSQL's units
/// (`kB`, `MB`, `GB`, `TB`); at least 64 kB.
fn parse_bytes(name: &str, s: &str) -> Result<usize> {
    let s = s.trim().trim_matches('\'');
    let bytes = centum_engine::memory::parse_size(s)
        .map_err(|_| Error::InvalidParameter(format!("invalid value for parameter \"{name}\": \"{s}\"")))?;
    if bytes < 64 << 10 {
        return Err(Error::InvalidParameter(format!(
            "{s} is outside the valid range for parameter \"{name}\" (64kB ..)"
        )));
    }
    Ok(bytes)
}

/// A duration in the largest unit that divides it, as PostgreSQL shows it.
fn show_duration(ms: u128) -> String {
    for (unit, size) in [("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)] {
        if ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// The default `statement_mem`: 1 GiB.
pub const DEFAULT_STATEMENT_MEM: usize = 1 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_show_in_their_largest_unit() {
        let mut s = Settings::default();
        s.set("lock_timeout", &["100".into()]).unwrap();
        s.set("statement_timeout", &["120s".into()]).unwrap();
        assert_eq!(s.show("lock_timeout", TxnView::NONE).unwrap(), "100ms");
        assert_eq!(s.show("statement_timeout", TxnView::NONE).unwrap(), "2min");
        assert_eq!(s.show("idle_session_timeout", TxnView::NONE).unwrap(), "0");
    }

    #[test]
    fn log_min_duration_statement_takes_minus_one_zero_and_units() {
        let mut s = Settings::default();
        assert_eq!(
            (s.show("log_min_duration_statement", TxnView::NONE).unwrap(), s.log_min_duration),
            ("-1".into(), None)
        );
        s.set("log_min_duration_statement", &["0".into()]).unwrap();
        assert_eq!(
            (s.show("log_min_duration_statement", TxnView::NONE).unwrap(), s.log_min_duration),
            ("0".into(), Some(Duration::ZERO))
        );
        s.set("log_min_duration_statement", &["'1s'".into()]).unwrap();
        assert_eq!(s.show("log_min_duration_statement", TxnView::NONE).unwrap(), "1s");
        s.set("log_min_duration_statement", &["250ms".into()]).unwrap();
        assert_eq!(
            s.in_unit("log_min_duration_statement", TxnView::NONE).unwrap(),
            ("250".into(), Some("ms"))
        );
        s.set("log_min_duration_statement", &["-1".into()]).unwrap();
        assert_eq!(s.log_min_duration, None);
        assert_eq!(
            s.in_unit("log_min_duration_statement", TxnView::NONE).unwrap(),
            ("-1".into(), Some("ms"))
        );
        for bad in ["-2", "fast", "1 parsec"] {
            assert!(s.set("log_min_duration_statement", &[bad.into()]).is_err(), "{bad}");
        }
        s.reset(Some("log_min_duration_statement"), &Settings::default());
        assert_eq!(s.log_min_duration, None);
    }

    #[test]
    fn presets_cannot_be_set_and_unknown_names_are_kept() {
        let mut s = Settings::default();
        assert_eq!(s.set("server_version_num", &["1".into()]).unwrap_err().sqlstate(), "55P02");
        assert_eq!(s.show("server_version_num", TxnView::NONE).unwrap(), "150000");
        s.set("myapp.tenant", &["42".into()]).unwrap();
        assert_eq!(s.show("MyApp.Tenant", TxnView::NONE).unwrap(), "42");
        assert!(s.get("no_such_setting", TxnView::NONE).is_none());
        let d = Settings::default();
        s.reset(Some("myapp.tenant"), &d);
        assert!(s.get("myapp.tenant", TxnView::NONE).is_none());
    }
}
