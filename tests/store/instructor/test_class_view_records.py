"""The class view's records without a database: the rule for who is stuck, a learner's standing on an
exercise from its current row, and the median of a histogram of attempts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from qkv.store.instructor.class_view_records import (
    CurrentExercise,
    Standing,
    StuckRule,
    median_of_histogram,
)
from qkv.store.sql.clock import utc_now


def test_the_standing_rules() -> None:
    t = utc_now()
    working = CurrentExercise("L9.1", "q", False, 1, t, t)
    assert working.standing(t, StuckRule()) is Standing.WORKING
    assert CurrentExercise("L9.1", "q", True, 5, t, t).standing(t, StuckRule()) is Standing.SOLVED
    assert working.standing(t + timedelta(minutes=10), StuckRule(active_minutes=15)) is Standing.STUCK
    with pytest.raises(ValueError, match="minutes must be a whole number of at least 1, not 0"):
        StuckRule(minutes=0)
    assert median_of_histogram({2: 3}) == 2.0
