"""The sizes an LTI login request's fields may have, checked before anything is looked up or stored."""

from __future__ import annotations

from qkv.web.lti.refusal import LaunchRefused

MAX_TARGET_BYTES = 2048
# Issuers and client ids are the columns' length; the hints are opaque to qkv, passed back to the LMS.
MAX_FIELD_CHARS = {
    "iss": 255,
    "client_id": 255,
    "lti_deployment_id": 255,
    "login_hint": 2048,
    "lti_message_hint": 4096,
}


def check_login_params(params: dict[str, str]) -> None:
    """Refuse a login whose ``target_link_uri`` is over 2 KiB, or another field over its size.

    Parameters
    ----------
    params : dict of str to str
        The login request's query or form fields.

    Raises
    ------
    LaunchRefused
        400 with a sentence naming the field and its size.

    Examples
    --------
    >>> check_login_params({"iss": "https://lms.example", "target_link_uri": "https://qkv.example/"})
    >>> try:
    ...     check_login_params({"target_link_uri": "https://qkv.example/?" + "a" * 3000})
    ... except LaunchRefused as refused:
    ...     print(refused.status, refused)
    400 The login's target_link_uri is 3,021 bytes; qkv accepts at most 2,048 bytes (2 KiB).
    """
    target = params.get("target_link_uri", "")
    size = len(target.encode("utf-8", "replace"))
    if size > MAX_TARGET_BYTES:
        raise LaunchRefused(
            400,
            f"The login's target_link_uri is {size:,} bytes; qkv accepts at most {MAX_TARGET_BYTES:,} bytes "
            f"({MAX_TARGET_BYTES // 1024} KiB).",
        )
    for name, limit in MAX_FIELD_CHARS.items():
        value = params.get(name, "")
        if len(value) > limit:
            raise LaunchRefused(
                400, f"The login's {name} has {len(value):,} characters; qkv accepts at most {limit:,}."
            )
