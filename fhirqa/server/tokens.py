"""The built-in token endpoint: SMART Backend Services for deployments without an authorization server.

A registered client proves who it is with a JWT signed by its private key (``client_credentials``
grant, ``private_key_jwt`` assertion, as :class:`fhirqa.sources.auth.SmartBackendAuth` builds it);
the server checks it against the public keys registered for that client id and answers with a
short-lived access token signed by the server's own key. Errors follow RFC 6749 (``invalid_client``,
``invalid_scope``…), which is what OAuth clients parse.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import jwt

from fhirqa.server.config import ClientConfig, ServerConfig
from fhirqa.server.keys import KeySet, SigningKey
from fhirqa.server.scopes import grant

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: SMART Backend Services requires RS384 and ES384; the 256/512 variants are as strong and common.
ASSERTION_ALGORITHMS = ("RS384", "ES384", "RS256", "ES256", "RS512", "ES512")
#: SMART caps an assertion's lifetime at five minutes.
MAX_ASSERTION_LIFETIME_S = 300
DEV_TOKEN_LIFETIME_S = 12 * 3600
DEV_SCOPE = "system/*.* system/*.cruds"
#: Marks a --dev token: accepted only while the server runs with --dev, so one left over from a dev
#: session is worthless once the same server (same key) runs normally.
DEV_CLAIM = "fhirqa_dev"


class TokenRequestError(Exception):
    """An RFC 6749 error answer of the token endpoint."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        """The JSON error body."""
        return {"error": self.error, "error_description": self.description}


@dataclass
class RegisteredClient:
    """A client's registration: its public keys, the most it may be granted, an optional patient."""

    client_id: str
    keys: KeySet
    scope: str
    patient: str | None


def load_clients(configs: list[ClientConfig]) -> dict[str, RegisteredClient]:
    """Registered clients by id, their keys read now (a bad key file stops the server at start)."""
    clients = {}
    for c in configs:
        if c.jwks is not None:
            keys = KeySet(c.jwks, where=f"client {c.client_id}")
        else:
            path = c.jwks_file or c.public_key_file
            assert path is not None  # config validation guarantees one of them
            keys = KeySet.from_file(path)
        clients[c.client_id] = RegisteredClient(c.client_id, keys, c.scope, c.patient)
    return clients


class TokenIssuer:
    """Verifies client assertions and issues access tokens."""

    def __init__(self, config: ServerConfig, signing_key: SigningKey) -> None:
        self.config = config
        self.key = signing_key
        self.clients = load_clients(config.clients)
        self._seen: dict[str, float] = {}  # assertion jti → its expiry: replays are refused
        self._lock = threading.Lock()

    def access_token(self, subject: str, client_id: str, scope: str, patient: str | None,
                     lifetime_s: int, *, dev: bool = False) -> str:
        """A signed access token for this server."""
        now = int(time.time())
        claims: dict[str, Any] = {"iss": self.config.public_url, "aud": self.config.expected_audience,
                                  "sub": subject, "client_id": client_id, "scope": scope,
                                  "iat": now, "exp": now + lifetime_s, "jti": uuid.uuid4().hex}
        if dev:
            claims[DEV_CLAIM] = True
        if patient:
            claims[self.config.patient_claim] = patient
        return self.key.sign(claims)

    def dev_token(self) -> str:
        """The ``--dev`` token: every system scope, twelve hours, for local use only."""
        return self.access_token("dev", "fhirqa-dev", DEV_SCOPE, None, DEV_TOKEN_LIFETIME_S, dev=True)

    def exchange(self, form: dict[str, str]) -> tuple[str, dict[str, Any]]:
        """Answer a ``client_credentials`` token request (form fields): (client id, token response).

        Raises :class:`TokenRequestError` for anything else.
        """
        if form.get("grant_type") != "client_credentials":
            raise TokenRequestError("unsupported_grant_type", "only grant_type=client_credentials is supported")
        if form.get("client_assertion_type") != ASSERTION_TYPE or not form.get("client_assertion"):
            raise TokenRequestError("invalid_request", f"a client_assertion of type {ASSERTION_TYPE} is required")
        client, claims = self._verify_assertion(form["client_assertion"])
        scope = grant(form.get("scope"), client.scope)
        if not scope:
            raise TokenRequestError("invalid_scope", "none of the requested scopes is granted to this client")
        lifetime = self.config.token_lifetime_s
        token = self.access_token(client.client_id, client.client_id, scope, client.patient, lifetime)
        body: dict[str, Any] = {"access_token": token, "token_type": "bearer", "expires_in": lifetime,
                                "scope": scope}
        if client.patient:
            body["patient"] = client.patient
        return client.client_id, body

    def _verify_assertion(self, assertion: str) -> tuple[RegisteredClient, dict[str, Any]]:
        try:
            header = jwt.get_unverified_header(assertion)
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise TokenRequestError("invalid_client", "the client assertion is not a JWT", 401) from None
        client_id = unverified.get("iss")
        client = self.clients.get(client_id) if isinstance(client_id, str) else None
        if client is None or unverified.get("sub") != client_id:
            raise TokenRequestError("invalid_client", "unknown client, or iss and sub differ", 401)
        algorithm = header.get("alg")
        if algorithm not in ASSERTION_ALGORITHMS:
            raise TokenRequestError("invalid_client", f"assertion algorithm {str(algorithm)[:16]!r} is not accepted", 401)
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        claims = None
        for key in client.keys.candidates(kid):
            try:
                claims = jwt.decode(assertion, key, algorithms=[algorithm], audience=self.config.token_url,
                                    issuer=client_id, leeway=30, options={"require": ["exp", "jti", "aud"]})
                break
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as exc:
                raise TokenRequestError("invalid_client", f"the client assertion is not valid: {exc}", 401) from None
        if claims is None:
            raise TokenRequestError("invalid_client", "the client assertion's signature does not verify"
                                    " with the client's registered keys", 401)
        now = time.time()
        if float(claims["exp"]) - now > MAX_ASSERTION_LIFETIME_S + 30:
            raise TokenRequestError("invalid_client", "the client assertion lives longer than five minutes", 401)
        self._remember(str(claims["jti"]), float(claims["exp"]), now)
        return client, claims

    def _remember(self, jti: str, expires: float, now: float) -> None:
        with self._lock:
            for old in [k for k, exp in self._seen.items() if exp < now - 60]:
                del self._seen[old]
            if jti in self._seen:
                raise TokenRequestError("invalid_client", "this client assertion was already used (jti replay)", 401)
            self._seen[jti] = expires
