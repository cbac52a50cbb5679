"""A small lending-library app on the SQLAlchemy 2 ORM.

Run by crates/server/tests/drivers.rs as

    python3 sqlalchemy_app.py psycopg|asyncpg URL

against Centum and against PostgreSQL (each on a fresh database); the two
transcripts this prints on stdout must be equal. `psycopg` runs the app on
the sync `postgresql+psycopg` dialect (libpq, text parameters), `asyncpg`
on the `postgresql+asyncpg` dialect with an AsyncSession (asyncpg's own
protocol code: named prepared statements, binary parameters and results,
its type introspection queries).

The app: declarative models with foreign keys (one ON DELETE CASCADE),
single- and multi-column indexes, unique and check constraints, an
identity column, serial keys, json and array columns, relationships
(one-to-many, many-to-one, many-to-many through an association table);
create_all, inserts through the session (SQLAlchemy's batched INSERT ..
RETURNING), joins, eager loading (joinedload, selectinload), aggregates,
updates and deletes (ORM and bulk), savepoints (session.begin_nested():
one released, one rolled back, three failing on a unique, a check and a
foreign key violation), a full rollback; then what inspect() finds of the
schema (columns, keys, indexes, constraints), and drop_all.

One scenario serves both dialects: it is written against AsyncSession's
interface, and the sync run drives a plain Session through an adapter
with that interface. Setting CENTUM_SQL_ECHO=1 logs every statement to
stderr.
"""

import asyncio
import datetime
import enum
import logging
import os
import sys
from decimal import Decimal

from sqlalchemy import (
    CheckConstraint,
    Column,
    Date,
    DateTime,
    Enum,
    ForeignKey,
    Identity,
    Index,
    Integer,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    case,
    create_engine,
    delete,
    event,
    exists,
    func,
    inspect,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    aliased,
    joinedload,
    mapped_column,
    relationship,
    selectinload,
)


class Base(DeclarativeBase):
    pass


class Genre(enum.Enum):
    novel = "novel"
    poetry = "poetry"
    history = "history"


book_tags = Table(
    "book_tags",
    Base.metadata,
    Column("book_id", ForeignKey("books.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id"), primary_key=True),
)


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    born: Mapped[datetime.date | None] = mapped_column(Date)
    books: Mapped[list["Book"]] = relationship(
        back_populates="author", cascade="all, delete-orphan", order_by="Book.id"
    )


class Book(Base):
    __tablename__ = "books"
    __table_args__ = (
        UniqueConstraint("author_id", "title", name="uq_books_author_title"),
        CheckConstraint("price >= 0", name="ck_books_price"),
        Index("ix_books_genre_price", "genre", "price"),
    )
    id: Mapped[int] = mapped_column(Identity(start=100), primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id", ondelete="CASCADE"), index=True)
    title: Mapped[str] = mapped_column(String(200))
    genre: Mapped[Genre] = mapped_column(Enum(Genre, native_enum=False, create_constraint=True, length=10))
    price: Mapped[Decimal] = mapped_column(Numeric(8, 2))
    published: Mapped[datetime.date | None]
    meta: Mapped[dict | None] = mapped_column(JSONB)
    keywords: Mapped[list[str] | None] = mapped_column(ARRAY(Text))
    author: Mapped[Author] = relationship(back_populates="books")
    tags: Mapped[list["Tag"]] = relationship(secondary=book_tags, order_by="Tag.label")
    loans: Mapped[list["Loan"]] = relationship(
        back_populates="book", order_by="Loan.id", passive_deletes=True
    )


class Tag(Base):
    __tablename__ = "tags"
    id: Mapped[int] = mapped_column(primary_key=True)
    label: Mapped[str] = mapped_column(String(30), unique=True)


class Member(Base):
    __tablename__ = "members"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(120), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    active: Mapped[bool] = mapped_column(server_default="true")
    joined: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    loans: Mapped[list["Loan"]] = relationship(back_populates="member", order_by="Loan.id")


class Loan(Base):
    __tablename__ = "loans"
    __table_args__ = (Index("ix_loans_member_returned", "member_id", "returned_on"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id"))
    loaned_on: Mapped[datetime.date]
    returned_on: Mapped[datetime.date | None]
    book: Mapped[Book] = relationship(back_populates="loans")
    member: Mapped[Member] = relationship(back_populates="loans")


def out(*parts):
    print(*parts, flush=True)


def rows(result):
    return [tuple(r) for r in result]


def violation(e):
    """A constraint violation's SQLSTATE, table and constraint, as the
    driver reports them (apps map errors to fields by them)."""
    orig = e.orig
    if hasattr(orig, "diag"):  # psycopg
        return orig.sqlstate, orig.diag.table_name, orig.diag.constraint_name
    cause = orig.__cause__  # asyncpg's own exception, behind SQLAlchemy's adapter
    return cause.sqlstate, cause.table_name, cause.constraint_name


def d(text):
    return datetime.date.fromisoformat(text)


# --- the two ways to a session ---------------------------------------------


class SyncNested:
    """A savepoint of a sync Session with AsyncSessionTransaction's interface."""

    def __init__(self, tx):
        self.tx = tx

    def __await__(self):
        async def started():
            return self

        return started().__await__()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return self.tx.__exit__(*exc)

    async def commit(self):
        self.tx.commit()

    async def rollback(self):
        self.tx.rollback()


class SyncDb:
    """A sync engine and Session behind the interface of AsyncDb."""

    def __init__(self, url):
        self.engine = create_engine(url)
        self.session = Session(self.engine, expire_on_commit=False)

    async def on_connection(self, fn):
        with self.engine.begin() as conn:
            return fn(conn)

    def add(self, obj):
        self.session.add(obj)

    def add_all(self, objs):
        self.session.add_all(objs)

    def begin_nested(self):
        return SyncNested(self.session.begin_nested())

    def __getattr__(self, name):
        # execute, scalars, scalar, get, flush, commit, rollback, delete,
        # refresh: awaitable here as in AsyncSession.
        method = getattr(self.session, name)

        async def call(*args, **kwargs):
            return method(*args, **kwargs)

        return call

    async def close(self):
        self.session.close()
        self.engine.dispose()


class AsyncDb:
    """An async engine and AsyncSession."""

    def __init__(self, url):
        from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

        # A statement that gets no answer fails after a while rather than
        # hanging the test.
        self.engine = create_async_engine(url, connect_args={"command_timeout": 30})
        self.session = AsyncSession(self.engine, expire_on_commit=False)

    async def on_connection(self, fn):
        async with self.engine.begin() as conn:
            return await conn.run_sync(fn)

    def __getattr__(self, name):
        return getattr(self.session, name)

    async def close(self):
        await self.session.close()
        await self.engine.dispose()


# --- the scenario ------------------------------------------------------------


def describe_schema(conn):
    """What inspect() finds, table by table, in a stable order."""
    insp = inspect(conn)
    lines = [f"tables {sorted(insp.get_table_names())}"]
    for table in sorted(insp.get_table_names()):
        lines.append(f"table {table}")
        for c in insp.get_columns(table):
            c = dict(c, type=repr(c["type"]))
            lines.append(f"  column {sorted(c.items())}")
        lines.append(f"  pk {sorted(insp.get_pk_constraint(table).items())}")
        for fk in sorted(insp.get_foreign_keys(table), key=lambda f: f["name"]):
            lines.append(f"  fk {sorted(fk.items())}")
        for ix in sorted(insp.get_indexes(table), key=lambda i: i["name"]):
            lines.append(f"  index {sorted(ix.items())}")
        for uq in sorted(insp.get_unique_constraints(table), key=lambda u: u["name"]):
            lines.append(f"  unique {sorted(uq.items())}")
        for ck in sorted(insp.get_check_constraints(table), key=lambda k: k["name"]):
            lines.append(f"  check {sorted(ck.items())}")
    return lines


async def count(db, model):
    return await db.scalar(select(func.count()).select_from(model))


async def scenario(db):
    await db.on_connection(Base.metadata.create_all)
    out("create_all: done")

    # Inserts through the session: relationships fill in the keys.
    novel, poetry, history = Genre.novel, Genre.poetry, Genre.history
    classic, verse, old = Tag(label="classic"), Tag(label="verse"), Tag(label="old")
    austen = Author(name="Jane Austen", born=d("1775-12-16"))
    austen.books = [
        Book(title="Emma", genre=novel, price=Decimal("12.50"), published=d("1815-12-23"),
             meta={"lang": "en", "pages": 474}, keywords=["marriage", "comedy"], tags=[classic]),
        Book(title="Persuasion", genre=novel, price=Decimal("9.99"), published=d("1817-12-20"),
             meta={"lang": "en", "pages": 249}, keywords=["navy"], tags=[classic, old]),
    ]
    dickinson = Author(name="Emily Dickinson", born=d("1830-12-10"))
    dickinson.books = [
        Book(title="Poems", genre=poetry, price=Decimal("7.00"), published=d("1890-11-12"),
             meta={"lang": "en"}, keywords=[], tags=[verse, classic, old]),
    ]
    gibbon = Author(name="Edward Gibbon", born=None)
    gibbon.books = [
        Book(title="Decline and Fall", genre=history, price=Decimal("30.00"), published=None,
             meta=None, keywords=None),
        Book(title="Memoirs", genre=history, price=Decimal("0.00"), published=d("1796-01-01")),
    ]
    nobody = Author(name="Anonymous")
    db.add_all([austen, dickinson, gibbon, nobody])
    members = [Member(email=f"{n.lower()}@example.com", name=n) for n in ("Ann", "Bob", "Cy")]
    db.add_all(members)
    await db.flush()
    out("authors", [(a.id, a.name) for a in (austen, dickinson, gibbon, nobody)])
    out("books", [(b.id, b.author_id, b.title) for a in (austen, dickinson, gibbon) for b in a.books])
    out("members", [(m.id, m.email) for m in members])
    ann, bob, cy = members
    db.add_all([
        Loan(book=austen.books[0], member=ann, loaned_on=d("2024-01-05"), returned_on=d("2024-01-20")),
        Loan(book=austen.books[0], member=bob, loaned_on=d("2024-02-01")),
        Loan(book=dickinson.books[0], member=ann, loaned_on=d("2024-02-03")),
        Loan(book=gibbon.books[0], member=cy, loaned_on=d("2024-02-10"), returned_on=d("2024-03-01")),
    ])
    await db.commit()
    out("committed: authors", await count(db, Author), "books", await count(db, Book),
        "loans", await count(db, Loan), "book_tags", await count(db, book_tags))
    # The server filled in the defaults.
    active_members = await db.execute(
        select(Member.name, Member.active, Member.joined <= func.now(), Member.joined > func.now() - datetime.timedelta(minutes=10))
        .order_by(Member.id)
    )
    out("member defaults", rows(active_members))

    # Joins.
    q = (
        select(Author.name, Book.title, Book.price)
        .join(Book.author)
        .where(Book.price > Decimal("5"))
        .order_by(Author.name, Book.title)
    )
    out("join", rows(await db.execute(q)))
    q = (
        select(Author.name, func.count(Book.id), func.coalesce(func.sum(Book.price), 0))
        .outerjoin(Author.books)
        .group_by(Author.name)
        .order_by(func.count(Book.id).desc(), Author.name)
    )
    out("outer join, group by", rows(await db.execute(q)))
    q = (
        select(Member.name, Book.title, Loan.loaned_on)
        .join(Loan.member)
        .join(Loan.book)
        .where(Loan.returned_on.is_(None))
        .order_by(Loan.loaned_on)
    )
    out("open loans", rows(await db.execute(q)))
    q = (
        select(Tag.label, func.count(book_tags.c.book_id))
        .join(book_tags, book_tags.c.tag_id == Tag.id)
        .group_by(Tag.label)
        .having(func.count(book_tags.c.book_id) > 1)
        .order_by(Tag.label)
    )
    out("tags used twice", rows(await db.execute(q)))
    cheaper = select(func.avg(Book.price)).scalar_subquery()
    q = select(Book.title).where(Book.price < cheaper).order_by(Book.title)
    out("below average price", (await db.scalars(q)).all())
    q = select(Author.name).where(~exists().where(Book.author_id == Author.id)).order_by(Author.name)
    out("authors without books", (await db.scalars(q)).all())
    q = select(Book.title).where(Book.title.ilike("%e%"), Book.genre.in_([novel, history])).order_by(Book.id)
    out("ilike, in", (await db.scalars(q)).all())
    q = select(Book.title, Book.meta["lang"].astext, Book.meta["pages"].as_integer()).where(
        Book.meta.has_key("pages")).order_by(Book.id)
    out("json", rows(await db.execute(q)))
    q = select(Book.title, Book.keywords).where(Book.keywords.contains(["navy"])).order_by(Book.id)
    out("array contains", rows(await db.execute(q)))
    rank = func.row_number().over(partition_by=Book.author_id, order_by=Book.price.desc()).label("rank")
    q = select(Book.title, rank, case((Book.price >= 10, "dear"), else_="cheap")).order_by(Book.id)
    out("window, case", rows(await db.execute(q)))
    q = select(Book.title).order_by(Book.price.desc(), Book.id).limit(2).offset(1)
    out("limit, offset", (await db.scalars(q)).all())
    other = aliased(Book)
    q = (
        select(Book.title, other.title)
        .join(other, (other.author_id == Book.author_id) & (other.id > Book.id))
        .order_by(Book.id, other.id)
    )
    out("self join", rows(await db.execute(q)))

    # Eager loading: one query with joins, and a query per relationship.
    # (populate_existing: the session's objects are loaded again, from the
    # rows, not kept as they were added.)
    q = (
        select(Book)
        .options(joinedload(Book.author), joinedload(Book.tags))
        .order_by(Book.id)
        .execution_options(populate_existing=True)
    )
    books = (await db.scalars(q)).unique().all()
    out("joinedload", [(b.title, b.author.name, [t.label for t in b.tags]) for b in books])
    q = (
        select(Author)
        .options(selectinload(Author.books).selectinload(Book.loans).joinedload(Loan.member))
        .order_by(Author.id)
        .execution_options(populate_existing=True)
    )
    authors = (await db.scalars(q)).all()
    out("selectinload", [
        (a.name, [(b.title, [(ln.member.name, ln.loaned_on) for ln in b.loans]) for b in a.books])
        for a in authors
    ])
    got = await db.get(Member, ann.id, options=[selectinload(Member.loans)], populate_existing=True)
    out("get", got.name, [ln.book_id for ln in got.loans])

    # Updates: a changed attribute, then bulk updates.
    emma = austen.books[0]
    emma.price = Decimal("13.75")
    emma.meta = dict(emma.meta, pages=480)
    await db.flush()
    await db.refresh(emma)
    out("updated", emma.title, emma.price, emma.meta)
    result = await db.execute(
        update(Book).where(Book.genre == history).values(price=Book.price + Decimal("1.10"))
    )
    out("bulk update rowcount", result.rowcount)
    result = await db.execute(
        update(Member).where(Member.name.in_(["Bob", "Cy"])).values(active=False).returning(Member.email)
    )
    out("update returning", sorted(result.scalars().all()))
    q = select(Book.title, Book.price).where(Book.genre == history).order_by(Book.id)
    out("after bulk update", rows(await db.execute(q)))
    await db.commit()

    # Savepoints: one released, one rolled back, one failing.
    async with db.begin_nested():
        db.add(Tag(label="saved"))
    nested = await db.begin_nested()
    db.add(Tag(label="dropped"))
    await db.flush()
    out("inside savepoint", (await db.scalars(select(Tag.label).order_by(Tag.id))).all())
    await nested.rollback()
    try:
        async with db.begin_nested():
            db.add(Member(email="ann@example.com", name="Ann again"))
            await db.flush()
        out("duplicate email accepted")
    except IntegrityError as e:
        out("duplicate email", type(e).__name__, violation(e))
    try:
        async with db.begin_nested():
            await db.execute(update(Book).where(Book.title == "Memoirs").values(price=Decimal("-1")))
        out("negative price accepted")
    except IntegrityError as e:
        out("negative price", type(e).__name__, violation(e))
    try:
        async with db.begin_nested():
            db.add(Loan(book_id=999, member_id=ann.id, loaned_on=d("2024-04-01")))
            await db.flush()
        out("loan of no book accepted")
    except IntegrityError as e:
        out("loan of no book", type(e).__name__, violation(e))
    db.add(Tag(label="after"))
    await db.commit()
    out("tags after savepoints", (await db.scalars(select(Tag.label).order_by(Tag.id))).all())

    # A full rollback undoes everything since the commit; the sequences
    # keep what they handed out.
    db.add(Author(name="Rolled Back", books=[
        Book(title="Never", genre=novel, price=Decimal("1.00"))]))
    await db.execute(delete(Loan))
    await db.flush()
    out("before rollback: authors", await count(db, Author), "loans", await count(db, Loan))
    await db.rollback()
    out("after rollback: authors", await count(db, Author), "loans", await count(db, Loan))
    later = Author(name="Later")
    later.books = [Book(title="Afterwards", genre=novel, price=Decimal("2.00"))]
    db.add(later)
    await db.commit()
    out("ids after a rollback", later.id, later.books[0].id)

    # Deletes: the ORM's cascade, the database's ON DELETE CASCADE, bulk.
    gibbon = (await db.scalars(
        select(Author).where(Author.name == "Edward Gibbon").options(selectinload(Author.books)))).one()
    await db.delete(gibbon)
    await db.flush()
    out("after deleting an author: books", await count(db, Book), "loans", await count(db, Loan))
    result = await db.execute(delete(Book).where(Book.title == "Poems"))
    out("bulk delete rowcount", result.rowcount)
    out("book_tags left", rows(await db.execute(
        select(book_tags.c.book_id, book_tags.c.tag_id).order_by(book_tags.c.book_id, book_tags.c.tag_id))))
    result = await db.execute(delete(Loan).where(Loan.returned_on.is_not(None)).returning(Loan.id))
    out("delete returning", sorted(result.scalars().all()))
    await db.commit()
    final = (
        select(Author.name, Book.title, Book.price, Book.keywords)
        .join(Book.author)
        .order_by(Book.id)
    )
    out("final books", rows(await db.execute(final)))
    out("final loans", rows(await db.execute(select(Loan.id, Loan.book_id, Loan.member_id).order_by(Loan.id))))

    # The session's transaction ends before another connection drops the
    # tables it read (PostgreSQL's DROP would wait for its locks).
    await db.commit()
    for line in await db.on_connection(describe_schema):
        out(line)
    await db.on_connection(Base.metadata.drop_all)
    out("drop_all: tables left", await db.on_connection(lambda c: inspect(c).get_table_names()))


async def main(dialect, url):
    if os.environ.get("CENTUM_SQL_ECHO"):
        logging.basicConfig(stream=sys.stderr, format="%(message)s")
        logging.getLogger("sqlalchemy.engine").setLevel(logging.INFO)
    url = url.replace("postgresql://", f"postgresql+{dialect}://", 1)
    db = SyncDb(url) if dialect == "psycopg" else AsyncDb(url)
    last = []

    @event.listens_for(getattr(db.engine, "sync_engine", db.engine), "before_cursor_execute")
    def remember(conn, cursor, statement, parameters, context, executemany):
        last[:] = [statement, parameters]

    try:
        await scenario(db)
    except BaseException:
        if last:
            print(f"the last statement sent: {last[0]}\nits parameters: {last[1]!r}", file=sys.stderr)
        raise
    finally:
        await db.close()
    out(f"sqlalchemy {dialect} scenario: ok")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("psycopg", "asyncpg"):
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
