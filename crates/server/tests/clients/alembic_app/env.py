"""Alembic's environment: migrations run online, on the connection that
run.py hands over in config.attributes, all of one run in one transaction
(PostgreSQL's DDL is transactional; so must Centum's be)."""
from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
