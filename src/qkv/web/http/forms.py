"""Reading an HTML form's body (urlencoded), refusing every bad one with a sentence.

The instructor's sign-in and sign-out pages post small forms. Anything else sent to them (too many
fields, bytes that are not UTF-8, a broken percent-escape, a control character, a multipart or JSON
body) is the client's mistake: it gets a 4xx naming the problem, never a 500 or a logged traceback.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import HTTPException

__all__ = ["FORM_TYPE", "form_body_schema", "parse_form"]

FORM_TYPE = "application/x-www-form-urlencoded"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Tab, CR and LF are text a person might type; the other C0 controls and DEL are not.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def parse_form(body: bytes, content_type: str, *, max_fields: int, max_bytes: int) -> dict[str, str]:
    """The fields of an urlencoded form body (the first value of each name), or an HTTP 4xx with a sentence.

    Parameters
    ----------
    body : bytes
        The request body; an empty one is an empty form, whatever its type.
    content_type : str
        The request's ``Content-Type`` header ("" when there is none).
    max_fields, max_bytes : int
        The most fields and bytes this form may have.

    Raises
    ------
    fastapi.HTTPException
        413 for a body over ``max_bytes``; 415 for another content type or charset; 400 for too many
        fields, a body or a field that is not UTF-8, a bad percent-escape or a control character.

    Examples
    --------
    >>> parse_form(b"token=a%2Bb+c&x=1&x=2", FORM_TYPE, max_fields=8, max_bytes=4096)
    {'token': 'a+b c', 'x': '1'}
    >>> from fastapi import HTTPException
    >>> for body, kind in [(b"a=%zz", FORM_TYPE), (b'{"token": "x"}', "application/json")]:
    ...     try:
    ...         parse_form(body, kind, max_fields=8, max_bytes=4096)
    ...     except HTTPException as refused:
    ...         print(refused.status_code, refused.detail)
    400 The form field 'a' has a bad percent-escape ('%zz'); a % must be followed by two hex digits.
    415 This form takes application/x-www-form-urlencoded (what an HTML form sends), not 'application/json'.
    """
    if not body:
        return {}
    if len(body) > max_bytes:
        raise HTTPException(413, f"The form is {len(body):,} bytes; at most {max_bytes:,} are accepted.")
    _check_type(content_type)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise HTTPException(
            400, f"The form is not valid UTF-8 (byte 0x{body[error.start]:02x} at position {error.start})."
        ) from None
    pairs = [pair for pair in text.split("&") if pair]
    if len(pairs) > max_fields:
        raise HTTPException(400, f"The form has {len(pairs)} fields; this one takes at most {max_fields}.")
    fields: dict[str, str] = {}
    for pair in pairs:
        raw_name, _, raw_value = pair.partition("=")
        name = _decode(raw_name, raw_name)
        fields.setdefault(name, _decode(raw_value, name))
    return fields


def _check_type(content_type: str) -> None:
    media, _, parameters = content_type.partition(";")
    media = media.strip().lower()
    if media != FORM_TYPE:
        shown = media or "no Content-Type"
        extra = "; it takes no files" if media.startswith("multipart/") else ""
        raise HTTPException(
            415, f"This form takes {FORM_TYPE} (what an HTML form sends), not {shown!r}{extra}."
        )
    for parameter in parameters.split(";"):
        key, _, value = parameter.partition("=")
        charset = value.strip().strip('"').lower()
        if key.strip().lower() == "charset" and charset not in {"utf-8", "utf8"}:
            raise HTTPException(415, f"This form is read as UTF-8, not as the charset {charset!r}.")


def _decode(raw: str, name: str) -> str:
    bad = _BAD_ESCAPE.search(raw)
    shown = name[:40]
    if bad:
        escape = raw[bad.start() : bad.start() + 3]
        raise HTTPException(
            400,
            f"The form field {shown!r} has a bad percent-escape ({escape!r}); a % must be followed by "
            "two hex digits.",
        )
    try:
        text = unquote_to_bytes(raw.replace("+", " ")).decode("utf-8")
    except UnicodeDecodeError as error:
        raise HTTPException(
            400,
            f"The form field {shown!r} decodes to bytes that are not UTF-8 "
            f"(byte 0x{error.object[error.start]:02x}); percent-escapes must spell UTF-8.",
        ) from None
    control = _CONTROL.search(text)
    if control:
        raise HTTPException(
            400,
            f"The form field {shown!r} holds the control character U+{ord(control.group()):04X}, "
            "which no form field here takes.",
        )
    return text


def form_body_schema(**fields: str) -> dict[str, Any]:
    """An OpenAPI ``requestBody`` for a form with these string fields (name: description).

    For ``openapi_extra``: the routes read their form with ``parse_form``, so FastAPI does not know it;
    the schema lets the API fuzz test send them forms.

    Examples
    --------
    >>> form_body_schema(token="The link's token.")["requestBody"]["content"].keys()
    dict_keys(['application/x-www-form-urlencoded'])
    """
    properties = {name: {"type": "string", "description": text} for name, text in fields.items()}
    schema = {"type": "object", "properties": properties}
    return {"requestBody": {"required": False, "content": {FORM_TYPE: {"schema": schema}}}}
