"""A course's tables (qkv.store.sql.tables_class): on Base.metadata whichever module of the schema is imported
first, re-exported by qkv.store.sql.tables, and the same columns as a migrated database (SQLite and
PostgreSQL)."""

from __future__ import annotations

from tests.store.sql import schema_module_checks as checks

MODULE = "qkv.store.sql.tables_class"


def test_importing_this_module_first_gives_the_whole_schema() -> None:
    checks.importing_it_first_gives_the_whole_schema(MODULE)


def test_its_models_are_the_tables_module_s_names() -> None:
    checks.its_models_are_the_tables_module_s_names(MODULE)


def test_its_columns_are_the_migrated_database_s(database_url: str) -> None:
    checks.its_columns_are_the_migrated_database_s(MODULE, database_url)
