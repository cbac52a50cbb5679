"""LISTEN/NOTIFY through psycopg 3, as a job-queue worker uses them.

Run by crates/server/tests/drivers.rs as `python3 psycopg_notify.py URL`,
once against Centum and once against PostgreSQL; the two transcripts on
stdout must be equal. psycopg reads NotificationResponse messages off the
socket while it waits in `Connection.notifies()` (libpq's PQnotifies
underneath), and delivers those that arrived during a query when the
query returns.
"""

import sys

import psycopg


def drain(conn, sender_pids, expect):
    """Prints the next `expect` notifications `conn` receives, waiting at
    most a few seconds, then checks that no more arrive soon after."""
    got = []
    if expect:
        for n in conn.notifies(timeout=10, stop_after=expect):
            got.append(n)
    for n in conn.notifies(timeout=0.3):
        got.append(n)
    for n in got:
        who = sender_pids.get(n.pid, "unknown session")
        print(f"  {n.channel!r} {n.payload!r} from {who}")
    if len(got) != expect:
        print(f"  expected {expect} notifications, got {len(got)}")


def main(url):
    listener = psycopg.connect(url, autocommit=True, connect_timeout=10)
    sender = psycopg.connect(url, autocommit=True, connect_timeout=10)
    pids = {
        listener.execute("SELECT pg_backend_pid()").fetchone()[0]: "the listener",
        sender.execute("SELECT pg_backend_pid()").fetchone()[0]: "the sender",
    }

    print("listen, then notify in autocommit")
    listener.execute("LISTEN jobs")
    listener.execute('LISTEN "Mixed Case"')
    sender.execute("NOTIFY jobs, 'first'")
    sender.execute("SELECT pg_notify(%s, %s)", ("jobs", "second"))
    sender.execute("SELECT pg_notify('Mixed Case', 'quoted channel')")
    sender.execute("NOTIFY unheard, 'nobody listens'")
    sender.execute("NOTIFY jobs")
    drain(listener, pids, 4)

    print("a transaction sends at commit, in order, duplicates once")
    with sender.transaction():
        sender.execute("NOTIFY jobs, 'a'")
        sender.execute("NOTIFY jobs, 'b'")
        sender.execute("NOTIFY jobs, 'a'")
        drain(listener, pids, 0)
    drain(listener, pids, 2)

    print("a rolled-back transaction sends nothing")
    try:
        with sender.transaction():
            sender.execute("NOTIFY jobs, 'never'")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    drain(listener, pids, 0)

    print("a failed transaction sends nothing")
    try:
        with sender.transaction():
            sender.execute("NOTIFY jobs, 'never either'")
            sender.execute("SELECT 1 / 0")
    except psycopg.errors.DivisionByZero as e:
        print(f"  {e.sqlstate}")
    drain(listener, pids, 0)

    print("a session hears its own notifications")
    listener.execute("NOTIFY jobs, 'to myself'")
    drain(listener, pids, 1)

    print("a listener inside a transaction hears them when it ends")
    listener.autocommit = False
    listener.execute("SELECT 1")
    sender.execute("NOTIFY jobs, 'while busy'")
    listener.commit()
    listener.autocommit = True
    drain(listener, pids, 1)

    print("a payload of any text")
    payload = "naïve 'quoted' \\ backslash, 8000 bytes: " + "x" * 7950
    sender.execute("SELECT pg_notify('jobs', %s)", (payload,))
    got = list(listener.notifies(timeout=10, stop_after=1))
    print(f"  {len(got)} notification, payload equal: {got[0].payload == payload if got else None}")

    print("errors")
    for sql in ("SELECT pg_notify('jobs', repeat('x', 8000))", "SELECT pg_notify('', 'no channel')"):
        try:
            sender.execute(sql)
            print("  no error")
        except psycopg.Error as e:
            print(f"  {e.sqlstate}")

    print("unlisten")
    listener.execute("UNLISTEN jobs")
    sender.execute("NOTIFY jobs, 'after unlisten'")
    sender.execute("NOTIFY \"Mixed Case\", 'still listened to'")
    drain(listener, pids, 1)
    listener.execute("UNLISTEN *")
    sender.execute("NOTIFY \"Mixed Case\", 'after unlisten all'")
    drain(listener, pids, 0)

    print("many notifications in one transaction, all delivered in order")
    listener.execute("LISTEN bulk")
    with sender.transaction():
        for i in range(500):
            sender.execute("SELECT pg_notify('bulk', %s)", (str(i),))
    got = [n.payload for n in listener.notifies(timeout=10, stop_after=500)]
    print(f"  {len(got)} received, in order: {got == [str(i) for i in range(500)]}")

    listener.close()
    sender.close()
    print("psycopg notify: ok")


if __name__ == "__main__":
    main(sys.argv[1])
