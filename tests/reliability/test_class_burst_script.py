"""The class-burst benchmark's verdict on its figures (the run itself is a benchmark, never a timed test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "class_burst.py"


@pytest.fixture(scope="module")
def burst() -> ModuleType:
    # The script imports its sibling helpers (benchmarks/serving.py) as a script run from there would.
    if str(SCRIPT.parent) not in sys.path:
        sys.path.append(str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("qkv_class_burst", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_targets_met_and_missed(burst: ModuleType) -> None:
    good = burst.Figures(honest_seconds=[0.5, 1.0, 9.0])
    assert good.misses(10.0) == [] and good.percentile(50) == 1.0
    late = burst.Figures(honest_seconds=[0.5, 12.0], honest_refusals={503: 2}, honest_without_verdict=2)
    assert late.misses(10.0) == [
        "2 honest learners got no verdict",
        "2 honest refusals",
        "honest p99 12.00 s is over 10 s",
    ]
    assert "honest refusals: 2 {503: 2}" in late.report()


def test_loops_must_leave_honest_learners(burst: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        burst.main(["--learners", "5", "--loops", "5"])
    assert "--loops must be from 0 to 4, not 5." in capsys.readouterr().err


def test_remote_learners_have_addresses_of_their_own_apart_from_the_class(burst: ModuleType) -> None:
    where, trivial = burst.Where(), burst.Where(network="10.2")
    assert [where.learner(n) for n in (0, 249, 250, 999)] == [
        "10.1.0.1",
        "10.1.0.250",
        "10.1.1.1",
        "10.1.3.250",
    ]
    assert trivial.learner(0) == "10.2.0.1" and burst.Where("10.9.0.1").learner(7) == "10.9.0.1"
