"""Members' emails become unique, and books get tags. The unique index
fails while two members share an email: the whole migration, the new
table included, rolls back.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "book_tags",
        sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tag", sa.String(30), primary_key=True),
    )
    op.drop_index("ix_members_email", table_name="members")
    op.create_index("ix_members_email", "members", ["email"], unique=True)


def downgrade():
    op.drop_index("ix_members_email", table_name="members")
    op.create_index("ix_members_email", "members", ["email"])
    op.drop_table("book_tags")
