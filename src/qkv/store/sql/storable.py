"""Text both databases can store as it is."""

from __future__ import annotations


def check_storable(text: str, what: str) -> str:
    r"""``text`` if both databases can store it as it is; otherwise a ValueError naming the character.

    PostgreSQL refuses NUL in text and no UTF-8 encoder takes a lone surrogate, so neither is ever
    stored (the web app already refuses both in request bodies; this holds for every other caller).

    Examples
    --------
    >>> check_storable("3, 2", "The answer")
    '3, 2'
    >>> check_storable("a\x00b", "The answer")
    Traceback (most recent call last):
    ...
    ValueError: The answer contains a NUL character (\x00), which cannot be stored.
    """
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character (\\x00), which cannot be stored.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} contains a lone surrogate (\\u{ord(text[error.start]):04x}), which cannot be stored."
        ) from None
    return text


__all__ = ["check_storable"]
