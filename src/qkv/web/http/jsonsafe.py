"""JSON responses that stay valid JSON: NaN and ±inf become null instead of breaking the document."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fastapi.responses import JSONResponse


def finite_or_none(value: Any) -> Any:
    """Copy ``value`` into plain JSON types, with every non-finite float replaced by None.

    Parameters
    ----------
    value : Any
        Dicts, lists, tuples, NumPy arrays and scalars, strings, numbers, bools and None.

    Returns
    -------
    Any
        The same structure made of dict, list, str, int, float, bool and None only.

    Examples
    --------
    >>> finite_or_none({"w": [0.5, float("nan")], "o": np.array([1.0, -np.inf])})
    {'w': [0.5, None], 'o': [1.0, None]}
    """
    if isinstance(value, bool | str | int) or value is None:
        return value
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    if isinstance(value, np.ndarray):
        return finite_or_none(value.tolist())
    if isinstance(value, Mapping):
        return {str(key): finite_or_none(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(item) for item in value]
    return str(value)


class SafeJSONResponse(JSONResponse):
    """The app's JSON response: compact UTF-8, never NaN or Infinity."""

    def render(self, content: Any) -> bytes:
        """Encode ``content`` after replacing non-finite numbers with null."""
        try:
            # Most documents are plain JSON types and finite: the encoder alone checks that, in C.
            return _encode(content)
        except (TypeError, ValueError):  # a NumPy value or another type, or a NaN or infinity somewhere
            return _encode(finite_or_none(content))


def _encode(content: Any) -> bytes:
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
