"""A learner's sign-in link knows its kind: only a personal link may merge a browser's anonymous work."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text

from qkv.store import Store, create_store_engine, parse_roster, upgrade
from qkv.store.learner.accounts import LinkKind
from qkv.store.sql.clock import utc_now
from qkv.store.sql.migration_steps import learner_link_kinds
from qkv.store.sql.migrations import MIGRATIONS
from qkv.store.sql.one_time_tokens import digest


def test_links_keep_their_kind_and_a_check_uses_nothing(database_url: str) -> None:
    store = Store(database_url)
    try:
        accounts = store.accounts
        ada = accounts.find_or_create(None, "s-1001", "Ada Lovelace")
        personal, device = accounts.new_sign_in_token(ada), accounts.new_device_token(ada)
        for token, kind in ((personal, LinkKind.PERSONAL), (device, LinkKind.DEVICE)):
            seen = accounts.inspect_link(token)
            assert seen is not None and seen.kind is kind and seen.account.external_id == "s-1001"
            assert seen.merges is (kind is LinkKind.PERSONAL)
            used = accounts.use_link(token)
            assert used == seen  # checking it first used nothing
            assert accounts.inspect_link(token) is None and accounts.use_link(token) is None
        [(_, roster_token)] = accounts.import_roster(parse_roster("name,external id\nAda Lovelace,s-1001\n"))
        from_roster = accounts.inspect_link(roster_token)
        assert from_roster is not None and from_roster.kind is LinkKind.PERSONAL
        expired = accounts.new_sign_in_token(ada, timedelta(seconds=-1))
        assert accounts.inspect_link(expired) is None and accounts.inspect_link("x" * 500) is None
    finally:
        store.close()


def test_links_stored_before_kinds_are_marked_by_their_lifetime(database_url: str) -> None:
    """The database is written by the migrations before this one, as an older qkv left it."""
    engine = create_store_engine(database_url)
    before = MIGRATIONS.index(learner_link_kinds)
    upgrade(engine, target=before)
    now = utc_now()
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO learners (id, created_at, issuer, external_id, display_name) "
                "VALUES (:id, :t, '', 's-1001', 'Ada')"
            ),
            {"id": "a" * 36, "t": now},
        )
        for token, minutes in (("roster-link", 7 * 24 * 60), ("device-link", 10)):
            conn.execute(
                text(
                    "INSERT INTO learner_sign_in_tokens (token_hash, learner_id, created_at, expires_at) "
                    "VALUES (:h, :l, :c, :e)"
                ),
                {"h": digest(token), "l": "a" * 36, "c": now, "e": now + timedelta(minutes=minutes)},
            )
    engine.dispose()
    store = Store(database_url)
    try:
        roster, device = (
            store.accounts.inspect_link("roster-link"),
            store.accounts.inspect_link("device-link"),
        )
        assert roster is not None and roster.kind is LinkKind.PERSONAL
        assert device is not None and device.kind is LinkKind.DEVICE and not device.merges
    finally:
        store.close()
