"""Writing the store's rows as CSV that a spreadsheet opens safely.

Every CSV qkv writes (the gradebook, the LMS import file, the event log) goes through
``write_csv``, which passes each cell, the header's too, through ``spreadsheet_safe`` and quotes
every cell that holds a comma, a quote, a CR or an LF.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO

# What a spreadsheet reads as the start of a formula (OWASP's list), with the full-width forms that
# some spreadsheets fold to the ASCII ones; CR and LF count only at a cell's very start (see below).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠")
_FORMULA_CHARS = re.escape("".join(start for start in FORMULA_STARTS if start not in "\r\n"))
# The points that get an apostrophe: the cell's start when it begins with any formula start, and the
# start of every further line of the cell (after a CR or LF) that begins with a formula character.
# A reader that breaks rows on a bare CR, or on a line break inside quotes, starts a row at each of
# those lines; double quotes in front do not hide a formula from it (they are CSV quoting to it).
_RISKY_LINE_START = re.compile(f'^(?=[\\r\\n])|(?:^|(?<=[\\r\\n]))(?="*[{_FORMULA_CHARS}])')


def spreadsheet_safe(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text instead of running it as a formula (OWASP's advice).

    Text starting with ``=``, ``+``, ``-``, ``@`` (or their full-width forms ``＝＋－＠``), a tab, a CR
    or an LF gets a leading apostrophe, and so does each line inside the text that starts with one of
    those characters (a reader that splits rows on a bare CR would start a row there). Numbers stay
    numbers; None is an empty cell.

    Examples
    --------
    >>> print(spreadsheet_safe('=HYPERLINK("http://x")'), spreadsheet_safe("Ada"), spreadsheet_safe(-3))
    '=HYPERLINK("http://x") Ada -3
    >>> spreadsheet_safe("＝1+1"), spreadsheet_safe("\\r=1"), spreadsheet_safe("ok\\n@SUM(A1)")
    ("'＝1+1", "'\\r'=1", "ok\\n'@SUM(A1)")
    >>> spreadsheet_safe(None)
    ''
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return _RISKY_LINE_START.sub("'", value)
    return value


def write_csv(records: Iterable[Mapping[str, object]], columns: Sequence[str], stream: TextIO) -> None:
    """Write a header and one line per record, every cell made ``spreadsheet_safe``.

    Lines end in CRLF (RFC 4180), which makes Python's writer quote every cell holding a CR or an LF:
    with a bare LF as the line end it leaves a CR unquoted, and a reader that breaks on CR splits the row.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_csv([{"name": "=1+1", "score": 2}, {"name": "a\\rb"}], ["name", "score"], out)
    >>> out.getvalue()
    'name,score\\r\\n\\'=1+1,2\\r\\n"a\\rb",\\r\\n'
    """
    writer = csv.writer(stream, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow([spreadsheet_safe(column) for column in columns])
    for record in records:
        writer.writerow([spreadsheet_safe(record.get(key)) for key in columns])
