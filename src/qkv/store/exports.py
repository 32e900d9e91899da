"""Writing the store's rows as CSV that a spreadsheet opens safely.

Every CSV qkv writes (the gradebook, the LMS import file, the event log) goes through
``write_csv``, which passes each cell through ``spreadsheet_safe``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text instead of running it as a formula (OWASP's advice).

    Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading apostrophe;
    numbers stay numbers.

    Examples
    --------
    >>> print(spreadsheet_safe('=HYPERLINK("http://x")'), spreadsheet_safe("Ada"), spreadsheet_safe(-3))
    '=HYPERLINK("http://x") Ada -3
    >>> spreadsheet_safe(None)
    ''
    """
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(records: Iterable[Mapping[str, object]], columns: Sequence[str], stream: TextIO) -> None:
    """Write a header and one line per record, every cell made ``spreadsheet_safe``.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_csv([{"name": "=1+1", "score": 2}], ["name", "score"], out)
    >>> out.getvalue()
    "name,score\\n'=1+1,2\\n"
    """
    writer = csv.DictWriter(stream, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for record in records:
        writer.writerow({key: spreadsheet_safe(record.get(key)) for key in columns})
