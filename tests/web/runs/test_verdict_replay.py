"""The replay attack on the web verdict: a program that implements nothing, fed the expected values that an
earlier run showed, passes no code exercise, because every run draws fresh inputs.

The attack, as a red-team pass ran it: run 1 submits functions that return ``None``; every failing test shows
its call and the expected value. Run 2 submits a lookup table from each call to its expected value. With a
seed fixed per learner that passed all 23 tests of L4.1; with a fresh seed per run the drawn tests get calls
the table has never seen.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from fastapi import FastAPI

from qkv.lessons import CodeExercise, load_catalog
from tests.web.backend_fixtures import Browser

needs_bubblewrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"
)
CODE_EXERCISES = load_catalog().code_exercises()

# What an attacker writes: each function rebuilds the call text the results document shows (the same
# literal form), looks it up and rebuilds the expected value from its printed form.
REPLAY = """
import builtins
import numpy as np

TABLE = {table!r}


def _literal(value):
    if isinstance(value, np.ndarray):
        default = str(value.dtype) in ("int64", "float64", "bool")
        return f"np.array({{value.tolist()!r}}" + ("" if default else f", dtype=np.{{value.dtype}}") + ")"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_literal(item) for item in value)
        if isinstance(value, list):
            return f"[{{inner}}]"
        return f"({{inner}},)" if len(value) == 1 else f"({{inner}})"
    if isinstance(value, dict):
        return "{{" + ", ".join(f"{{_literal(k)}}: {{_literal(v)}}" for k, v in value.items()) + "}}"
    return repr(value)


def _replay(name, args, kwargs):
    written = [_literal(arg) for arg in args] + [f"{{key}}={{_literal(value)}}" for key, value in kwargs.items()]
    expected = TABLE.get(name + "(" + ", ".join(written) + ")")
    if expected is None:
        return None
    if expected.startswith("raises "):
        raise getattr(builtins, expected.split()[1])("replayed")
    return eval(expected, {{"array": np.array, "np": np, "nan": np.nan, "inf": np.inf}})
"""


def replay_program(functions: tuple[str, ...], table: dict[str, str]) -> str:
    """The lookup-table program for these functions, answering the calls in ``table``."""
    source = REPLAY.format(table=table)
    for name in functions:
        source += f"\n\ndef {name}(*args, **kwargs):\n    return _replay({name!r}, args, kwargs)\n"
    return source


def stub_program(functions: tuple[str, ...]) -> str:
    """Run 1: every function returns None, so every test fails and shows its call and expected value."""
    return "".join(f"def {name}(*args, **kwargs):\n    return None\n\n" for name in functions)


def run(learner: Browser, exercise: CodeExercise, code: str) -> dict[str, Any]:
    response = learner.post(
        f"/api/lessons/{exercise.lesson.id}/code", {"exercise_id": exercise.exercise.id, "code": code}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def calls_and_expected(result: dict[str, Any]) -> dict[str, str]:
    return {
        test["call"]: test["expected"]
        for test in result["tests"]
        if test.get("call") and test.get("expected")
    }


@pytest.mark.parametrize("exercise", CODE_EXERCISES, ids=[exercise.id for exercise in CODE_EXERCISES])
def test_every_code_exercise_draws_some_of_its_inputs_afresh(exercise: CodeExercise) -> None:
    # What makes the replay fail: at least one test of every exercise gets other arguments on another seed.
    first, second = exercise.suite.cases(1), exercise.suite.cases(2)
    assert any(a.call != b.call for a, b in zip(first, second, strict=True))


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(300)
@pytest.mark.parametrize("exercise", CODE_EXERCISES, ids=[exercise.id for exercise in CODE_EXERCISES])
def test_replaying_shown_expected_values_passes_no_code_exercise(
    app: FastAPI, exercise: CodeExercise
) -> None:
    learner = Browser(app).open_lesson()
    functions = tuple(exercise.exercise.functions)
    first = run(learner, exercise, stub_program(functions))["result"]
    table = calls_and_expected(first)
    assert table, "run 1 showed no call with its expected value"
    replayed = run(learner, exercise, replay_program(functions, table))
    result = replayed["result"]
    assert result["seed"] != first["seed"]
    assert result["status"] != "pass", result["message"]
    progress = replayed["progress"]["exercises"][exercise.exercise.id]
    assert (progress["status"], progress["done"]) == ("attempted", False)
    # Every test whose inputs were drawn afresh failed: the table had never seen its call.
    drawn = [test for test in result["tests"] if test["call"] not in table]
    assert drawn
    assert [test["name"] for test in drawn if test["status"] == "pass"] == []


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_the_replay_would_pass_if_the_inputs_repeated(app: FastAPI) -> None:
    # The control: the same attack against a run with run 1's seed passes L4.1 outright, so the test above
    # fails for the right reason (fresh inputs), not because the attack program is broken.
    exercise = load_catalog().code_exercise("L4.1/functions")
    functions = tuple(exercise.exercise.functions)
    first = run(Browser(app).open_lesson(), exercise, stub_program(functions))["result"]
    grader = app.state.qkv.grader
    repeated = grader.grade(
        replay_program(functions, calls_and_expected(first)), exercise.suite, seed=first["seed"]
    )
    assert repeated.status == "pass", repeated.message
