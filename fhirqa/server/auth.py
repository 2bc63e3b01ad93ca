"""Who is calling: bearer JWT validation against the trusted issuers' keys.

A token is accepted only when its ``iss`` is a configured issuer (an external authorization server,
or this server's own token endpoint), its signature verifies with one of that issuer's public keys
under an asymmetric algorithm, it has not expired, and its ``aud`` names this server. The result is
a :class:`Principal`; what it may do is decided in :mod:`fhirqa.server.access`.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import Any

import jwt

from fhirqa.server.config import ServerConfig
from fhirqa.server.errors import ApiError
from fhirqa.server.keys import ACCEPTED_ALGORITHMS, KeySet, SigningKey
from fhirqa.server.scopes import ScopeSet

#: Seconds of clock skew tolerated on exp/nbf/iat.
LEEWAY_S = 30
#: Verified tokens remembered (each until its own expiry).
_VALID_CACHE = 4096
_CHALLENGE = 'Bearer realm="fhirqa"'


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    issuer: str
    subject: str
    client_id: str
    scopes: ScopeSet
    patient: str | None  # the patient in context: the only patient this token reaches
    token_id: str | None = None

    @property
    def key(self) -> str:
        """A stable identity for rate limits and job ownership (issuer, client and subject)."""
        return hashlib.sha256(f"{self.issuer}\n{self.client_id}\n{self.subject}".encode()).hexdigest()[:24]

    @property
    def display(self) -> str:
        """Who, for the audit log: the client and, when different, the subject."""
        return self.client_id if self.subject == self.client_id else f"{self.client_id} ({self.subject})"


def unauthorized(reason: str, error: str | None = "invalid_token") -> ApiError:
    """A 401 with the RFC 6750 challenge (no ``error`` when the request simply had no token)."""
    challenge = _CHALLENGE if error is None else f'{_CHALLENGE}, error="{error}"'
    return ApiError(401, reason, code="login", headers={"WWW-Authenticate": challenge})


class TokenValidator:
    """Checks bearer tokens against the configured issuers and this server's own signing key."""

    def __init__(self, config: ServerConfig, signing_key: SigningKey) -> None:
        self.config = config
        self.audience = config.expected_audience
        own = KeySet({"keys": [signing_key.jwk]}, where="server signing key")
        self.issuers: dict[str, tuple[KeySet, str]] = {config.public_url: (own, self.audience)}
        for issuer in config.issuers:
            if issuer.jwks is not None:
                keys = KeySet(issuer.jwks, where=f"issuer {issuer.issuer}")
            elif issuer.jwks_file is not None:
                keys = KeySet.from_file(issuer.jwks_file)
            else:
                keys = KeySet(url=issuer.jwks_url, where=str(issuer.jwks_url))
            self.issuers[issuer.issuer] = (keys, issuer.audience or self.audience)
        self._valid: dict[str, tuple[Principal, float]] = {}
        self._valid_lock = threading.Lock()
        # A key set behind a URL may fetch on validation: then validation runs in a worker thread.
        self.may_block = any(keys.url for keys, _ in self.issuers.values())

    def validate(self, token: str) -> Principal:
        """The principal of a valid token; :func:`unauthorized` otherwise (reasons never echo the token).

        A token that verified once is remembered until it expires (signature checks are the costliest
        step of a cached answer); its expiry is checked again on every use.
        """
        cached = self._valid.get(token)
        if cached is not None:
            principal, expires = cached
            if time.time() < expires + LEEWAY_S:
                return principal
            self._valid.pop(token, None)
        principal, expires = self._validate(token)
        with self._valid_lock:
            if len(self._valid) >= _VALID_CACHE:
                self._valid.pop(next(iter(self._valid)), None)  # oldest first (dicts keep insertion order)
            self._valid[token] = (principal, expires)
        return principal

    def _validate(self, token: str) -> tuple[Principal, float]:
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise unauthorized("the bearer token is not a well-formed JWT") from None
        algorithm = header.get("alg")
        if algorithm not in ACCEPTED_ALGORITHMS:
            raise unauthorized(f"token algorithm {str(algorithm)[:16]!r} is not accepted")
        issuer = unverified.get("iss")
        trusted = self.issuers.get(issuer) if isinstance(issuer, str) else None
        if trusted is None or not isinstance(issuer, str):
            raise unauthorized("the token's issuer is not trusted by this server")
        keys, audience = trusted
        candidates = keys.candidates(header.get("kid") if isinstance(header.get("kid"), str) else None)
        if not candidates:
            raise unauthorized("no key of the token's issuer matches its kid")
        claims = self._verify(token, candidates, algorithm, issuer, audience)
        if claims.get("fhirqa_dev") and not self.config.dev:
            raise unauthorized("a --dev token is accepted only by a server running with --dev")
        subject = str(claims.get("sub") or "")
        client_id = str(claims.get("client_id") or claims.get("azp") or subject)
        if not subject and not client_id:
            raise unauthorized("the token names no subject or client")
        patient = claims.get(self.config.patient_claim)
        if patient is not None and (not isinstance(patient, str) or not patient):
            raise unauthorized("the token's patient claim is not a patient id")
        scopes = ScopeSet.parse(claims.get("scope") if "scope" in claims else claims.get("scp"))
        principal = Principal(issuer, subject or client_id, client_id, scopes,
                              patient.removeprefix("Patient/") if patient else None, claims.get("jti"))
        return principal, float(claims["exp"])

    def _verify(self, token: str, keys: list[Any], algorithm: str, issuer: str, audience: str) -> dict[str, Any]:
        last: jwt.PyJWTError | None = None
        for key in keys:
            try:
                return jwt.decode(
                    token, key, algorithms=[algorithm], audience=audience, issuer=issuer, leeway=LEEWAY_S,
                    options={"require": ["exp", "iss", "aud"]},
                )
            except jwt.InvalidSignatureError as exc:
                last = exc  # another key of the set may match
            except jwt.ExpiredSignatureError:
                raise unauthorized("the token has expired") from None
            except jwt.InvalidAudienceError:
                raise unauthorized("the token is for another audience") from None
            except jwt.MissingRequiredClaimError as exc:
                raise unauthorized(f"the token has no {exc.claim} claim") from None
            except jwt.ImmatureSignatureError:
                raise unauthorized("the token is not valid yet") from None
            except (jwt.PyJWTError, ValueError, TypeError) as exc:
                last = exc if isinstance(exc, jwt.PyJWTError) else jwt.InvalidTokenError(str(exc))
        if isinstance(last, jwt.InvalidSignatureError):
            raise unauthorized("the token's signature does not verify")
        raise unauthorized("the token is not valid")


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer …`` header; 401 when missing or of another scheme."""
    if not authorization:
        raise unauthorized("this endpoint needs a bearer access token", error=None)
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("the Authorization header must be 'Bearer <token>'", error="invalid_request")
    return token.strip()
