"""The store's plumbing: the engine and its URLs, the schema and its migrations, transactions, the clock,
one-time tokens and server secrets. Every repository of the store stands on these; they name no aggregate.

The schema's tables are imported here first, so that ``qkv.store.sql.tables`` is complete (its course and
LTI tables included) whichever of its modules is imported first."""

from qkv.store.sql import tables as tables
