//! What administrators and tools send to control a server and a session:
//! `CHECKPOINT`, and settings through `set_config()`, `SET LOCAL` and
//! `current_setting()`, over both query protocols.

mod common;

use common::Server;
use postgres::{Client, NoTls, SimpleQueryMessage};

fn connect(s: &Server, user: &str) -> Client {
    Client::connect(&s.conninfo(user), NoTls).unwrap()
}

/// The name of the data directory's newest manifest: each checkpoint
/// writes a new one (none yet: empty).
fn manifest(s: &Server) -> String {
    let mut names: Vec<String> = std::fs::read_dir(s.dir.path().join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("manifest-"))
        .collect();
    names.sort();
    names.pop().unwrap_or_default()
}

fn simple_value(c: &mut Client, sql: &str) -> Option<String> {
    c.simple_query(sql).unwrap().into_iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
        _ => None,
    })?
}

#[test]
fn checkpoint_writes_a_checkpoint_through_both_protocols_and_only_for_a_superuser() {
    let mut s = Server::start(&[]);
    let mut c = connect(&s, "centum");
    c.batch_execute("CREATE TABLE t (k int PRIMARY KEY, v text); INSERT INTO t SELECT g, 'x' FROM generate_series(1, 1000) g")
        .unwrap();
    let before = manifest(&s);
    // The simple protocol, also inside a block and next to other
    // statements.
    c.batch_execute("CHECKPOINT").unwrap();
    let first = manifest(&s);
    assert!(first > before, "CHECKPOINT wrote no manifest ({before} then {first})");
    c.batch_execute("BEGIN; INSERT INTO t VALUES (1001, 'y'); CHECKPOINT; COMMIT").unwrap();
    let second = manifest(&s);
    assert!(second > first);
    // The extended protocol.
    assert_eq!(c.execute("CHECKPOINT", &[]).unwrap(), 0);
    assert!(manifest(&s) > second);
    // Anyone else: 42501, and nothing else harmed.
    c.batch_execute("CREATE ROLE app LOGIN PASSWORD 'pw'").unwrap();
    let mut app = Client::connect(&format!("{} password=pw", s.conninfo("app")), NoTls).unwrap();
    let e = app.batch_execute("CHECKPOINT").unwrap_err();
    assert_eq!(e.code().unwrap().code(), "42501", "{e}");
    assert_eq!(simple_value(&mut app, "SELECT 1").as_deref(), Some("1"));
    drop((c, app));
    // What the checkpoints hold comes back after a restart.
    assert!(s.stop());
    s.launch(&[], &[]);
    let mut c = connect(&s, "centum");
    assert_eq!(simple_value(&mut c, "SELECT count(*) FROM t").as_deref(), Some("1001"));
}

#[test]
fn set_config_and_set_local_act_over_both_protocols() {
    let s = Server::start(&[]);
    let mut c = connect(&s, "centum");
    // pg_dump's first query, through the extended protocol.
    let row = c.query_one("SELECT pg_catalog.set_config('search_path', '', false)", &[]).unwrap();
    assert_eq!(row.get::<_, String>(0), "");
    assert_eq!(simple_value(&mut c, "SHOW search_path").as_deref(), Some(""));
    c.batch_execute("SET search_path = public").unwrap();
    // A per-request setting as applications keep it: set_config(.., true)
    // in a block, read back by the same block, gone after it.
    c.batch_execute("BEGIN").unwrap();
    c.execute("SELECT set_config('app.tenant', $1, true)", &[&"t42"]).unwrap();
    let tenant: String = c.query_one("SELECT current_setting('app.tenant')", &[]).unwrap().get(0);
    assert_eq!(tenant, "t42");
    c.batch_execute("SET LOCAL statement_timeout = '2s'").unwrap();
    assert_eq!(simple_value(&mut c, "SHOW statement_timeout").as_deref(), Some("2s"));
    c.batch_execute("COMMIT").unwrap();
    assert_eq!(simple_value(&mut c, "SELECT current_setting('app.tenant', true)"), Some(String::new()));
    assert_eq!(simple_value(&mut c, "SHOW statement_timeout").as_deref(), Some("0"));
    // A bad value fails the statement with the setting's SQLSTATE.
    let e = c.query_one("SELECT set_config('lock_timeout', 'soon', false)", &[]).unwrap_err();
    assert_eq!(e.code().unwrap().code(), "22023", "{e}");
}
