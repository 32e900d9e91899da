"""Storage bounded per client address: past its day's budget a program is still graded and returned, but
only the best and the last are kept, a longer draft is refused with a sentence, and stored output is cut."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from qkv.web.http.clients import storage_key
from tests.web.backend_fixtures import API, CORRECT_SOLUTION, WRONG_SOLUTION, Browser

MIB = 1024 * 1024
CODE = "functions"
CHATTY = WRONG_SOLUTION + "\nprint('all work and no play\\n' * 8000)\n"  # about 220 KB printed


def _draft(browser: Browser, code: str) -> Any:
    return browser.client.put(
        f"{API}/draft", json={"exercise_id": CODE, "code": code}, headers={"X-CSRF-Token": browser.token}
    )


def _kept(app: FastAPI) -> list[int]:
    """How many tests each kept program passed, oldest first."""
    with app.state.qkv.store.database.engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT passed FROM code_submissions ORDER BY id"))]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_past_the_budget_programs_are_graded_and_returned_but_only_best_and_last_kept(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(client_storage_per_day=MIB)
    ada = Browser(app).open_lesson()
    first = ada.submit_code(WRONG_SOLUTION)
    assert first.status_code == 200 and first.json()["kept"] == "all", first.text
    # Sixteen other learners from the same address spend its budget on 64 KiB drafts.
    for number in range(16):
        assert (
            _draft(Browser(app).open_lesson(), f"# {number:02d}\n".ljust(64 * 1024, "#")).status_code == 200
        )
    refused = _draft(Browser(app).open_lesson(), "# one more\n")
    assert refused.status_code == 429, refused.text
    assert refused.json()["detail"].startswith("Your address has stored its share of drafts and programs for")
    assert 1 <= int(refused.headers["Retry-After"]) <= 86_400
    # Ada's programs are still graded, and she gets every result in full.
    best = ada.submit_code(CORRECT_SOLUTION)
    chatty = ada.submit_code(CHATTY)
    for response in (best, chatty):
        assert response.status_code == 200, response.text
        assert response.json()["kept"] == "best and last"
    assert best.json()["result"]["status"] == "pass"
    assert "not kept" not in chatty.json()["result"]["output"]
    assert len(chatty.json()["result"]["output"]) > 60_000
    # Kept: the best (every test passed) and the last; the first wrong one is gone.
    total = best.json()["result"]["tests"]
    assert _kept(app) == [len(total), _passed(chatty)]
    progress = ada.progress()["code"][CODE]
    assert progress["source"] == CHATTY
    assert progress["result"]["output"].endswith("bytes were shown when the program ran but not kept …]")
    assert ada.progress()["exercises"][CODE]["attempts"] == 3  # every run counted
    assert app.state.qkv.store.budgets.spent_today(storage_key("testclient")) >= MIB


def _passed(response: Any) -> int:
    return sum(1 for test in response.json()["result"]["tests"] if test["status"] == "pass")


def test_a_client_storage_budget_below_a_mebibyte_is_refused() -> None:
    from qkv.web.settings import Settings

    with pytest.raises(
        ValueError, match=r"^client_storage_per_day must be at least 1048576, but it is 1000\.$"
    ):
        Settings(client_storage_per_day=1000)
