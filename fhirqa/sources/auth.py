"""Credentials for FHIR servers: a static bearer token, or SMART Backend Services.

SMART Backend Services (the ``client_credentials`` grant with a signed JWT assertion) is how a
system, not a person, gets an access token: we sign a short-lived JWT with the client's private key,
the server checks it with the public key registered for the client id, and answers with a token.
The access token is cached until shortly before it expires and fetched again once when the FHIR
server says 401. Secrets never reach a log or an error message.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import httpx
import jwt
import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from fhirqa.errors import SourceError
from fhirqa.sources.http import looks_like_html, outcome_text, redact_url

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: SMART caps the assertion's lifetime at five minutes; stay under it so clock skew cannot push us over.
ASSERTION_LIFETIME = 240
#: Renew this many seconds before the token's stated expiry, so a request never carries a dying token.
EXPIRY_MARGIN = 60


class Auth(Protocol):
    """What the HTTP layer needs from a credential."""

    def headers(self, client: httpx.Client) -> dict[str, str]:
        """Headers to add to a request (``Authorization``), fetching a token with ``client`` if needed."""
        ...

    def refresh(self) -> bool:
        """Forget the current token after a 401; True if retrying with a new one can help."""
        ...


class BearerToken:
    """A fixed access token (``--token``); a 401 cannot be cured by asking again."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:  # keeps the token out of tracebacks and debug output
        return "BearerToken(***)"

    def headers(self, client: httpx.Client) -> dict[str, str]:
        """The ``Authorization: Bearer`` header."""
        return {"Authorization": f"Bearer {self._token}"}

    def refresh(self) -> bool:
        """A static token cannot be renewed."""
        return False


def load_private_key(pem: bytes | str | Path) -> rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey:
    """Read an unencrypted PEM private key (PKCS#8 or traditional), from bytes or a file path."""
    data: bytes
    if isinstance(pem, bytes):
        data = pem
    else:
        path = Path(pem)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read the SMART private key {path}: {exc.strerror}") from exc
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SourceError(f"the SMART private key is not an unencrypted PEM private key: {exc}") from exc
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise SourceError(
            f"unsupported SMART key type {type(key).__name__}: use RSA (RS384) or EC P-384 (ES384)"
        )
    return key


def signing_algorithm(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    """RS384 for RSA keys, ES384 for P-384 keys: the two algorithms SMART Backend Services requires."""
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS384"
    if isinstance(key.curve, ec.SECP384R1):
        return "ES384"
    raise SourceError(f"EC key on curve {key.curve.name}: SMART Backend Services wants P-384 (ES384)")


def key_id(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    """RFC 7638 thumbprint of the public key: the ``kid`` servers use to pick the key in a JWKS."""
    public = key.public_key()
    jwk = json.loads(
        RSAAlgorithm.to_jwk(public) if isinstance(public, rsa.RSAPublicKey) else ECAlgorithm.to_jwk(public)
    )
    members = ("e", "kty", "n") if jwk["kty"] == "RSA" else ("crv", "kty", "x", "y")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


class SmartBackendAuth:
    """SMART Backend Services: ``client_credentials`` with a ``private_key_jwt`` assertion.

    The token endpoint is discovered from ``{base_url}/.well-known/smart-configuration`` unless
    ``token_url`` is given.
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        private_key: bytes | str | Path,
        *,
        scope: str = "system/*.read",
        token_url: str | None = None,
        kid: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.client_id = client_id
        self._key = load_private_key(private_key)
        self.algorithm = signing_algorithm(self._key)
        self.kid = kid or key_id(self._key)
        self.scope = scope
        self.token_url = token_url
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0
        self.token_requests = 0  # how many tokens were fetched: lets callers (and tests) see the caching

    def __repr__(self) -> str:
        return f"SmartBackendAuth(client_id={self.client_id!r}, token_url={self.token_url!r})"

    def discover(self, client: httpx.Client) -> str:
        """The token endpoint from the server's SMART configuration."""
        url = f"{self.base_url}/.well-known/smart-configuration"
        try:
            response = client.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise SourceError(f"SMART discovery {url} failed: {type(exc).__name__}: {exc}") from exc
        if response.status_code != 200 or looks_like_html(response):
            raise SourceError(
                f"SMART discovery {url} failed: HTTP {response.status_code}"
                " — the server does not advertise SMART Backend Services (no .well-known/smart-configuration)"
            )
        try:
            config = orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise SourceError(f"SMART discovery {url}: the configuration is not valid JSON: {exc}") from exc
        token_url = config.get("token_endpoint") if isinstance(config, dict) else None
        if not isinstance(token_url, str) or not token_url:
            raise SourceError(f"SMART discovery {url}: the configuration has no token_endpoint")
        return token_url

    def assertion(self, token_url: str) -> str:
        """A fresh signed client assertion for ``token_url`` (new ``jti`` each time: servers reject replays)."""
        now = int(self._clock())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": token_url,
            "jti": uuid.uuid4().hex,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
        }
        return jwt.encode(
            claims, self._key, algorithm=self.algorithm, headers={"kid": self.kid, "typ": "JWT"}
        )

    def _fetch_token(self, client: httpx.Client) -> None:
        if self.token_url is None:
            self.token_url = self.discover(client)
        form = {
            "grant_type": "client_credentials",
            "scope": self.scope,
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": self.assertion(self.token_url),
        }
        shown = redact_url(self.token_url)
        try:
            response = client.post(self.token_url, data=form, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise SourceError(f"SMART token request to {shown} failed: {type(exc).__name__}: {exc}") from exc
        self.token_requests += 1
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            body = None
        if response.status_code != 200 or not isinstance(body, dict) or not body.get("access_token"):
            reason = outcome_text(body) or response.reason_phrase or "no access_token in the answer"
            raise SourceError(
                f"SMART token request to {shown} for client {self.client_id!r} failed:"
                f" HTTP {response.status_code}: {reason}"
            )
        self._token = str(body["access_token"])
        try:
            lifetime = float(body.get("expires_in", 300))
        except (TypeError, ValueError):
            lifetime = 300.0  # SMART recommends 5 minutes; assume it when the server does not say
        # Short-lived tokens still get used: never renew earlier than half their lifetime.
        self._expires_at = self._clock() + lifetime - min(EXPIRY_MARGIN, lifetime / 2)

    def headers(self, client: httpx.Client) -> dict[str, str]:
        """The ``Authorization`` header with a cached token, fetching a new one when it is about to expire."""
        if self._token is None or self._clock() >= self._expires_at:
            self._fetch_token(client)
        return {"Authorization": f"Bearer {self._token}"}

    def refresh(self) -> bool:
        """Drop the cached token (after a 401) so the next request fetches a new one."""
        self._token = None
        return True
