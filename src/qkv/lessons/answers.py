"""Reading typed answers: vectors and scalars of numbers, and single letters.

Learners type answers in many shapes (``[3, 2]``, ``3, 2``, ``3 2``, ``(3,2)``, ``1/2``, a Unicode
minus pasted from the page). Everything here is linear in the input, and long inputs are refused
before any work is done, so a 10 000-character paste costs nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The page's way of writing numbers lives with grading's display, where chapter code (a widget's
# fallback HTML) may use it too; it is re-exported here for the engine.
from qkv.grading.display import format_number, format_value

__all__ = [
    "MAX_ANSWER_CHARS",
    "AnswerFormatError",
    "TypedNumber",
    "decimal_comma_message",
    "example_vector",
    "format_number",
    "format_value",
    "parse_letter",
    "parse_numbers",
    "parse_typed_numbers",
]

MAX_ANSWER_CHARS = 200

# Dashes people paste instead of '-': Unicode minus, en dash, hyphen, small/full-width hyphen-minus.
_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2010": "-", "\ufe63": "-", "\uff0d": "-"})
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_LEADING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=")
_SEPARATORS = re.compile(r"[\s,;]+")
# One number written with thousands separators (1,048,576): read as one number where one is asked for.
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
# A comma between two digits, as many languages write a decimal point (0,5).
_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d)")
# Two numbers that agree to this relative precision are the same number written twice (float noise).
_SAME = 1e-12


class AnswerFormatError(ValueError):
    """An answer could not be read; the message says what was typed and how to type it."""


def _shown(text: str, limit: int = 24) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _check_length(text: str) -> None:
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerFormatError(
            f"Your answer is {len(text):,} characters long, but an answer here is at most "
            f"{MAX_ANSWER_CHARS} characters; type just the numbers, for example [0.5, -1]."
        )


@dataclass(frozen=True)
class TypedNumber:
    """A number as the learner typed it, with how precisely they typed it.

    ``half_unit`` is half of the last digit typed (0.005 for ``0.71``, 0.5 for ``44672``, 0 for a
    fraction such as ``1/3``, which is exact): any value that rounds to what was typed lies within it.
    """

    value: float
    half_unit: float

    def agrees_with(self, value: float) -> bool:
        """Whether ``value`` rounds to what was typed, and what was typed has at least two significant
        digits of ``value`` (so ``0.71`` and ``0.20`` agree with 0.707107 and 0.19557, but ``0.7``
        not with 0.707107 and ``1`` not with 0.7: one digit says too little to name a mistake by).

        Examples
        --------
        >>> TypedNumber(0.71, 0.005).agrees_with(0.707107), TypedNumber(0.2, 0.005).agrees_with(0.19557)
        (True, True)
        >>> TypedNumber(0.7, 0.05).agrees_with(0.707107), TypedNumber(1.0, 0.5).agrees_with(0.7)
        (False, False)
        """
        close = self.rounds_from(value)
        return close and (self.value == value or self.half_unit <= 0.05 * abs(value))

    def rounds_from(self, value: float) -> bool:
        """Whether ``value`` rounded to the digits typed gives what was typed.

        Examples
        --------
        >>> TypedNumber(0.2, 0.05).rounds_from(0.19557), TypedNumber(0.2, 0.05).rounds_from(0.26)
        (True, False)
        """
        return abs(self.value - value) <= self.half_unit * (1 + 1e-9) + _SAME * max(1.0, abs(value))

    def is_exactly(self, value: float) -> bool:
        """Whether ``value`` has no more decimals than were typed, and they are the ones typed
        (``0.2`` is exactly 0.2, and ``0`` exactly 0; float noise in the last bit does not count).

        Examples
        --------
        >>> TypedNumber(0.2, 0.05).is_exactly(0.1 + 0.1), TypedNumber(0.2, 0.05).is_exactly(0.19557)
        (True, False)
        """
        return abs(self.value - value) <= _SAME * max(1.0, abs(value))


def _half_unit(token: str) -> float:
    if "/" in token:
        return 0.0
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def _parse_number(token: str) -> float:
    parts = token.split("/")
    if token.lstrip("+-").lower() in ("nan", "inf", "infinity", "∞"):
        raise AnswerFormatError(
            f"{_shown(token)} is not an answer these boxes take: every answer here is a finite number, "
            "such as 0, -1.5 or 1/2."
        )
    if len(parts) > 2 or not all(_NUMBER.fullmatch(part) for part in parts):
        raise AnswerFormatError(
            f"I could not read {_shown(token)} as a number; type numbers such as 3, -1.5 or 1/2."
        )
    value = float(parts[0])
    if len(parts) == 2:
        denominator = float(parts[1])
        if denominator == 0:
            raise AnswerFormatError(f"The fraction {_shown(token)} divides by zero.")
        value /= denominator
    if not math.isfinite(value):
        raise AnswerFormatError(f"The number {_shown(token)} is too large to be an answer here.")
    return value


def parse_numbers(text: str) -> list[float]:
    """Read a vector (or a single number) typed by a learner.

    The same as ``parse_typed_numbers`` without the precision of each number.

    Brackets and parentheses anywhere are ignored, numbers are separated by commas, semicolons or
    spaces, a leading ``name =`` is dropped, and Unicode minus signs count as ``-``.

    Parameters
    ----------
    text : str
        The raw answer.

    Returns
    -------
    list of float
        The numbers in the order typed.

    Raises
    ------
    AnswerFormatError
        If the answer is empty, longer than ``MAX_ANSWER_CHARS``, or holds something that is not
        a number; the message quotes it.

    Examples
    --------
    >>> parse_numbers("[3, 2]"), parse_numbers(" 3 2 "), parse_numbers("(3,2)")
    ([3.0, 2.0], [3.0, 2.0], [3.0, 2.0])
    >>> parse_numbers("q = [[1/2, \u22124]]")
    [0.5, -4.0]
    >>> parse_numbers("[3, two]")
    Traceback (most recent call last):
    ...
    qkv.lessons.answers.AnswerFormatError: I could not read 'two' as a number; type numbers such as 3, ...
    """
    return [number.value for number in parse_typed_numbers(text)]


def parse_typed_numbers(text: str, single: bool = False) -> list[TypedNumber]:
    """Read a vector (or a single number) typed by a learner, with the precision of each number.

    Parameters
    ----------
    text : str
        The raw answer (see ``parse_numbers`` for what is accepted).
    single : bool
        One number is asked for: a number written with thousands separators (``1,048,576``) is then
        read as that number rather than as three.

    Returns
    -------
    list of TypedNumber

    Raises
    ------
    AnswerFormatError
        As ``parse_numbers``.

    Examples
    --------
    >>> [(n.value, n.half_unit) for n in parse_typed_numbers("[0.71, 2, 1/3, 1.5e3]")]
    [(0.71, 0.005), (2.0, 0.5), (0.3333333333333333, 0.0), (1500.0, 50.0)]
    >>> parse_typed_numbers("1,048,576", single=True)[0].value
    1048576.0
    """
    _check_length(text)
    cleaned = text.translate(_MINUS_SIGNS).strip()
    name = _LEADING_NAME.match(cleaned)
    if name:
        cleaned = cleaned[name.end() :]
    for bracket in "[]()":
        cleaned = cleaned.replace(bracket, " ")
    cleaned = cleaned.strip(" \t\r\n,;")
    if not cleaned:
        raise AnswerFormatError("The answer is empty; type the numbers, for example [0.5, -1].")
    if single and _THOUSANDS.fullmatch(cleaned):
        _refuse_one_comma(cleaned)
        cleaned = cleaned.replace(",", "")
    return [TypedNumber(_parse_number(token), _half_unit(token)) for token in _SEPARATORS.split(cleaned)]


def decimal_comma_message(text: str) -> str | None:
    """The sentence for an answer that writes a decimal comma (``0,5``), or None where it has none.

    A comma between two digits separates two numbers here (``[3,2]`` is a vector), so an answer that
    meant one number with a decimal comma reads as two; the caller asks for this sentence when the
    count of numbers read is not the count asked for.

    Examples
    --------
    >>> decimal_comma_message("0,5").split(": ")[0]
    "'0,5' reads as two numbers, 0 and 5"
    >>> decimal_comma_message("[0.5, 1]") is None
    True
    """
    cleaned = text.translate(_MINUS_SIGNS)
    match = _DECIMAL_COMMA.search(cleaned)
    if match is None:
        return None
    start = cleaned.rfind(" ", 0, match.start()) + 1
    end = cleaned.find(" ", match.end())
    token = cleaned[start : len(cleaned) if end < 0 else end].strip("[](),;")
    parts = token.split(",")
    if len(parts) != 2:
        return (
            f"{_shown(token)} reads as {len(parts)} numbers: a comma separates numbers here. Write a "
            f"number without commas inside it ({''.join(parts)}), and decimals with a point (0.5)."
        )
    return (
        f"{_shown(token)} reads as two numbers, {parts[0]} and {parts[1]}: a comma separates numbers "
        f"here. Write decimals with a point, as in {parts[0]}.{parts[1]}."
    )


def _refuse_one_comma(text: str) -> None:
    """``7,500`` is 7500 with a thousands separator, or 7.5 with a decimal comma: asked to type it
    again, rather than read either way (``1,048,576`` and ``7,500.0`` have one reading only)."""
    if text.count(",") == 1 and "." not in text:
        whole, _, decimals = text.partition(",")
        raise AnswerFormatError(
            f"{_shown(text)} could be {whole}{decimals} or {whole}.{decimals}: a comma separates numbers "
            f"here. Write {whole}{decimals} without the comma, or decimals with a point, as in "
            f"{whole}.{decimals}."
        )


def parse_letter(text: str, options: Mapping[str, Sequence[str]]) -> str:
    """Read a one-letter answer such as ``V``, ``v`` or ``values``.

    Parameters
    ----------
    text : str
        The raw answer.
    options : mapping of str to sequence of str
        Each accepted letter and the words that also mean it (compared case-insensitively).

    Returns
    -------
    str
        The letter, as spelled in ``options``.

    Raises
    ------
    AnswerFormatError
        If the answer is empty, too long, or not one of the options.

    Examples
    --------
    >>> opts = {"Q": ["queries"], "K": ["keys"], "V": ["values", "value"]}
    >>> parse_letter(" values. ", opts), parse_letter("v", opts)
    ('V', 'V')
    >>> parse_letter("X", opts)
    Traceback (most recent call last):
    ...
    qkv.lessons.answers.AnswerFormatError: I could not read 'X' as one of Q, K or V; type a single letter.
    """
    _check_length(text)
    word = text.strip().strip(".!()").strip().lower()
    letters = list(options)
    choices = ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else "".join(letters)
    if not word:
        raise AnswerFormatError(f"The answer is empty; type one letter: {choices}.")
    for letter, words in options.items():
        if word == letter.lower() or word in (w.lower() for w in words):
            return letter
    raise AnswerFormatError(
        f"I could not read {_shown(text.strip())} as one of {choices}; type a single letter."
    )


def example_vector(size: int) -> str:
    """How to type a vector of ``size`` components, with letters for the numbers.

    Examples
    --------
    >>> example_vector(3), example_vector(12)
    ('[a, b, c]', '[a, b, …]')
    """
    letters = "abcdefgh"
    if size > len(letters):
        return "[a, b, …]"
    return "[" + ", ".join(letters[:size]) + "]"
