//! LISTEN, UNLISTEN, NOTIFY and `pg_notify` between real clients: a
//! notification reaches every listening session when the sending
//! transaction commits (never when it rolls back, and a transaction's
//! duplicates once), an idle listener receives it at once, and a listener
//! inside a transaction block receives it when the block ends.

mod common;

use common::Server;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};
use std::time::Duration;

fn connect(s: &Server) -> Client {
    Client::connect(&s.conninfo("centum"), NoTls).unwrap()
}

/// The notifications `c` receives within `wait` after the last one, as
/// (sender pid, channel, payload).
fn received(c: &mut Client, wait: Duration) -> Vec<(i32, String, String)> {
    let mut n = c.notifications();
    let mut it = n.timeout_iter(wait);
    let mut out = Vec::new();
    while let Some(m) = it.next().unwrap() {
        out.push((m.process_id(), m.channel().to_string(), m.payload().to_string()));
    }
    out
}

#[test]
fn notifications_reach_listeners_when_the_sender_commits() {
    let s = Server::start(&[]);
    let mut listener = connect(&s);
    let mut sender = connect(&s);
    let sender_pid: i32 = sender.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let listener_pid: i32 = listener.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    listener.batch_execute("LISTEN jobs").unwrap();
    sender.batch_execute("NOTIFY jobs, 'one'").unwrap();
    sender.query_one("SELECT pg_notify('jobs', 'two')", &[]).unwrap();
    sender.batch_execute("NOTIFY other, 'not listened to'").unwrap();
    sender.batch_execute("BEGIN; NOTIFY jobs, 'rolled back'; ROLLBACK").unwrap();
    sender.batch_execute("BEGIN; NOTIFY jobs, 'four'; NOTIFY jobs, 'four'; NOTIFY jobs; COMMIT").unwrap();
    let want = |p: &str| (sender_pid, "jobs".to_string(), p.to_string());
    assert_eq!(
        received(&mut listener, Duration::from_secs(2)),
        vec![want("one"), want("two"), want("four"), want("")]
    );

    // A listener inside a block receives when the block ends.
    listener.batch_execute("BEGIN").unwrap();
    sender.batch_execute("NOTIFY jobs, 'five'").unwrap();
    assert_eq!(received(&mut listener, Duration::from_millis(300)), vec![]);
    listener.batch_execute("COMMIT").unwrap();
    assert_eq!(received(&mut listener, Duration::from_secs(2)), vec![want("five")]);

    // A session hears its own notifications; UNLISTEN * stops them all.
    listener.batch_execute("NOTIFY jobs, 'self'").unwrap();
    assert_eq!(
        received(&mut listener, Duration::from_secs(2)),
        vec![(listener_pid, "jobs".into(), "self".into())]
    );
    listener.batch_execute("UNLISTEN *").unwrap();
    sender.batch_execute("NOTIFY jobs, 'six'").unwrap();
    assert_eq!(received(&mut listener, Duration::from_millis(300)), vec![]);

    // LISTEN in a block that rolls back listens to nothing.
    listener.batch_execute("BEGIN; LISTEN jobs; ROLLBACK").unwrap();
    sender.batch_execute("NOTIFY jobs, 'seven'").unwrap();
    assert_eq!(received(&mut listener, Duration::from_millis(300)), vec![]);

    // DISCARD ALL stops listening too, and frees advisory locks.
    listener.batch_execute("LISTEN jobs; SELECT pg_advisory_lock(3)").unwrap();
    listener.batch_execute("DISCARD ALL").unwrap();
    sender.batch_execute("NOTIFY jobs, 'eight'").unwrap();
    assert_eq!(received(&mut listener, Duration::from_millis(300)), vec![]);
    assert!(sender.query_one("SELECT pg_try_advisory_lock(3)", &[]).unwrap().get::<_, bool>(0));

    let e = sender.batch_execute(&format!("NOTIFY jobs, '{}'", "x".repeat(8000))).unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("22023"), "{e}");
    let e = sender.query_one("SELECT pg_notify('', 'x')", &[]).unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("22023"), "{e}");
}
