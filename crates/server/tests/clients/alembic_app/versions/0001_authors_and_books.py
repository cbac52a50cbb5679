"""Authors and their books, with a few authors to start with.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    authors = op.create_table(
        "authors",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("country", sa.String(2)),
        sa.UniqueConstraint("name", name="uq_authors_name"),
    )
    op.create_table(
        "books",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", ondelete="CASCADE"), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("price", sa.Numeric(8, 2), nullable=False, server_default="0"),
        sa.Column("added", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("ix_books_author_id", "books", ["author_id"])
    op.bulk_insert(authors, [
        {"name": "Jane Austen", "country": "GB"},
        {"name": "Mark Twain", "country": "US"},
        {"name": "Anonymous", "country": None},
    ])
    op.execute(
        "INSERT INTO books (author_id, title, price) "
        "SELECT id, name || ': collected works', 20 FROM authors WHERE country IS NOT NULL ORDER BY id"
    )


def downgrade():
    op.drop_index("ix_books_author_id", table_name="books")
    op.drop_table("books")
    op.drop_table("authors")
