"""Alembic migrations of a small library schema, up and down.

Run by crates/server/tests/drivers.rs as `python3 run.py URL` against
Centum and against PostgreSQL (each on a fresh database); the two
transcripts this prints on stdout must be equal.

The migrations (versions/) create tables with foreign keys, unique and
check constraints, single- and multi-column indexes, seed rows
(bulk_insert, INSERT .. SELECT), add a column and fill it before making it
NOT NULL, widen a column's type, and drop all of it again on the way
down. Alembic runs each command in one transaction on the postgresql+
psycopg dialect; revision 0003 fails on a unique violation while two
members share an email, and everything it did, its new table included,
rolls back.

After each step the transcript shows the revision, what inspect() finds,
and the rows; at head, Alembic's autogenerate compares the database with
the models the migrations should have produced, and must find nothing to
do. Setting CENTUM_SQL_ECHO=1 logs every statement to stderr.
"""

import logging
import os
import sys

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy.exc import IntegrityError

HERE = os.path.dirname(os.path.abspath(__file__))

# The schema at head, as models: autogenerate compares the database with it.
target = sa.MetaData()
authors = sa.Table(
    "authors",
    target,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("country", sa.String(2)),
    sa.UniqueConstraint("name", name="uq_authors_name"),
)
books = sa.Table(
    "books",
    target,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", ondelete="CASCADE"), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("price", sa.Numeric(8, 2), nullable=False, server_default="0"),
    sa.Column("added", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("isbn", sa.String(13), nullable=False),
    sa.UniqueConstraint("isbn", name="uq_books_isbn"),
    sa.CheckConstraint("price >= 0", name="ck_books_price"),
    sa.Index("ix_books_author_id", "author_id"),
)
members = sa.Table(
    "members",
    target,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("email", sa.String(120), nullable=False),
    sa.Column("active", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Index("ix_members_email", "email", unique=True),
)
sa.Table(
    "loans",
    target,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("book_id", sa.Integer, nullable=False),
    sa.Column("member_id", sa.Integer, nullable=False),
    sa.Column("due", sa.Date, nullable=False),
    sa.ForeignKeyConstraint(["book_id"], ["books.id"], name="fk_loans_book", ondelete="CASCADE"),
    sa.ForeignKeyConstraint(["member_id"], ["members.id"], name="fk_loans_member"),
    sa.Index("ix_loans_member_due", "member_id", "due"),
)
sa.Table(
    "book_tags",
    target,
    sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("tag", sa.String(30), primary_key=True),
)


def out(*parts):
    print(*parts, flush=True)


def describe(conn):
    """The revision, then what inspect() finds, table by table."""
    out("  revision", MigrationContext.configure(conn).get_current_revision())
    insp = sa.inspect(conn)
    out("  tables", sorted(insp.get_table_names()))
    for table in sorted(insp.get_table_names()):
        if table == "alembic_version":
            continue
        cols = [
            (c["name"], repr(c["type"]), c["nullable"], c["default"], bool(c.get("identity")))
            for c in insp.get_columns(table)
        ]
        out(f"  {table} columns", cols)
        out(f"  {table} pk", insp.get_pk_constraint(table)["constrained_columns"])
        fks = [
            (f["name"], f["constrained_columns"], f["referred_table"], f["referred_columns"], f["options"])
            for f in insp.get_foreign_keys(table)
        ]
        out(f"  {table} fks", sorted(fks))
        ixs = [
            (i["name"], i["column_names"], i.get("expressions"), i["unique"])
            for i in insp.get_indexes(table)
        ]
        out(f"  {table} indexes", sorted(ixs))
        uqs = [(u["name"], u["column_names"]) for u in insp.get_unique_constraints(table)]
        out(f"  {table} uniques", sorted(uqs))
        cks = [(c["name"], c["sqltext"]) for c in insp.get_check_constraints(table)]
        out(f"  {table} checks", sorted(cks))


def rows(conn, sql):
    return [tuple(r) for r in conn.execute(sa.text(sql))]


def main(url):
    if os.environ.get("CENTUM_SQL_ECHO"):
        logging.basicConfig(stream=sys.stderr, format="%(message)s")
        logging.getLogger("sqlalchemy.engine").setLevel(logging.INFO)
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    last = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def remember(conn, cursor, statement, parameters, context, executemany):
        last[:] = [statement, parameters]

    try:
        migrate(engine)
    except BaseException:
        if last:
            print(f"the last statement sent: {last[0]}\nits parameters: {last[1]!r}", file=sys.stderr)
        raise


def migrate(engine):
    cfg = Config()
    cfg.set_main_option("script_location", HERE)

    def alembic(what, *args):
        """An Alembic command in one transaction of its own; its revision
        and schema after it (or its error, and the schema left)."""
        out(what, *args)
        try:
            with engine.begin() as conn:
                cfg.attributes["connection"] = conn
                getattr(command, what)(cfg, *args)
        except IntegrityError as e:
            out("  failed:", type(e).__name__, e.orig.sqlstate)
        with engine.connect() as conn:
            describe(conn)

    alembic("upgrade", "0002")
    with engine.begin() as conn:
        out("seeded", rows(conn, "SELECT a.name, b.title, b.price, b.isbn FROM authors a "
                                 "JOIN books b ON b.author_id = a.id ORDER BY b.id"))
        out("members", rows(conn, "INSERT INTO members (email) VALUES ('ann@example.com'), "
                                  "('bob@example.com'), ('ann@example.com') RETURNING id, email, active"))
        out("loans", rows(conn, "INSERT INTO loans (id, book_id, member_id, due) "
                                "SELECT b.id * 10 + m.id, b.id, m.id, DATE '2024-03-01' + m.id "
                                "FROM books b, members m ORDER BY 1 RETURNING id, due"))

    # Two members share an email: the unique index fails, and revision
    # 0003 rolls back whole.
    alembic("upgrade", "head")
    try:
        with engine.begin() as conn:
            rows(conn, "DELETE FROM members WHERE id = 3 RETURNING email")
        out("deleted a member with loans")
    except IntegrityError as e:
        out("a member with loans stays:", type(e).__name__, e.orig.sqlstate)
    with engine.begin() as conn:
        out("deleted", sorted(rows(conn, "DELETE FROM loans WHERE member_id = 3 RETURNING id")),
            rows(conn, "DELETE FROM members WHERE id = 3 RETURNING email"))
    alembic("upgrade", "head")
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), target)
        out("autogenerate at head:", diff)

    with engine.begin() as conn:
        out("tags", rows(conn, "INSERT INTO book_tags VALUES (1, 'classic'), (2, 'classic'), (2, 'humour') "
                               "RETURNING book_id, tag"))
        out("cascade", rows(conn, "DELETE FROM authors WHERE name = 'Mark Twain' RETURNING id"))
        out("left", rows(conn, "SELECT (SELECT count(*) FROM books), (SELECT count(*) FROM loans), "
                               "(SELECT count(*) FROM book_tags)"))

    alembic("downgrade", "-1")
    alembic("downgrade", "-1")
    with engine.begin() as conn:
        out("books at 0001", rows(conn, "SELECT id, title, price FROM books ORDER BY id"))
    alembic("upgrade", "head")
    with engine.begin() as conn:
        out("books at head", rows(conn, "SELECT id, title, isbn FROM books ORDER BY id"))
        diff = compare_metadata(MigrationContext.configure(conn), target)
        out("autogenerate at head again:", diff)
    alembic("downgrade", "base")
    engine.dispose()
    out("alembic scenario: ok")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
