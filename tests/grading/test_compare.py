"""The comparators' sentences: what a learner reads when a returned value is not the expected one."""

from __future__ import annotations

import numpy as np
import pytest

from qkv.grading.compare import Close


@pytest.mark.parametrize("returned", [4, np.int64(4), np.array(4), np.float32(4.0)])
def test_a_single_wrong_number_is_shown_as_a_number(returned: object) -> None:
    mismatch = Close().mismatch(returned, 2.0)
    assert mismatch is not None
    assert mismatch.message in (
        "Expected the result = 2.0, but got 4.",
        "Expected the result = 2.0, but got 4.0.",
    )


def test_a_long_array_of_the_wrong_shape_is_not_described_twice() -> None:
    mismatch = Close().mismatch(np.zeros((4, 7)), np.zeros((7, 4)), "S")
    assert mismatch is not None
    assert mismatch.message == "Expected S with shape (7, 4), but got shape (4, 7)."


def test_a_short_array_of_the_wrong_shape_shows_its_values() -> None:
    mismatch = Close().mismatch(np.array([1.0, 2.0]), np.array([[1.0, 2.0]]), "Q")
    assert mismatch is not None
    assert mismatch.message == "Expected Q with shape (1, 2), but got shape (2,): array([1., 2.])."
