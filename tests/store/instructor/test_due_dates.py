"""A course's dates (issue 46): due dates, closes, late credit, time zones and extensions, on SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from qkv.store import MembershipSource, Standing, Store

DUE = datetime(2026, 12, 24, 16, 0)
ADA, ALAN = "a" * 36, "b" * 36


def test_dates_extensions_and_credit_per_learner(database_url: str) -> None:
    store = Store(database_url)
    try:
        course = store.courses.create("Attention 101").id
        other = store.courses.create("Attention 102").id
        for learner in (ADA, ALAN):
            store.courses.enrol(course, learner, MembershipSource.ROSTER)
        store.due_dates.set_due(course, "L1.1", DUE, close_at=DUE + timedelta(days=2), late_credit=0.5)
        assert store.due_dates.due(other, "L1.1") is None  # another course's lesson keeps no date
        store.due_dates.extend(course, ADA, "L1.1", DUE + timedelta(days=3))
        ada = store.due_dates.in_force(course, ADA, "L1.1")
        alan = store.due_dates.in_force(course, ALAN, "L1.1")
        assert ada is not None and alan is not None
        assert ada.extended and ada.due_at == DUE + timedelta(days=3)
        assert ada.close_at == DUE + timedelta(days=5)  # the close moves as far as the due date
        moment = DUE + timedelta(days=2, hours=1)
        assert alan.standing_at(moment) is Standing.CLOSED and alan.credit_at(moment) == 0.0
        assert ada.standing_at(moment) is Standing.ON_TIME and ada.credit_at(moment) == 1.0
        assert alan.standing_at(DUE + timedelta(hours=1)) is Standing.LATE
        assert alan.credit_at(DUE + timedelta(hours=1)) == 0.5
        assert alan.standing_at(DUE) is Standing.ON_TIME  # at the due date is on time
        # Setting the date again replaces it; the extension (an absolute moment) stays.
        store.due_dates.set_due(course, "L1.1", DUE, late_credit=0.0)
        ada = store.due_dates.in_force(course, ADA, "L1.1")
        assert ada is not None and ada.close_at is None and ada.late_credit == 0.0
        assert [e.learner_id for e in store.due_dates.extensions(course)] == [ADA]
        assert store.due_dates.unextend(course, ADA, "L1.1")
        ada = store.due_dates.in_force(course, ADA, "L1.1")
        assert ada is not None and not ada.extended and ada.due_at == DUE
        store.due_dates.set_time_zone(course, "Asia/Tokyo")
        assert store.due_dates.time_zone_name(course) == "Asia/Tokyo"
        assert store.due_dates.time_zone_name(other) is None
        assert store.due_dates.clear_due(course, "L1.1")
        assert store.due_dates.in_force(course, ALAN, "L1.1") is None
    finally:
        store.close()


def test_bad_dates_get_sentences_naming_the_value(sqlite_url: str) -> None:
    store = Store(sqlite_url)
    try:
        with pytest.raises(ValueError, match=r"must not come before the due date \(2026-12-24 16:00 UTC\)"):
            store.due_dates.set_due("c1", "L1.1", DUE, close_at=DUE - timedelta(minutes=1))
        with pytest.raises(ValueError, match=r"not 1\.25"):
            store.due_dates.set_due("c1", "L1.1", DUE, late_credit=1.25)
        with pytest.raises(ValueError, match=r"not -0\.5"):
            store.due_dates.set_due("c1", "L1.1", DUE, late_credit=-0.5)
        with pytest.raises(ValueError, match="'Nowhere/Land' is not a time zone"):
            store.due_dates.set_time_zone("c1", "Nowhere/Land")
        store.due_dates.set_due("c1", "L1.1", DUE)
        with pytest.raises(ValueError, match="must end after the due date"):
            store.due_dates.extend("c1", ADA, "L1.1", DUE - timedelta(days=1))
        assert store.due_dates.extensions("c1") == []
    finally:
        store.close()
