//! Sessions seen and signalled by other sessions, as in PostgreSQL:
//! `pg_stat_activity`, `pg_backend_pid()`, `pg_cancel_backend()`,
//! `pg_terminate_backend()`, `pg_locks` and the session counts of
//! `pg_stat_database`.

mod common;

use common::Server;
use postgres::{Client, NoTls};
use std::time::{Duration, Instant};

fn connect_as(s: &Server, user: &str, app: &str) -> Client {
    Client::connect(&format!("{} application_name={app}", s.conninfo(user)), NoTls).unwrap()
}

/// A server with table `acc` holding row (1, 0), and a superuser session
/// named `app` on it.
fn with_acc(app: &str) -> (Server, Client) {
    let s = Server::start(&[]);
    let mut c = connect_as(&s, "centum", app);
    c.batch_execute("CREATE TABLE acc (id int PRIMARY KEY, v int); INSERT INTO acc VALUES (1, 0)").unwrap();
    (s, c)
}

/// The pid of the session named `app`, once it shows `state`.
fn pid_of(observer: &mut Client, app: &str, state: &str) -> i32 {
    let started = Instant::now();
    loop {
        let rows = observer
            .query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = $2",
                &[&app, &state],
            )
            .unwrap();
        if let Some(r) = rows.first() {
            return r.get(0);
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{app} never showed as {state}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pg_stat_activity_shows_every_session_and_what_it_runs() {
    let s = Server::start(&[]);
    let mut me = connect_as(&s, "centum", "observer");
    let mut other = connect_as(&s, "centum", "worker");
    other.batch_execute("BEGIN; SELECT 1").unwrap();
    let row = me
        .query_one(
            "SELECT pid, usename, datname, state, query, client_addr, backend_type \
             FROM pg_stat_activity WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, String>(1), "centum");
    assert_eq!(row.get::<_, String>(3), "active");
    assert!(row.get::<_, String>(4).contains("pg_stat_activity"));
    assert_eq!(row.get::<_, String>(5), "127.0.0.1");
    assert_eq!(row.get::<_, String>(6), "client backend");
    // usesysid joins to pg_roles, as monitoring queries join it; a second
    // role's session shows its own role's OID.
    me.batch_execute("CREATE ROLE watcher LOGIN").unwrap();
    let mut watcher = connect_as(&s, "watcher", "watcher");
    let joined = "SELECT count(*) FROM pg_stat_activity a JOIN pg_roles r ON r.oid = a.usesysid AND r.rolname = a.usename";
    assert_eq!(watcher.query_one(joined, &[]).unwrap().get::<_, i64>(0), 3);
    drop(watcher);
    let (state, query): (String, String) = {
        let r = me
            .query_one("SELECT state, query FROM pg_stat_activity WHERE application_name = 'worker'", &[])
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((state.as_str(), query.as_str()), ("idle in transaction", "BEGIN; SELECT 1"));
    other.batch_execute("SELECT 1/0").unwrap_err();
    assert!(pid_of(&mut me, "worker", "idle in transaction (aborted)") > 0);
    other.batch_execute("ROLLBACK").unwrap();
    pid_of(&mut me, "worker", "idle");
    // A closed session leaves the view.
    drop(other);
    let started = Instant::now();
    let gone = "SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'worker'";
    while !me.query_one(gone, &[]).unwrap().get::<_, bool>(0) {
        assert!(started.elapsed() < Duration::from_secs(10), "a closed session stayed in pg_stat_activity");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn cancel_and_terminate_by_pid() {
    let (s, mut admin) = with_acc("admin");
    // Cancel: the running statement fails with 57014, the session goes on.
    let busy = std::thread::spawn({
        let url = s.conninfo("centum");
        move || {
            let mut c = Client::connect(&format!("{url} application_name=busy"), NoTls).unwrap();
            let e = c.batch_execute("SELECT count(*) FROM generate_series(1, 100000000000)").unwrap_err();
            let code = e.code().unwrap().code().to_string();
            (code, c.query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0))
        }
    });
    let pid = pid_of(&mut admin, "busy", "active");
    assert!(admin.query_one("SELECT pg_cancel_backend($1)", &[&pid]).unwrap().get::<_, bool>(0));
    assert_eq!(busy.join().unwrap(), ("57014".to_string(), 1));
    // An unknown pid is not signalled.
    assert!(!admin.query_one("SELECT pg_cancel_backend(-7)", &[]).unwrap().get::<_, bool>(0));
    // Terminate: a session idle in a block ends (57P01) and its row is free.
    let mut idle = connect_as(&s, "centum", "idle");
    idle.batch_execute("BEGIN; UPDATE acc SET v = 1 WHERE id = 1").unwrap();
    let pid = pid_of(&mut admin, "idle", "idle in transaction");
    assert!(admin.query_one("SELECT pg_terminate_backend($1)", &[&pid]).unwrap().get::<_, bool>(0));
    let e = idle.batch_execute("SELECT 1").unwrap_err();
    assert!(idle.is_closed() || e.code().map(|c| c.code()) == Some("57P01"), "{e}");
    admin.batch_execute("SET lock_timeout = 3000; UPDATE acc SET v = 2 WHERE id = 1").unwrap();
    // A session may signal its own role's sessions; another role's only as
    // a superuser.
    admin.batch_execute("CREATE ROLE bob LOGIN").unwrap();
    let mut bob = connect_as(&s, "bob", "bob");
    let admin_pid: i32 = admin.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let e = bob.query_one("SELECT pg_cancel_backend($1)", &[&admin_pid]).unwrap_err();
    assert_eq!(e.code().unwrap().code(), "42501", "{e}");
    let bob_pid: i32 = bob.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    assert!(admin.query_one("SELECT pg_cancel_backend($1)", &[&bob_pid]).unwrap().get::<_, bool>(0));
}

#[test]
fn a_waiting_session_shows_its_wait_and_who_blocks_it() {
    let (s, mut holder) = with_acc("holder");
    holder.batch_execute("BEGIN; UPDATE acc SET v = 1 WHERE id = 1").unwrap();
    let holder_pid: i32 = holder.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let waiter = std::thread::spawn({
        let url = s.conninfo("centum");
        move || {
            let mut c = Client::connect(&format!("{url} application_name=waiter"), NoTls).unwrap();
            c.batch_execute("UPDATE acc SET v = 2 WHERE id = 1").unwrap();
        }
    });
    let mut admin = connect_as(&s, "centum", "admin");
    let waiter_pid = pid_of(&mut admin, "waiter", "active");
    let started = Instant::now();
    loop {
        let r = admin
            .query_one(
                "SELECT wait_event_type, wait_event, pg_blocking_pids(pid)::text FROM pg_stat_activity WHERE pid = $1",
                &[&waiter_pid],
            )
            .unwrap();
        let got: (Option<String>, Option<String>, String) = (r.get(0), r.get(1), r.get(2));
        if got.0.is_some() {
            assert_eq!(got, (Some("Lock".into()), Some("transactionid".into()), format!("{{{holder_pid}}}")));
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the waiter never showed its wait");
        std::thread::sleep(Duration::from_millis(20));
    }
    let idle: (Option<String>, String) = {
        let r = admin
            .query_one(
                "SELECT wait_event_type, pg_blocking_pids(pid)::text FROM pg_stat_activity WHERE pid = $1",
                &[&holder_pid],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!(idle, (None, "{}".to_string()));
    // The query monitoring guides give for "who blocks whom": the waiter's
    // ungranted lock on a transaction id, joined to the granted one.
    let blocking = admin
        .query(
            "SELECT blocked.pid, blocking.pid, blocked.mode, blocking.mode \
             FROM pg_locks blocked JOIN pg_locks blocking \
               ON blocking.locktype = blocked.locktype \
              AND blocking.transactionid IS NOT DISTINCT FROM blocked.transactionid \
              AND blocking.pid <> blocked.pid \
             WHERE NOT blocked.granted AND blocking.granted",
            &[],
        )
        .unwrap();
    let pairs: Vec<(i32, i32, String, String)> =
        blocking.iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3))).collect();
    assert_eq!(pairs, vec![(waiter_pid, holder_pid, "ShareLock".into(), "ExclusiveLock".into())]);
    // Each running transaction holds its virtual id; the admin's own
    // statement is one of them.
    let vxids: i64 = admin
        .query_one("SELECT count(*) FROM pg_locks WHERE locktype = 'virtualxid' AND granted", &[])
        .unwrap()
        .get(0);
    assert_eq!(vxids, 3);
    holder.batch_execute("COMMIT").unwrap();
    waiter.join().unwrap();
    assert_eq!(admin.query_one("SELECT v FROM acc", &[]).unwrap().get::<_, i32>(0), 2);
}

#[test]
fn pg_stat_database_counts_sessions_and_how_they_ended() {
    let (s, mut admin) = with_acc("admin");
    let counts = |c: &mut Client| -> (i32, i64, i64, i64, i64) {
        let r = c
            .query_one(
                "SELECT numbackends, sessions, sessions_abandoned, sessions_fatal, sessions_killed \
                 FROM pg_stat_database",
                &[],
            )
            .unwrap();
        (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))
    };
    let before = counts(&mut admin);
    assert_eq!(before.0, 1);
    // One says goodbye, one is terminated.
    connect_as(&s, "centum", "polite").close().unwrap();
    let _victim = connect_as(&s, "centum", "victim");
    let pid = pid_of(&mut admin, "victim", "idle");
    admin.execute("SELECT pg_terminate_backend($1)", &[&pid]).unwrap();
    let started = Instant::now();
    loop {
        let now = counts(&mut admin);
        if now.4 == before.4 + 1 && now.0 == 1 {
            assert_eq!((now.1, now.2, now.3), (before.1 + 2, before.2, before.3));
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{now:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = admin
        .query_one("SELECT session_time > 0, active_time > 0, xact_commit > 0 FROM pg_stat_database", &[])
        .unwrap();
    assert_eq!((r.get::<_, bool>(0), r.get::<_, bool>(1), r.get::<_, bool>(2)), (true, true, true));
}

/// A session waiting for an advisory lock names its holder in
/// `pg_blocking_pids` and `pg_locks`; the holder's connection closing
/// releases the lock, and the waiter takes it.
#[test]
fn an_advisory_lock_waits_for_its_holder_until_the_holder_goes() {
    let s = Server::start(&[]);
    let mut holder = connect_as(&s, "centum", "holder");
    holder.batch_execute("SELECT pg_advisory_lock(42)").unwrap();
    let holder_pid: i32 = holder.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let waiter = std::thread::spawn({
        let url = s.conninfo("centum");
        move || {
            let mut c = Client::connect(&format!("{url} application_name=waiter"), NoTls).unwrap();
            c.batch_execute("SELECT pg_advisory_lock(42)").unwrap();
            c.query_one("SELECT pg_try_advisory_lock(42)", &[]).unwrap().get::<_, bool>(0)
        }
    });
    let mut admin = connect_as(&s, "centum", "admin");
    let waiter_pid = pid_of(&mut admin, "waiter", "active");
    let started = Instant::now();
    loop {
        let r = admin.query_one("SELECT pg_blocking_pids($1)::text", &[&waiter_pid]).unwrap();
        if r.get::<_, String>(0) == format!("{{{holder_pid}}}") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the waiter never showed whom it waits for");
        std::thread::sleep(Duration::from_millis(20));
    }
    let locks: Vec<(i32, i64, i16, String, bool)> = admin
        .query(
            "SELECT pid, objid::text::bigint, objsubid, mode, granted FROM pg_locks \
             WHERE locktype = 'advisory' ORDER BY granted DESC",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    assert_eq!(
        locks,
        vec![
            (holder_pid, 42, 1, "ExclusiveLock".to_string(), true),
            (waiter_pid, 42, 1, "ExclusiveLock".to_string(), false),
        ]
    );
    drop(holder);
    assert!(waiter.join().unwrap(), "the waiter holds the lock once its holder has gone");
}
