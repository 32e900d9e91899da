"""The base of every JSON request body the API accepts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["StrictBody"]


class StrictBody(BaseModel):
    """A JSON body whose unknown fields are refused (422 naming the field), not silently dropped.

    Examples
    --------
    >>> class Answer(StrictBody):
    ...     answer: str
    >>> Answer(answer="3").answer
    '3'
    >>> Answer(answer="3", extra=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Answer
    ...
    """

    model_config = ConfigDict(extra="forbid")
