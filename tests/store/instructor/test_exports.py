"""Every CSV export reads back exactly (but for the neutralising apostrophes) and runs no formula.

Two readers: Python's ``csv`` module, which honours quoting, and a naive one that starts a new row at
every CR or LF (old spreadsheets, ``str.splitlines``); no row the naive reader sees may start a formula.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from click.testing import CliRunner

from qkv.cli.progress import progress
from qkv.store import Store
from qkv.store.instructor.exports import spreadsheet_safe, write_csv

LEARNER = "b" * 36
FORMULA_CHARACTERS = "=+-@\t＝＋－＠"
# Each would start a formula somewhere: at the cell's start, after a bare CR, an LF or a CRLF, behind
# quotes, in full-width form; and plain text that must come back untouched.
NASTY = [
    "\r=1",
    "\n=1",
    "\t=1",
    "=1+1",
    "+1",
    "-1",
    "@SUM(A1)",
    "＝1+1",
    "＋1",
    "－1",
    "＠SUM(A1)",
    "ok\r=1",
    "ok\n+1",
    "ok\r\n@x",
    'ok\r"=1"',
    "ok\r\r＝1",
    'a "quoted", comma',
    "plain\rline",
    "Ada",
]


def naive_rows(text: str) -> list[str]:
    """The rows a reader sees that breaks lines on every CR and LF, quotes or not."""
    return re.split(r"\r\n|\r|\n", text)


def assert_no_row_starts_a_formula(text: str) -> None:
    for row in naive_rows(text):
        first = row.lstrip('"')  # to such a reader, quotes are CSV quoting: they do not hide a formula
        assert not first.startswith(tuple(FORMULA_CHARACTERS)), (row, text)


@pytest.mark.parametrize("value", NASTY)
def test_a_cell_reads_back_with_the_csv_module_and_starts_no_formula_in_a_naive_reader(value: str) -> None:
    out = io.StringIO()
    write_csv([{"name": value, "n": 3}], ["name", "n"], out)
    text = out.getvalue()
    (header, row) = list(csv.reader(io.StringIO(text, newline="")))
    assert header == ["name", "n"]
    assert row == [spreadsheet_safe(value), "3"]
    assert row[0].replace("'", "") == value  # the apostrophes are all that was added
    assert_no_row_starts_a_formula(text)
    if "\r" in value or "\n" in value:
        quoted = '"' + row[0].replace('"', '""') + '"'
        assert text == f"name,n\r\n{quoted},3\r\n"  # the cell with a line break is quoted


def test_only_the_line_starts_that_need_it_get_an_apostrophe() -> None:
    assert spreadsheet_safe("\r=1") == "'\r'=1"
    assert spreadsheet_safe("a=1\rb-2") == "a=1\rb-2"
    assert spreadsheet_safe("2024-01-01") == "2024-01-01"
    assert spreadsheet_safe(-2.5) == -2.5


@pytest.mark.parametrize("fmt", ["csv", "lms", "events"])
def test_every_export_of_nasty_names_and_answers_is_safe(database_url: str, fmt: str) -> None:
    store = Store(database_url)
    store.learners.set_display_name(LEARNER, "＝HYPERLINK(1)")  # display names have no control characters
    answers = [value for value in NASTY if "\t" not in value]
    for answer in answers:
        store.progress.record_answer(LEARNER, "L4.1", "q", answer, correct=False, message=answer)
    store.close()
    result = CliRunner().invoke(progress, ["export", "--database-url", database_url, "--format", fmt])
    assert result.exit_code == 0, result.output
    text = result.stdout_bytes.decode("utf-8")  # .stdout would turn CRLF into LF
    assert_no_row_starts_a_formula(text)
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert rows, text
    assert {row["display_name"] for row in rows} == {"'＝HYPERLINK(1)"}
    if fmt == "events":
        assert [row["answer"] for row in rows] == [spreadsheet_safe(answer) for answer in answers]
        assert [row["message"] for row in rows] == [spreadsheet_safe(answer) for answer in answers]
