"""Keys: the server's own signing key (built-in issuer) and the public key sets it trusts.

The signing key is an EC P-256 key (ES256: small tokens, fast verification) kept as PEM in the
state folder, created on first start with owner-only permissions, so tokens survive a restart.
Trusted key sets come from a JWKS document (inline, file or URL) or a PEM public key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from fhirqa.server.config import ConfigError
from fhirqa.sources.auth import key_id

log = logging.getLogger("fhirqa.server")
SIGNING_ALGORITHM = "ES256"
#: Asymmetric algorithms only: an HMAC or "none" token can never be accepted, whatever its header says.
ACCEPTED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
#: A JWKS URL is fetched again for an unknown kid at most this often (key rotation without a flood).
JWKS_REFETCH_S = 30.0


class SigningKey:
    """The built-in issuer's private key and its public JWK."""

    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        self.key = key
        self.kid = key_id(key)
        self.jwk = {**json.loads(ECAlgorithm.to_jwk(key.public_key())), "kid": self.kid,
                    "alg": SIGNING_ALGORITHM, "use": "sig"}

    def __repr__(self) -> str:  # never print key material
        return f"SigningKey(kid={self.kid!r})"

    def sign(self, claims: dict[str, Any]) -> str:
        """A compact JWS of ``claims``."""
        return jwt.encode(claims, self.key, algorithm=SIGNING_ALGORITHM, headers={"kid": self.kid, "typ": "JWT"})

    @classmethod
    def load_or_create(cls, path: Path) -> SigningKey:
        """Read the PEM at ``path``, or create a new P-256 key there (mode 0600)."""
        if path.exists():
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey):
                raise ConfigError(f"{path}: the server signing key must be an EC private key")
            return cls(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        return cls(key)


def jwk_from_pem(data: bytes) -> dict[str, Any]:
    """A public JWK (with its thumbprint as ``kid``) from a PEM public key."""
    public = serialization.load_pem_public_key(data)
    if isinstance(public, rsa.RSAPublicKey):
        jwk = json.loads(RSAAlgorithm.to_jwk(public))
    elif isinstance(public, ec.EllipticCurvePublicKey):
        jwk = json.loads(ECAlgorithm.to_jwk(public))
    else:
        raise ConfigError(f"unsupported public key type {type(public).__name__}: use RSA or EC")
    members = ("e", "kty", "n") if jwk["kty"] == "RSA" else ("crv", "kty", "x", "y")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    jwk["kid"] = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
    return jwk


class KeySet:
    """Public keys by ``kid``, from a JWKS document; a URL-backed set refreshes for unknown kids."""

    def __init__(self, jwks: dict[str, Any] | None = None, url: str | None = None, where: str = "JWKS") -> None:
        self.url = url
        self.where = where
        self._keys: dict[str | None, Any] = {}
        self._fetched_at = 0.0
        self._lock = threading.Lock()
        if jwks is not None:
            self._load(jwks)

    @classmethod
    def from_file(cls, path: Path) -> KeySet:
        """A JWKS file, or a PEM public key file."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the key file {path}: {exc.strerror}") from exc
        if data.lstrip().startswith(b"-----BEGIN"):
            return cls({"keys": [jwk_from_pem(data)]}, where=str(path))
        try:
            return cls(json.loads(data), where=str(path))
        except ValueError as exc:
            raise ConfigError(f"{path}: neither a JWKS document nor a PEM public key") from exc

    def _load(self, jwks: dict[str, Any]) -> None:
        keys: dict[str | None, Any] = {}
        for entry in jwks.get("keys", []) if isinstance(jwks, dict) else []:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or "d" in entry:
                continue  # encryption keys and (misplaced) private keys are never used to verify
            try:
                keys[entry.get("kid")] = jwt.PyJWK(entry).key
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError) as exc:
                log.warning("skipping an unusable key in %s: %s", self.where, type(exc).__name__)
        if not keys:
            raise ConfigError(f"{self.where}: no usable signing keys")
        self._keys = keys

    def _fetch(self) -> None:
        assert self.url is not None
        response = httpx.get(self.url, timeout=10.0, headers={"Accept": "application/json"})
        response.raise_for_status()
        self._load(response.json())
        self._fetched_at = time.monotonic()

    def candidates(self, kid: str | None) -> list[Any]:
        """Keys to try for a token with header ``kid`` (all keys when the token names none)."""
        with self._lock:
            stale = not self._keys or (kid is not None and kid not in self._keys)
            if self.url and stale and time.monotonic() - self._fetched_at > JWKS_REFETCH_S:
                try:
                    self._fetch()
                except (httpx.HTTPError, ValueError, ConfigError) as exc:
                    log.warning("fetching JWKS %s failed: %s", self.where, type(exc).__name__)
            if kid is not None:
                return [self._keys[kid]] if kid in self._keys else []
            return list(self._keys.values())
