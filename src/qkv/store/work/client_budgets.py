"""The clients' storage budgets as the database counts them: bytes stored per client address and day (UTC).

The rules (what is kept past a budget, how texts are measured) are in ``qkv.store.work.budget``; this
module keeps the counts, in the database, so that several servers on one database share them.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Connection, Table, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import ClientStorage
from qkv.store.work.budget import DEFAULT_CLIENT_BYTES_PER_DAY, Keeping, check_budget, check_client, keeping

_BUDGETS: Table = ClientStorage.__table__  # type: ignore[assignment]


class ClientBudgets:
    """Each client's bytes stored today, and what is kept of its next write.

    Parameters
    ----------
    database : Database
        The database that holds the counts.
    bytes_per_day : int
        Bytes one client may store in a day (UTC) before only the best and the last are kept; a quarter
        more and nothing more is stored that day (see ``qkv.store.work.budget``).

    Raises
    ------
    ValueError
        If ``bytes_per_day`` is not a whole number of at least 1.

    Examples
    --------
    >>> database = Database("sqlite://")
    >>> budgets = ClientBudgets(database, bytes_per_day=100)
    >>> with database.write() as conn:
    ...     budgets.charge(conn, "192.0.2.1", 100)
    ...     budgets.keeping(conn, "192.0.2.1"), budgets.keeping(conn, None)
    (<Keeping.BEST_AND_LAST: 'best and last'>, <Keeping.ALL: 'all'>)
    >>> budgets.spent_today("192.0.2.1")
    100
    >>> database.close()
    """

    def __init__(self, database: Database, bytes_per_day: int = DEFAULT_CLIENT_BYTES_PER_DAY) -> None:
        self.database = database
        self.bytes_per_day = check_budget(bytes_per_day)

    def keeping(self, conn: Connection, client: str | None) -> Keeping:
        """What is kept of the next write of ``client`` (everything for a write that names none).

        Parameters
        ----------
        conn : sqlalchemy.Connection
            A connection inside ``Database.write()`` (the write the answer is for).
        client : str or None
            The client key (an address), or None for a write that counts against no budget.

        Returns
        -------
        Keeping

        Raises
        ------
        ValueError
            If ``client`` is not text of 1 to 64 characters.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> with database.read() as conn:
        ...     ClientBudgets(database).keeping(conn, "192.0.2.1")
        <Keeping.ALL: 'all'>
        >>> database.close()
        """
        if client is None:
            return Keeping.ALL
        spent = conn.execute(
            select(_BUDGETS.c.stored_bytes).where(
                _BUDGETS.c.client == check_client(client), _BUDGETS.c.day == utc_now().date()
            )
        ).scalar()
        return keeping(int(spent or 0), self.bytes_per_day)

    def charge(self, conn: Connection, client: str | None, stored: int) -> None:
        """Add ``stored`` bytes to the client's count for today (one atomic row update).

        Nothing is counted for a write that names no client or stored nothing. The first write of a
        client's day forgets every count from before yesterday.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> budgets = ClientBudgets(database)
        >>> with database.write() as conn:
        ...     budgets.charge(conn, "192.0.2.1", 6)
        ...     budgets.charge(conn, "192.0.2.1", 4)
        ...     budgets.charge(conn, None, 4)
        >>> budgets.spent_today("192.0.2.1")
        10
        >>> database.close()
        """
        if client is None or stored <= 0:
            return
        day = utc_now().date()
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        created = conn.execute(
            dialect.insert(_BUDGETS)
            .values(client=client, day=day, stored_bytes=0)
            .on_conflict_do_nothing(index_elements=["client", "day"])
            .returning(_BUDGETS.c.day)
        ).first()
        if created is not None:  # the first write of a client's day: forget the days before yesterday
            conn.execute(delete(_BUDGETS).where(_BUDGETS.c.day < day - timedelta(days=1)))
        conn.execute(
            update(_BUDGETS)
            .where(_BUDGETS.c.client == client, _BUDGETS.c.day == day)
            .values(stored_bytes=_BUDGETS.c.stored_bytes + stored)
        )

    def spent_today(self, client: str) -> int:
        """Bytes the client stored today (UTC), as its budget counts them.

        Raises
        ------
        ValueError
            If ``client`` is not text of 1 to 64 characters.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> ClientBudgets(database).spent_today("192.0.2.1")
        0
        >>> database.close()
        """
        with self.database.read() as conn:
            spent = conn.execute(
                select(_BUDGETS.c.stored_bytes).where(
                    _BUDGETS.c.client == check_client(client), _BUDGETS.c.day == utc_now().date()
                )
            ).scalar()
        return int(spent or 0)


__all__ = ["ClientBudgets"]
