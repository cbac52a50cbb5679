"""psycopg 3 against a running `centum serve`: CRUD, transactions, errors, COPY.

Run by crates/server/tests/drivers.rs as `python3 psycopg_crud.py URL`.
psycopg goes through libpq: parameters travel as text over the extended
protocol (Parse/Bind/Execute), results as text. Exits non-zero, with the
failing check, on any mismatch.
"""

import datetime
import decimal
import sys
import uuid

import psycopg
from psycopg import errors


def check(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def expect_error(sqlstate, what, fn):
    try:
        fn()
    except psycopg.Error as e:
        check(e.sqlstate, sqlstate, what)
        return e
    raise AssertionError(f"{what}: no error, expected SQLSTATE {sqlstate}")


def main(url):
    conn = psycopg.connect(url, connect_timeout=10)
    other = psycopg.connect(url, connect_timeout=10, autocommit=True)
    conn.execute(
        "CREATE TABLE accounts (id int4 PRIMARY KEY, owner text NOT NULL, balance numeric(12,2), "
        "opened timestamptz, active bool, tag uuid, note bytea)"
    )
    conn.commit()

    moment = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)
    tag = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    with conn.cursor() as cur:
        cur.execute(
            "INSERT INTO accounts (id, owner, balance, opened, active, tag, note) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (1, "alice ✓", decimal.Decimal("100.50"), moment, True, tag, b"\x00\xff"),
        )
        check(cur.rowcount, 1, "insert rowcount")
        cur.executemany(
            "INSERT INTO accounts (id, owner, balance) VALUES (%s, %s, %s)",
            [(2, "bob", decimal.Decimal("7")), (3, "carol", None)],
        )
        conn.commit()

        cur.execute("SELECT id, owner, balance, opened, active, tag, note FROM accounts WHERE id = %s", (1,))
        check(
            cur.fetchone(),
            (1, "alice ✓", decimal.Decimal("100.50"), moment, True, tag, b"\x00\xff"),
            "row 1",
        )
        cur.execute("SELECT id, owner, balance, opened, active, tag, note FROM accounts ORDER BY id")
        rows = cur.fetchall()
        check([r[0] for r in rows], [1, 2, 3], "ids")
        check(rows[2], (3, "carol", None, None, None, None, None), "NULLs")
        check([d.name for d in cur.description], ["id", "owner", "balance", "opened", "active", "tag", "note"], "columns")

        cur.execute("UPDATE accounts SET balance = balance + %s WHERE owner = %s", (decimal.Decimal("0.25"), "bob"))
        check(cur.rowcount, 1, "update rowcount")
        cur.execute("DELETE FROM accounts WHERE id = %s", (3,))
        check(cur.rowcount, 1, "delete rowcount")
        conn.commit()
        cur.execute("SELECT balance FROM accounts WHERE id = 2")
        check(cur.fetchone()[0], decimal.Decimal("7.25"), "updated balance")
        conn.commit()

    count = "SELECT count(*) FROM accounts"
    # A rolled-back transaction leaves nothing behind.
    conn.execute("INSERT INTO accounts (id, owner) VALUES (%s, %s)", (10, "ghost"))
    check(other.execute(count).fetchone()[0], 2, "uncommitted insert invisible")
    conn.rollback()
    check(conn.execute(count).fetchone()[0], 2, "after rollback")
    conn.commit()

    # A unique violation is 23505; the transaction is then aborted (25P02)
    # until rolled back, and the connection goes on.
    expect_error("23505", "duplicate key", lambda: conn.execute("INSERT INTO accounts (id, owner) VALUES (1, 'dup')"))
    expect_error("25P02", "failed block", lambda: conn.execute(count))
    conn.rollback()
    e = expect_error("42P01", "missing table", lambda: conn.execute("SELECT * FROM nope"))
    if not isinstance(e, errors.UndefinedTable):
        raise AssertionError(f"42P01 maps to {type(e).__name__}")
    conn.rollback()

    # conn.transaction(): commits on success, rolls back on an exception.
    conn.autocommit = True
    with conn.transaction():
        conn.execute("INSERT INTO accounts (id, owner) VALUES (%s, %s)", (20, "dave"))
    check(other.execute("SELECT owner FROM accounts WHERE id = 20").fetchone(), ("dave",), "committed block")
    try:
        with conn.transaction():
            conn.execute("INSERT INTO accounts (id, owner) VALUES (%s, %s)", (21, "eve"))
            conn.execute("INSERT INTO accounts (id, owner) VALUES (%s, %s)", (20, "dup"))
    except errors.UniqueViolation:
        pass
    else:
        raise AssertionError("duplicate in a transaction block did not fail")
    check(other.execute("SELECT count(*) FROM accounts WHERE id = 21").fetchone()[0], 0, "rolled-back block")
    check(conn.execute(count).fetchone()[0], 3, "count after blocks")

    # COPY in and out (psycopg sends COPY as a simple Query).
    with conn.cursor() as cur:
        with cur.copy("COPY accounts (id, owner, balance) FROM STDIN") as copy:
            copy.write_row((30, "frank", decimal.Decimal("1.5")))
            copy.write_row((31, "grace", None))
        check(cur.rowcount, 2, "copy in rowcount")
        out = []
        with cur.copy("COPY accounts (id, owner) TO STDOUT") as copy:
            for row in copy.rows():
                out.append(row)
        check(sorted(int(r[0]) for r in out), [1, 2, 20, 30, 31], "copy out ids")
    check(other.execute("SELECT balance FROM accounts WHERE id = 31").fetchone(), (None,), "copied NULL")

    # Server-side prepared statements (prepare=True forces Parse once).
    with conn.cursor() as cur:
        for i in range(5):
            cur.execute("SELECT %s::int8 * 2", (i,), prepare=True)
            check(cur.fetchone()[0], 2 * i, "prepared")

    conn.close()
    other.close()
    print("psycopg scenario: ok")


if __name__ == "__main__":
    main(sys.argv[1])
