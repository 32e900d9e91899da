"""Strict decoding of the values the harness reports.

The report comes from a process that ran untrusted code, so nothing in it is taken on trust: every value
must be one of a few plain shapes made of JSON numbers, strings and lists, or the whole report is rejected.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MalformedReport", "Opaque", "clean_text", "decode_value", "dtype_name", "numeric_array"]

NUMERIC_DTYPES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
}
MAX_DEPTH = 8
MAX_ELEMENTS = 4096


class MalformedReport(ValueError):
    """The report does not have the structure the harness writes, so it cannot be trusted."""


@dataclass(frozen=True)
class Opaque:
    """A returned value the grader does not look inside: its type name, repr and shape (if it had one)."""

    type: str
    repr: str
    shape: tuple[int, ...] | None = None


@functools.cache  # a handful of dtypes ever
def dtype_name(dtype: np.dtype[Any]) -> str:
    """``str(dtype)``, remembered: NumPy builds the name in Python each time (2 µs), and a job names
    hundreds of arrays.

    Examples
    --------
    >>> dtype_name(np.zeros(2, dtype=np.float32).dtype)
    'float32'
    """
    return str(dtype)


def _number(value: object) -> float:
    if isinstance(value, bool):
        raise MalformedReport("a boolean stood where a number should be")
    if isinstance(value, int | float):
        return float(value)
    specials = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
    if isinstance(value, str) and value in specials:
        return specials[value]
    raise MalformedReport(f"{value!r} is not a number")


def clean_text(text: str, limit: int = 2000) -> str:
    r"""``text`` cut to ``limit`` characters, with every lone surrogate written out as ``\udXXX``.

    The report may be forged, so a name or a message can be as long as the report itself. And a learner's
    message such as ``ValueError("\ud800")`` reaches the grader as a JSON escape that decodes to a lone
    surrogate; left in, it would break every UTF-8 encoder downstream (the web response, the store, the
    terminal).

    Examples
    --------
    >>> clean_text("ok \ud800!")
    'ok \\ud800!'
    >>> clean_text("Wq needs 2 rows"), clean_text("E" * 500, limit=3)
    ('Wq needs 2 rows', 'EEE…')
    """
    if len(text) > limit:
        text = text[:limit] + "…"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise MalformedReport(f"{value!r} is not a string")
    return clean_text(value)


def numeric_array(value: object) -> np.ndarray[Any, Any] | None:
    """``value`` as an array of numbers, or None when it is not one (ragged, text, None inside …).

    Returned values are the learner's, so anything may come: a ragged list makes ``np.asarray`` raise, and
    a list holding None or strings makes an array that cannot be compared with numbers.

    Examples
    --------
    >>> numeric_array([[1, 2], [3, 4]]).shape
    (2, 2)
    >>> numeric_array([[1], [2, 3]]) is None, numeric_array([[None, "a"]]) is None, numeric_array(3) is None
    (True, True, True)
    """
    if not isinstance(value, np.ndarray | list | tuple):
        return None
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        return None
    return array if array.dtype.kind in "biuf" else None


def _int_list(value: object) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in value):
        raise MalformedReport(f"{value!r} is not a list of whole numbers")
    return value


def decode_value(raw: object, depth: int = 0) -> Any:
    """Turn one reported value into Python: numbers, strings, tuples, lists, dicts, ndarrays or Opaque.

    Raises
    ------
    MalformedReport
        If ``raw`` is not exactly what the harness writes.

    Examples
    --------
    >>> decode_value({"t": "tuple", "n": 2, "items": [{"t": "int", "v": 2}, {"t": "float", "v": "nan"}]})
    (2, nan)
    >>> decode_value({"t": "ndarray", "dtype": "int64", "shape": [1, 2], "data": [3, 2]})
    array([[3, 2]])
    >>> decode_value({"t": "ndarray", "dtype": "float32", "shape": [1], "data": [0.5]}).dtype
    dtype('float32')
    >>> decode_value({"t": "int", "v": "3"})
    Traceback (most recent call last):
    ...
    qkv.grading.values.MalformedReport: '3' is not a whole number
    """
    if depth > MAX_DEPTH or not isinstance(raw, dict) or not isinstance(raw.get("t"), str):
        raise MalformedReport("a value is not described the way the harness describes values")
    kind = raw["t"]
    if kind == "none":
        return None
    if kind == "bool":
        if not isinstance(raw.get("v"), bool):
            raise MalformedReport(f"{raw.get('v')!r} is not a boolean")
        return raw["v"]
    if kind == "int":
        value = raw.get("v")
        if not isinstance(value, int) or isinstance(value, bool) or abs(value) >= 10**15:
            raise MalformedReport(f"{value!r} is not a whole number")
        return value
    if kind == "float":
        return _number(raw.get("v"))
    if kind == "str":
        return _text(raw.get("v"))
    if kind in ("tuple", "list", "dict"):
        items, count = raw.get("items"), raw.get("n")
        if not isinstance(items, list) or not isinstance(count, int) or count < len(items):
            raise MalformedReport(f"a {kind} is not described the way the harness describes one")
        if count > len(items):
            return Opaque(kind, f"a {kind} of {count} items")
        if kind == "dict":
            return _decode_dict(items, depth)
        decoded = [decode_value(item, depth + 1) for item in items]
        return tuple(decoded) if kind == "tuple" else decoded
    if kind == "ndarray":
        return _decode_array(raw)
    if kind == "object":
        shape = raw.get("shape")
        return Opaque(
            _text(raw.get("type")),
            _text(raw.get("repr")),
            tuple(_int_list(shape)) if shape is not None else None,
        )
    raise MalformedReport(f"{kind!r} is not a kind of value the harness reports")


def _decode_dict(items: list[Any], depth: int) -> Any:
    pairs = []
    for pair in items:
        if not isinstance(pair, list) or len(pair) != 2:
            raise MalformedReport("a dict entry is not a [key, value] pair")
        pairs.append((decode_value(pair[0], depth + 1), decode_value(pair[1], depth + 1)))
    try:
        return dict(pairs)
    except TypeError:
        return Opaque("dict", "a dict with keys the grader cannot compare")


def _decode_array(raw: dict[str, Any]) -> np.ndarray[Any, Any]:
    dtype, shape, data = raw.get("dtype"), _int_list(raw.get("shape")), raw.get("data")
    if dtype not in NUMERIC_DTYPES or len(shape) > 8 or any(n < 0 for n in shape):
        raise MalformedReport(f"an array has the dtype {dtype!r} or shape {shape!r}, which are not allowed")
    if not isinstance(data, list) or len(data) != math.prod(shape) or len(data) > MAX_ELEMENTS:
        raise MalformedReport("an array's data does not match its shape")
    if dtype.startswith("float"):
        # The dtype the learner's array had is kept: a comparator may check it (Close(dtype=...)).
        with np.errstate(over="ignore"):  # a forged float32 array may hold a float64-sized number
            values = np.array([_number(x) for x in data], dtype=np.float64).astype(dtype)
    elif dtype == "bool":
        if not all(isinstance(x, int) and x in (0, 1) for x in data):
            raise MalformedReport("a boolean array holds something other than 0 and 1")
        values = np.array(data, dtype=np.bool_)
    elif not all(isinstance(x, int) and not isinstance(x, bool) for x in data):
        raise MalformedReport("an integer array holds something other than whole numbers")
    else:
        try:
            values = np.array(data, dtype=dtype)
        except OverflowError:
            raise MalformedReport(f"an integer array holds a number too large for {dtype}") from None
    try:
        return values.reshape(shape)
    except ValueError:  # a shape such as (0, 2**63) that no NumPy array has, so the harness never sent it
        raise MalformedReport(f"an array has the shape {shape!r}, which no array can have") from None
