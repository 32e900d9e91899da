"""A class roster from CSV: a name and an external id per learner, checked whole before anything is stored.

The first row names the columns: ``name`` and ``external id`` (also written ``external_id`` or
``external-id``), in any order and case, and optionally ``email``; other columns are ignored. Every bad row
is reported at once, by its line number, and nothing is imported until the roster is clean.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from qkv.store.learner.learners import MAX_DISPLAY_NAME

__all__ = ["MAX_ROSTER_ROWS", "RosterEntry", "RosterError", "parse_roster"]

MAX_ROSTER_ROWS = 5000
_MAX_FIELD = 255
_REPORTED = 20  # bad rows listed in one message; the rest are counted


class RosterError(ValueError):
    """A roster that cannot be imported; the message lists the bad lines."""


@dataclass(frozen=True)
class RosterEntry:
    """One learner of a roster, with the line it came from."""

    line: int
    name: str
    external_id: str
    email: str | None = None


def _column_key(header: str) -> str:
    return "_".join(header.strip().lower().replace("-", " ").replace("_", " ").split())


def _columns(header: list[str]) -> dict[str, int]:
    keys = [_column_key(cell) for cell in header]
    missing = [name for name in ("name", "external_id") if name not in keys]
    if missing:
        found = ", ".join(repr(cell) for cell in header) or "nothing"
        raise RosterError(
            f"Line 1 must name the columns 'name' and 'external id' (and optionally 'email'), "
            f"but it has {found}; the column {missing[0].replace('_', ' ')!r} is missing."
        )
    return {key: keys.index(key) for key in ("name", "external_id", "email") if key in keys}


def _problem(cells: list[str], where: dict[str, int]) -> tuple[str, str, str | None] | str:
    """The row's (name, external id, email), or a sentence saying what is wrong with it."""

    def cell(key: str) -> str:
        index = where.get(key)
        return cells[index].strip() if index is not None and index < len(cells) else ""

    name, external_id, email = " ".join(cell("name").split()), cell("external_id"), cell("email")
    if not name:
        return f"the name is empty (external id {external_id!r})" if external_id else "the name is empty"
    if not external_id:
        return f"{name!r} has no external id"
    if len(name) > MAX_DISPLAY_NAME:
        return f"the name {name[:30]!r}... has {len(name)} characters, more than {MAX_DISPLAY_NAME}"
    for what, value in (("name", name), ("external id", external_id), ("email", email)):
        if len(value) > _MAX_FIELD:
            return f"the {what} {value[:30]!r}... has {len(value)} characters, more than {_MAX_FIELD}"
        if any(not ch.isprintable() for ch in value):
            return f"the {what} {value!r} contains control characters"
    return name, external_id, email or None


def parse_roster(text: str) -> list[RosterEntry]:
    """The roster's learners, or a ``RosterError`` naming every bad line.

    Parameters
    ----------
    text : str
        The CSV file's text (the first row names the columns; blank lines are skipped).

    Returns
    -------
    list of RosterEntry

    Raises
    ------
    RosterError
        If the header lacks a column, or any row has an empty name or external id, a value too long or
        with control characters, or an external id already on an earlier line.

    Examples
    --------
    >>> roster = parse_roster("Name,External ID\\nAda  Lovelace,s-1\\n\\nGrace,s-2")
    >>> [(entry.line, entry.name, entry.external_id) for entry in roster]
    [(2, 'Ada Lovelace', 's-1'), (4, 'Grace', 's-2')]
    >>> try:
    ...     parse_roster("name,external_id\\nAda,s-1\\n,s-2\\nGrace,s-1\\n")
    ... except RosterError as refused:
    ...     print(str(refused).replace("; ", ";\\n"))
    The roster has 2 bad rows, so nothing was imported: line 3: the name is empty (external id 's-2');
    line 4: the external id 's-1' is on line 2 already.
    """
    if "\x00" in text:
        raise RosterError("The roster contains a NUL byte; save it as a plain CSV text file.")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise RosterError(f"The roster is not valid CSV: {error}.") from None
    if not rows:
        raise RosterError(
            "The roster is empty; its first line must name the columns 'name' and 'external id'."
        )
    where = _columns(rows[0])
    entries: list[RosterEntry] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        checked = _problem(cells, where)
        if isinstance(checked, str):
            problems.append(f"line {number}: {checked}")
            continue
        name, external_id, email = checked
        if external_id in first_line:
            problems.append(
                f"line {number}: the external id {external_id!r} is on line {first_line[external_id]} already"
            )
            continue
        first_line[external_id] = number
        entries.append(RosterEntry(number, name, external_id, email))
    if problems:
        listed = "; ".join(problems[:_REPORTED])
        more = f"; and {len(problems) - _REPORTED} more" if len(problems) > _REPORTED else ""
        rows_word = "row" if len(problems) == 1 else "rows"
        raise RosterError(
            f"The roster has {len(problems)} bad {rows_word}, so nothing was imported: {listed}{more}."
        )
    if not entries:
        raise RosterError("The roster names no learners: it has a header line but no rows.")
    if len(entries) > MAX_ROSTER_ROWS:
        raise RosterError(
            f"The roster has {len(entries)} learners; at most {MAX_ROSTER_ROWS} are imported at once."
        )
    return entries
