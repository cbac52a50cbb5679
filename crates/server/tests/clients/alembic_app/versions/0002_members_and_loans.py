"""Members borrow books; books get an ISBN (filled in, then required and
unique), a price check, and authors' names grow longer.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("books", sa.Column("isbn", sa.String(13)))
    op.execute("UPDATE books SET isbn = lpad(id::text, 13, '0')")
    op.alter_column("books", "isbn", existing_type=sa.String(13), nullable=False)
    op.create_unique_constraint("uq_books_isbn", "books", ["isbn"])
    op.create_check_constraint("ck_books_price", "books", "price >= 0")
    op.alter_column("authors", "name", existing_type=sa.String(100), type_=sa.String(200))
    op.create_table(
        "members",
        sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("email", sa.String(120), nullable=False),
        sa.Column("active", sa.Boolean, nullable=False, server_default=sa.true()),
    )
    op.create_index("ix_members_email", "members", ["email"])
    op.create_table(
        "loans",
        sa.Column("id", sa.BigInteger, primary_key=True),
        sa.Column("book_id", sa.Integer, nullable=False),
        sa.Column("member_id", sa.Integer, nullable=False),
        sa.Column("due", sa.Date, nullable=False),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], name="fk_loans_book", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["member_id"], ["members.id"], name="fk_loans_member"),
    )
    op.create_index("ix_loans_member_due", "loans", ["member_id", "due"])


def downgrade():
    op.drop_index("ix_loans_member_due", table_name="loans")
    op.drop_table("loans")
    op.drop_index("ix_members_email", table_name="members")
    op.drop_table("members")
    op.alter_column("authors", "name", existing_type=sa.String(200), type_=sa.String(100))
    op.drop_constraint("ck_books_price", "books", type_="check")
    op.drop_constraint("uq_books_isbn", "books", type_="unique")
    op.drop_column("books", "isbn")
