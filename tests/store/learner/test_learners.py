"""No learner takes the name of another learner with an account: case and spacing make no difference."""

from __future__ import annotations

import pytest

from qkv.store import Store


def test_a_name_an_account_has_is_taken_for_everyone_else(database_url: str) -> None:
    store = Store(database_url)
    try:
        ada = store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
        store.accounts.find_or_create("https://lms.example", "sub-9", None)  # an account with no name
        anonymous = "c" * 36
        for taken in ("Ada Lovelace", "ada lovelace", "  ADA   Lovelace "):
            assert store.learners.name_taken(anonymous, taken)
        assert not store.learners.name_taken(ada, "Ada Lovelace")  # one's own name
        assert not store.learners.name_taken(anonymous, "Ada Lovelace-Byron")
        with pytest.raises(ValueError, match="The name 'ada lovelace' is taken by another learner"):
            store.learners.set_display_name(anonymous, " ada  lovelace")
        assert store.learners.display_name(anonymous) is None  # nothing was stored
        assert store.learners.set_display_name(anonymous, "Ada L.") == "Ada L."
        # An anonymous learner's name does not bind anyone: only accounts' names are taken.
        assert not store.learners.name_taken("d" * 36, "Ada L.")
    finally:
        store.close()
