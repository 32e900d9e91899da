"""The store's plumbing: the engine and its URLs, the schema and its migrations, transactions, the clock,
one-time tokens and server secrets. Every repository of the store stands on these; they name no aggregate."""
