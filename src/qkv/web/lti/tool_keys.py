"""The tool's own key: made once and kept in the database, published at ``/lti/jwks.json``, and used to
sign the client assertions that get service tokens from an LMS."""

from __future__ import annotations

import secrets
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from qkv.store.lti.keys import StoredKey, tool_key
from qkv.store.sql.database import Database

KEY_BITS = 2048
ASSERTION_LIFETIME_S = 300


def make_key() -> StoredKey:
    """A new RSA key with a random key id.

    Examples
    --------
    >>> key = make_key()
    >>> key.private_pem.startswith("-----BEGIN PRIVATE KEY-----"), len(key.kid)
    (True, 22)
    """
    private = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return StoredKey(secrets.token_urlsafe(16), pem.decode("ascii"))


class ToolKey:
    """The tool's key pair, read from (or first stored in) the database.

    Parameters
    ----------
    database : qkv.store.Database
        The database every server shares.

    Examples
    --------
    >>> key = ToolKey(Database("sqlite://"))
    >>> [entry["alg"] for entry in key.jwks()["keys"]]
    ['RS256']
    """

    def __init__(self, database: Database) -> None:
        stored = tool_key(database, make_key)
        self.kid = stored.kid
        private = serialization.load_pem_private_key(stored.private_pem.encode("ascii"), password=None)
        if not isinstance(private, rsa.RSAPrivateKey):
            raise TypeError(f"The stored LTI tool key {stored.kid!r} is not an RSA key.")
        self._private = private

    def jwks(self) -> dict[str, Any]:
        """The public key as a JSON Web Key Set."""
        public = RSAAlgorithm.to_jwk(self._private.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    def client_assertion(self, client_id: str, token_url: str) -> str:
        """A signed JWT that proves to the LMS's token endpoint that this tool is ``client_id``."""
        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": token_url,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_S,
            "jti": secrets.token_urlsafe(16),
        }
        return jwt.encode(claims, self._private, algorithm="RS256", headers={"kid": self.kid})

    def sign(self, claims: dict[str, Any]) -> str:
        """``claims`` as a JWT signed with the tool's key (RS256, with its key id).

        Examples
        --------
        >>> key = ToolKey(Database("sqlite://"))
        >>> key.verify(key.sign({"aud": "me", "x": 1}), "me")["x"]
        1
        """
        return jwt.encode(claims, self._private, algorithm="RS256", headers={"kid": self.kid})

    def verify(self, token: str, audience: str) -> dict[str, Any]:
        """The claims of a JWT this tool signed for ``audience``; ``jwt.PyJWTError`` for any other."""
        claims: dict[str, Any] = jwt.decode(
            token, self._private.public_key(), algorithms=["RS256"], audience=audience
        )
        return claims
