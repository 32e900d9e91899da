"""A launch or login that qkv refuses: the status and the sentence a teacher can act on."""

from __future__ import annotations


class LaunchRefused(Exception):
    """Raised with a 4xx status and a sentence; the routes turn it into the error page (no traceback).

    Examples
    --------
    >>> refused = LaunchRefused(403, "The issuer 'x' is not registered.")
    >>> refused.status, str(refused)
    (403, "The issuer 'x' is not registered.")
    """

    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
