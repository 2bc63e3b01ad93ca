"""SMART Backend Services and bearer tokens, against a scripted token endpoint that checks like a real one."""

from __future__ import annotations

import logging
import time
from urllib.parse import parse_qs

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from fhirqa.errors import SourceError
from fhirqa.sources.auth import ASSERTION_TYPE, BearerToken, SmartBackendAuth, load_private_key
from fhirqa.sources.rest import FhirRestSource
from tests.sources.fake import BASE, FakeServer, fhir_json, outcome, patient, searchset

TOKEN_URL = "https://auth.example.org/oauth2/token"
CLIENT_ID = "fhirqa-backend"


def pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture(scope="module")
def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key():
    return ec.generate_private_key(ec.SECP384R1())


class TokenEndpoint:
    """Verifies client assertions the way a SMART authorization server does, and issues tokens."""

    def __init__(self, public_key, lifetime: int = 300, leeway: float = 0) -> None:
        self.public_key = public_key
        self.leeway = leeway
        self.lifetime = lifetime
        self.issued: list[str] = []
        self.assertions: list[tuple[dict, dict]] = []  # (header, claims)
        self.forms: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        self.forms.append(form)
        try:
            claims = jwt.decode(
                form["client_assertion"],
                self.public_key,
                algorithms=["RS384", "ES384"],
                audience=TOKEN_URL,
                leeway=self.leeway,
                options={"require": ["iss", "sub", "aud", "exp", "jti"]},
            )
        except (jwt.PyJWTError, TypeError) as exc:  # TypeError: signed with another kind of key
            return httpx.Response(401, json={"error": "invalid_client", "error_description": str(exc)})
        self.assertions.append((jwt.get_unverified_header(form["client_assertion"]), claims))
        token = f"access-{len(self.issued) + 1}"
        self.issued.append(token)
        body = {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": self.lifetime,
            "scope": form["scope"],
        }
        return httpx.Response(200, json=body, headers={"Cache-Control": "no-store"})


def smart_server(endpoint: TokenEndpoint) -> FakeServer:
    config = {
        "token_endpoint": TOKEN_URL,
        "token_endpoint_auth_methods_supported": ["private_key_jwt"],
        "token_endpoint_auth_signing_alg_values_supported": ["RS384", "ES384"],
        "grant_types_supported": ["client_credentials"],
        "capabilities": ["client-confidential-asymmetric"],
    }
    return (
        FakeServer()
        .on("GET", f"{BASE}/.well-known/smart-configuration", httpx.Response(200, json=config))
        .on("POST", TOKEN_URL, endpoint)
    )


def authorized(token: str, body):
    """A FHIR endpoint that answers ``body`` only with ``Bearer token``, 401 otherwise."""

    def reply(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") != f"Bearer {token}":
            return fhir_json(outcome("Access token expired", "expired"), 401)
        return fhir_json(body)

    return reply


@pytest.mark.parametrize("alg", ["RS384", "ES384"])
def test_smart_token_request_is_a_client_credentials_grant_with_a_signed_assertion(alg, rsa_key, ec_key):
    key = rsa_key if alg == "RS384" else ec_key
    endpoint = TokenEndpoint(key.public_key())
    server = smart_server(endpoint)
    auth = SmartBackendAuth(BASE, CLIENT_ID, pem(key), scope="system/*.rs")
    before = time.time()
    headers = auth.headers(server.client())
    assert headers == {"Authorization": "Bearer access-1"}
    header, claims = endpoint.assertions[0]
    assert header["alg"] == alg and header["kid"] == auth.kid and header["typ"] == "JWT"
    assert claims["iss"] == claims["sub"] == CLIENT_ID
    assert claims["aud"] == TOKEN_URL
    assert len(claims["jti"]) >= 16
    assert before < claims["exp"] <= before + 300
    form = endpoint.forms[0]
    assert form["grant_type"] == "client_credentials"
    assert form["client_assertion_type"] == ASSERTION_TYPE
    assert form["scope"] == "system/*.rs"


def test_smart_key_can_be_read_from_a_pem_file(tmp_path, ec_key):
    path = tmp_path / "client.pem"
    path.write_bytes(pem(ec_key))
    assert SmartBackendAuth(BASE, CLIENT_ID, str(path)).algorithm == "ES384"


def test_each_assertion_has_a_new_jti(rsa_key):
    auth = SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key))
    first = jwt.decode(auth.assertion(TOKEN_URL), options={"verify_signature": False})
    second = jwt.decode(auth.assertion(TOKEN_URL), options={"verify_signature": False})
    assert first["jti"] != second["jti"]


def test_access_token_is_cached_across_requests(rsa_key):
    endpoint = TokenEndpoint(rsa_key.public_key())
    server = smart_server(endpoint)
    server.on("GET", f"{BASE}/Observation", authorized("access-1", searchset([], f"{BASE}/Observation")))
    auth = SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key))
    http = server.http()
    http.auth = auth
    for _ in range(3):
        http.get_json(f"{BASE}/Observation")
    assert endpoint.issued == ["access-1"] and auth.token_requests == 1
    assert sum("smart-configuration" in url for url in server.urls()) == 1


def test_access_token_is_renewed_shortly_before_it_expires(rsa_key):
    now = [time.time()]
    endpoint = TokenEndpoint(rsa_key.public_key(), lifetime=300, leeway=600)  # our clock runs ahead
    server = smart_server(endpoint)
    auth = SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key), clock=lambda: now[0])
    client = server.client()
    assert auth.headers(client)["Authorization"] == "Bearer access-1"
    now[0] += 200  # 100 s left of 300: still good
    assert auth.headers(client)["Authorization"] == "Bearer access-1"
    now[0] += 50  # 50 s left: inside the renewal margin
    assert auth.headers(client)["Authorization"] == "Bearer access-2"


def test_a_401_fetches_a_new_token_once_and_retries(rsa_key):
    endpoint = TokenEndpoint(rsa_key.public_key())
    server = smart_server(endpoint)
    # the server revoked access-1 (e.g. restarted with a new signing key): only access-2 works
    server.on("GET", f"{BASE}/Patient/p1", authorized("access-2", patient("p1")))
    http = server.http()
    http.auth = SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key))
    _, body = http.get_json(f"{BASE}/Patient/p1")
    assert body["id"] == "p1" and endpoint.issued == ["access-1", "access-2"]


def test_a_401_after_the_refresh_is_a_source_error(rsa_key):
    endpoint = TokenEndpoint(rsa_key.public_key())
    server = smart_server(endpoint)
    server.on("GET", f"{BASE}/Patient", fhir_json(outcome("client is suspended", "forbidden"), 401))
    source = FhirRestSource(
        BASE, types=["Patient"], client=server.http(), auth=SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key))
    )
    with pytest.raises(SourceError, match="HTTP 401: client is suspended"):
        list(source.records())
    assert len(endpoint.issued) == 2


def test_token_endpoint_refusal_is_reported_with_the_oauth_error(rsa_key, ec_key):
    endpoint = TokenEndpoint(ec_key.public_key())  # registered key differs from the one we sign with
    server = smart_server(endpoint)
    auth = SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key))
    with pytest.raises(SourceError, match="invalid_client") as caught:
        auth.headers(server.client())
    assert TOKEN_URL in str(caught.value) and CLIENT_ID in str(caught.value)
    assert endpoint.forms[0]["client_assertion"] not in str(caught.value)


def test_a_server_without_smart_configuration_says_so(rsa_key):
    server = FakeServer()
    with pytest.raises(SourceError, match="does not advertise SMART Backend Services"):
        SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key)).headers(server.client())


def test_tokens_and_keys_never_reach_logs_reprs_or_errors(rsa_key, caplog):
    caplog.set_level(logging.DEBUG)
    endpoint = TokenEndpoint(rsa_key.public_key())
    server = smart_server(endpoint)
    server.on("GET", f"{BASE}/Patient", httpx.Response(503), fhir_json(outcome("gone"), 500))
    auth = SmartBackendAuth(BASE, CLIENT_ID, pem(rsa_key))
    source = FhirRestSource(BASE, types=["Patient"], client=server.http(attempts=2), auth=auth)
    with pytest.raises(SourceError) as caught:
        list(source.records())
    secrets = ["access-1", endpoint.forms[0]["client_assertion"], "PRIVATE KEY"]
    shown = caplog.text + repr(auth) + str(caught.value) + repr(BearerToken("s3cr3t"))
    assert not any(secret in shown for secret in secrets) and "s3cr3t" not in shown


def test_static_bearer_token_is_sent_and_cannot_be_refreshed():
    server = FakeServer().on("GET", f"{BASE}/Patient/p1", authorized("t0k", patient("p1")))
    http = server.http()
    http.auth = BearerToken("t0k")
    assert http.get_json(f"{BASE}/Patient/p1")[1]["id"] == "p1"
    http.auth = BearerToken("wrong")
    with pytest.raises(SourceError, match="HTTP 401"):
        http.get_json(f"{BASE}/Patient/p1")


def test_unusable_keys_are_rejected_with_a_reason(tmp_path):
    with pytest.raises(SourceError, match="cannot read the SMART private key"):
        load_private_key(tmp_path / "missing.pem")
    with pytest.raises(SourceError, match="not an unencrypted PEM private key"):
        load_private_key(b"-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    with pytest.raises(SourceError, match="P-384"):
        SmartBackendAuth(BASE, CLIENT_ID, pem(ec.generate_private_key(ec.SECP256R1())))
