"""Alembic migrations of the call log and gateway database (run by ``llmplex.store.database.migrate``)."""
