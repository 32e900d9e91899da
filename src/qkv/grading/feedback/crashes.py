"""A crash in the learner's code, named by what the failing expression does.

The harness reports where an exception arose in the learner's file (the line and the columns of the
failing expression, from Python's own positions) and what each local name of that frame held (an array's
shape and dtype, or a type's name). Here the learner's line is parsed, the failing expression found on
it, and its operation named: a matrix product (``@``, ``np.matmul``, ``np.dot``), an elementwise
operator, an index, a call of a NumPy function or method, an attribute. With the operands' shapes where
they are names of that frame (or a name's ``.T``), the sentence says what did not fit and the usual fix
for that kind of exception on that kind of operation. Nothing here knows a lesson.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qkv.grading.feedback.support import parsed

__all__ = ["Place", "crash_sentence"]

MAX_QUOTED = 60  # characters of the learner's expression quoted


@dataclass(frozen=True)
class Place:
    """Where the exception arose: the learner's line, the failing expression's columns on it (from 0),
    and the local names of the frame (``{"shape": [...], "dtype": ...}`` or ``{"type": ...}``)."""

    line: int
    column: int
    end_column: int
    names: Mapping[str, Mapping[str, Any]]


def _expression(source: str, place: Place) -> ast.AST | None:
    """The failing expression: the node spanning exactly those columns, else the smallest that holds them."""
    tree = parsed(source)  # once per grading, however many tests crash
    if tree is None:
        return None
    best: ast.AST | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or getattr(node, "lineno", None) != place.line:
            continue
        if node.end_lineno != place.line or node.end_col_offset is None:
            continue
        holds = node.col_offset <= place.column and place.end_column <= node.end_col_offset
        if holds and (best is None or _width(node) < _width(best)):
            best = node
    return best


def _width(node: ast.AST) -> int:
    return int(getattr(node, "end_col_offset", 0) or 0) - int(getattr(node, "col_offset", 0) or 0)


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"


def _shape(node: ast.AST, names: Mapping[str, Mapping[str, Any]]) -> tuple[int, ...] | None:
    """The shape of an operand that is a name of the frame, or a name's ``.T``; None otherwise."""
    if isinstance(node, ast.Name):
        held = names.get(node.id, {})
        shape = held.get("shape")
        return tuple(shape) if isinstance(shape, list) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert | ast.USub | ast.Not):
        return _shape(node.operand, names)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        inner = _shape(node.value, names)
        return None if inner is None else tuple(reversed(inner))
    return None


def _type(node: ast.AST, names: Mapping[str, Mapping[str, Any]]) -> str | None:
    if isinstance(node, ast.Name):
        held = names.get(node.id, {})
        if "shape" in held:
            return f"an array of shape {_shown(tuple(held['shape']))}, dtype {held.get('dtype')}"
        kind = held.get("type")
        return f"a {kind}" if isinstance(kind, str) else None
    return None


def _shown(shape: tuple[int, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(str(size) for size in shape)})"


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        if owner in ("np", "numpy"):
            return f"np.{func.attr}"
        return f"{owner}.{func.attr}" if owner == "math" else f".{func.attr}"
    return func.id if isinstance(func, ast.Name) else None


def _matmul(left: ast.AST, right: ast.AST, names: Mapping[str, Mapping[str, Any]], how: str) -> str:
    a, b = _shape(left, names), _shape(right, names)
    said = f"{how} {_text(left)} by {_text(right)}"
    if a is None or b is None or not a or not b:
        return (
            f"{said}: the last size of the left operand must equal the second-to-last of the right. The "
            "usual fix: one operand needs a transpose (.T), or the two are in the wrong order."
        )
    inner_b = b[-2] if len(b) > 1 else b[0]
    said = (
        f"{said}, shapes {_shown(a)} and {_shown(b)}: the inner sizes must agree, and here {a[-1]} "
        f"meets {inner_b}"
    )
    left_text, right_text = _text(left), _text(right)
    fits = []
    if len(b) > 1 and a[-1] == b[-1]:
        fits.append(f"{left_text} @ {_transposed(right)}")
    if len(a) > 1 and a[-2] == inner_b:
        fits.append(f"{_transposed(left)} @ {right_text}")
    if len(a) > 1 and len(b) > 1 and b[-1] == a[-2]:
        fits.append(f"{right_text} @ {left_text}")
    if not fits:
        return f"{said}. The usual fix: check which sizes each operand should have; a size is mixed up."
    return (
        f"{said}. The usual fix: one operand probably needs a transpose, or the order is swapped: "
        f"{' or '.join(fits)} would fit."
    )


def _transposed(node: ast.AST) -> str:
    """An operand written transposed: ``K.T`` for ``K``, ``A`` for ``A.T``."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return _text(node.value)
    text = _text(node)
    return (
        f"{text}.T"
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call)
        else f"({text}).T"
    )


def _elementwise(node: ast.BinOp, names: Mapping[str, Mapping[str, Any]], exception: str) -> str:
    symbol = _SYMBOLS.get(type(node.op).__name__, "an operator")
    a, b = _shape(node.left, names), _shape(node.right, names)
    said = f"{_text(node)} combines its operands element by element ({symbol})"
    if exception == "ZeroDivisionError":
        return f"{said}, and its right operand is 0. The usual fix: guard the division, or divide arrays."
    if a is None or b is None:
        return (
            f"{said}, and their shapes do not line up from the last axis. The usual fix: keep a reduced axis "
            "(keepdims=True), add one with [:, None], or transpose an operand."
        )
    if isinstance(node.op, ast.Mult) and len(a) == len(b) == 2 and a[-1] == b[0]:
        fix = f"a matrix product, if one was meant: {_text(node.left)} @ {_text(node.right)} fits"
    elif tuple(reversed(a)) == b:
        fix = "transpose an operand"
    else:
        fix = "keep the reduced axis (keepdims=True) or add one with [:, None]"
    return (
        f"{said}, shapes {_shown(a)} and {_shown(b)}: shapes are matched from the last axis, each pair of "
        f"sizes equal or 1. The usual fix: {fix}."
    )


_SYMBOLS = {
    "Add": "+",
    "Sub": "-",
    "Mult": "*",
    "Div": "/",
    "FloorDiv": "//",
    "Mod": "%",
    "Pow": "**",
    "MatMult": "@",
}


def _not_numbers(node: ast.BinOp, names: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether an operand is a name that holds neither an array nor a number (None, a string …)."""
    held = [names.get(side.id, {}) for side in (node.left, node.right) if isinstance(side, ast.Name)]
    return any(h.get("type") not in (None, "int", "float", "bool", "complex") for h in held)


def _operand_types(node: ast.BinOp, names: Mapping[str, Mapping[str, Any]]) -> str:
    """An operator given operands it cannot combine (None, a list, a string)."""
    symbol = _SYMBOLS.get(type(node.op).__name__, "an operator")
    kinds = [(_text(side), _type(side, names)) for side in (node.left, node.right)]
    held = "; ".join(f"{text} is {kind}" for text, kind in kinds if kind)
    return (
        f"{_text(node)} applies {symbol} to operands it cannot combine"
        + (f": {held}" if held else "")
        + ". The usual fix: an operand is not an array of numbers (None from a function without a return, "
        "a list, a string): make it one, for example with np.asarray, or return the value."
    )


def _index(node: ast.Subscript, names: Mapping[str, Mapping[str, Any]], exception: str, message: str) -> str:
    shape = _shape(node.value, names)
    held = f", an array of shape {_shown(shape)}" if shape is not None else ""
    said = f"{_text(node)} indexes {_text(node.value)}{held}"
    if exception == "KeyError":
        return (
            f"{said}, and it has no such key. The usual fix: the key's exact spelling, as the caller has it."
        )
    if exception == "TypeError":
        kind = _type(node.value, names)
        what = f": {_text(node.value)} is {kind}" if kind else ""
        return f"{said}{what}. The usual fix: index an array (or a list, with whole numbers), not None."
    if "boolean" in message:
        mask = _shape(node.slice, names)
        shown = f" {_text(node.slice)} has shape {_shown(mask)}." if mask is not None else ""
        return (
            f"{_text(node)} picks entries of {_text(node.value)}{held} with a boolean mask, whose shape must "
            f"be the array's.{shown} The usual fix: broadcast the mask to the array's shape first "
            "(np.broadcast_to), or use np.where(mask, x, fill)."
        )
    if shape is not None:
        sizes = ", ".join(f"axis {axis} from 0 to {size - 1}" for axis, size in enumerate(shape))
        return (
            f"{said}: its indices run {sizes}. The usual fix: an index one past the end, or a size mixed up."
        )
    return f"{said}, out of its range. The usual fix: indices count from 0 to the size − 1."


def _call(node: ast.Call, names: Mapping[str, Mapping[str, Any]], exception: str, message: str) -> str:
    name = _call_name(node) or "the call"
    shapes = [(arg, _shape(arg, names)) for arg in node.args]
    if isinstance(node.func, ast.Attribute) and name.startswith("."):
        shapes.insert(0, (node.func.value, _shape(node.func.value, names)))
    known = [f"{_text(arg)} {_shown(shape)}" for arg, shape in shapes if shape is not None]
    said = f"{_text(node)} calls {name}" + (f" on {', '.join(known)}" if known else "")
    if name.split(".")[-1] in ("matmul", "dot") and len(node.args) == 2:
        return _matmul(node.args[0], node.args[1], names, f"{name} multiplies")
    if name.startswith("math.") and (exception == "TypeError" or any(shape for _, shape in shapes)):
        return (
            f"{said}: {name} takes one Python number, not an array. The usual fix: np.{name[5:]}, which "
            "works entry by entry on an array."
        )
    if exception == "OverflowError":
        return (
            f"{said}, and the result is too large for a float (e^710 already is). The usual fix: subtract "
            "the largest value first (the maximum of each row), so that no exponent is large."
        )
    if "axis" in message and exception in ("ValueError", "IndexError"):
        ndims = [len(shape) for _, shape in shapes if shape is not None]
        axes = f" (the array has {ndims[0]} ax{'is' if ndims[0] == 1 else 'es'})" if ndims else ""
        return (
            f"{said}, with an axis it does not have{axes}. The usual fix: axis=-1 for the last axis, "
            "whatever the array's number of axes."
        )
    if exception == "TypeError" and "integer" in message:
        return (
            f"{said}, and one of its sizes or indices is not a whole number. The usual fix: // where / "
            "gives a float (d_model // h), or int(...) around a size."
        )
    if "reshape" in message or name.endswith("reshape"):
        return (
            f"{said}: a reshape keeps the number of entries, so the new sizes must multiply to the same "
            "count. The usual fix: the sizes of the new shape, or -1 for one of them."
        )
    if exception == "TypeError":
        return (
            f"{said} with arguments of a kind or number it does not take. The usual fix: the arguments' "
            "order, their count, and which are keywords (axis=…, keepdims=…)."
        )
    if exception == "AttributeError":
        return _attribute(node.func, names) if isinstance(node.func, ast.Attribute) else f"{said}."
    return f"{said}, and it refused its arguments. The usual fix: the shapes and sizes it is given."


def _attribute(node: ast.AST, names: Mapping[str, Mapping[str, Any]]) -> str:
    assert isinstance(node, ast.Attribute)
    kind = _type(node.value, names)
    held = f" {_text(node.value)} is {kind}, which has none." if kind else ""
    return (
        f"{_text(node)} reads the attribute {node.attr} of {_text(node.value)}.{held} The usual fix: a value "
        "of another type than intended (None from a function without a return, a list where an array "
        "belongs: np.asarray), or the attribute's spelling."
    )


def _operation(
    node: ast.AST, names: Mapping[str, Mapping[str, Any]], exception: str, message: str
) -> str | None:
    if isinstance(node, ast.BinOp) and (exception == "TypeError" or _not_numbers(node, names)):
        return _operand_types(node, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return _matmul(node.left, node.right, names, "@ multiplies")
    if isinstance(node, ast.BinOp):
        return _elementwise(node, names, exception)
    if isinstance(node, ast.Subscript):
        return _index(node, names, exception, message)
    if isinstance(node, ast.Call):
        return _call(node, names, exception, message)
    if isinstance(node, ast.Attribute) and exception == "AttributeError":
        return _attribute(node, names)
    if isinstance(node, ast.Name) and exception == "NameError":
        return (
            f"{node.id} is read, but nothing of that name is defined there. The usual fix: its spelling, "
            "or assign it before this line."
        )
    return None


def crash_sentence(source: str, place: Place, exception: str, message: str) -> str | None:
    """What the failing expression of the learner's line does, what did not fit, and the usual fix; None
    where the line's expression cannot be found or its operation is none of those named.

    Parameters
    ----------
    source : str
        The learner's file.
    place : Place
        Where the exception arose, and the frame's names.
    exception : str
        The nearest built-in class of the exception (``ValueError`` for NumPy's ``AxisError``).
    message : str
        Its message.

    Examples
    --------
    >>> source = "def f(Q, K):\\n    return Q @ K\\n"
    >>> names = {"Q": {"shape": [4, 3], "dtype": "float64"}, "K": {"shape": [4, 3], "dtype": "float64"}}
    >>> print(crash_sentence(source, Place(2, 11, 16, names), "ValueError", "matmul: mismatch"))
    Line 2, column 12: @ multiplies Q by K, shapes (4, 3) and (4, 3): the inner sizes must agree, and \
here 3 meets 4. The usual fix: one operand probably needs a transpose, or the order is swapped: Q @ K.T \
or Q.T @ K would fit.
    """
    node = _expression(source, place)
    if node is None:
        return None
    said = _operation(node, place.names, exception, message)
    if said is None:
        return None
    return f"Line {place.line}, column {place.column + 1}: {said}"
