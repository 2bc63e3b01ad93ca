"""Fixtures for the server tests: the real fhirqa server under uvicorn on a free loopback port.

- ``sample_store``: a store ingested once from ``examples/sample`` (5 synthetic patients).
- ``keys``: an RSA key for a fake EHR authorization server (issuer ``https://ehr.test``, its JWKS in
  a file), an EC P-384 key for a SMART Backend Services client registered with the built-in token
  endpoint, and a rogue key nobody trusts.
- ``server``: one server per module over its own copy of the sample store; ``run_server`` starts
  more (each test that needs its own settings or a store it may write to).
- ``ids``: patient ids by name; patient A is Linda Taylor, patient B is Mei Wilson.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

# The server's dependencies (FastAPI, uvicorn) come with the project's server dependencies; without
# them these tests skip with the reason rather than break collection for everyone else.
pytest.importorskip("fastapi", reason="fastapi is not installed (the server's dependencies)")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed (the server's dependencies)")

import fhirqa  # noqa: E402
from fhirqa.server import build_state, create_app  # noqa: E402
from fhirqa.server.config import ClientConfig, IssuerConfig, ServerConfig  # noqa: E402
from tests.conftest import SAMPLE  # noqa: E402

ISSUER = "https://ehr.test"
CLIENT_ID = "backend-app"
PATIENT_CLIENT_ID = "patient-app"
NAME_A, NAME_B = "Linda Taylor", "Mei Wilson"
NOW = "2026-06-30T12:00:00Z"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a longer server test (Schemathesis, kill -9); still part of CI")


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of the example patients, ingested once per session (copy it before writing)."""
    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample is missing")
    db = tmp_path_factory.mktemp("sample") / "db"
    fhirqa.ingest([fhirqa.FileSource([SAMPLE])], db)
    return db


def copy_store(src: Path, dst: Path) -> Path:
    """A private copy of a store (tests that ingest must not change the shared one)."""
    shutil.copytree(src, dst)
    return dst


@pytest.fixture(scope="session")
def ids(sample_store: Path) -> dict[str, str]:
    """Patient id by display name."""
    rows = fhirqa.Store(sample_store).query("SELECT name, patient_id FROM patient").rows
    return {name: pid for name, pid in rows}


def _jwks(public: Any, kid: str) -> dict[str, Any]:
    algo = RSAAlgorithm if isinstance(public, rsa.RSAPublicKey) else ECAlgorithm
    return {"keys": [{**json.loads(algo.to_jwk(public)), "kid": kid, "use": "sig"}]}


@dataclass
class Keys:
    """Key material for the tests; JWKS files live in ``folder``."""

    folder: Path
    ehr: rsa.RSAPrivateKey
    client: ec.EllipticCurvePrivateKey
    rogue: rsa.RSAPrivateKey
    ehr_jwks: Path = field(init=False)
    client_jwks: Path = field(init=False)

    def __post_init__(self) -> None:
        self.ehr_jwks = self.folder / "ehr.jwks.json"
        self.ehr_jwks.write_text(json.dumps(_jwks(self.ehr.public_key(), "ehr-1")))
        self.client_jwks = self.folder / "client.jwks.json"
        self.client_jwks.write_text(json.dumps(_jwks(self.client.public_key(), "client-1")))


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """Keys of the fake EHR issuer, of a registered backend client, and of nobody."""
    return Keys(tmp_path_factory.mktemp("keys"), rsa.generate_private_key(65537, 2048),
                ec.generate_private_key(ec.SECP384R1()), rsa.generate_private_key(65537, 2048))


def make_config(db: Path, state: Path, keys: Keys, patient_a: str | None = None, **overrides: Any) -> ServerConfig:
    """Settings for a test server: the EHR issuer trusted, two registered clients, generous limits."""
    clients = [ClientConfig(CLIENT_ID, "system/*.rs system/*.cu", jwks_file=keys.client_jwks)]
    if patient_a:
        clients.append(ClientConfig(PATIENT_CLIENT_ID, "patient/*.rs", jwks_file=keys.client_jwks, patient=patient_a))
    settings: dict[str, Any] = {
        "db": db, "host": "127.0.0.1", "port": free_port(), "state_dir": state,
        "issuers": [IssuerConfig(ISSUER, jwks_file=keys.ehr_jwks)], "clients": clients,
        "rate_limit_per_minute": 100_000, "rate_limit_burst": 10_000, "shutdown_grace_s": 10.0,
        # Test servers answer from the tables; a test that searches notes loads the model when it asks.
        "warm_notes": "off",
        **overrides,
    }
    return ServerConfig(**settings)


@dataclass
class Server:
    """A running server and helpers to call it."""

    url: str
    config: ServerConfig
    keys: Keys
    state: Any

    def token(self, scope: str = "system/*.rs", patient: str | None = None, *, expires_in: int = 300,
              audience: str | None = None, issuer: str = ISSUER, key: Any = None, kid: str = "ehr-1",
              algorithm: str = "RS256", **claims: Any) -> str:
        """An access token from the fake EHR (change any part to make it wrong)."""
        now = int(time.time())
        body = {"iss": issuer, "aud": audience or self.url, "sub": "dr-who", "client_id": "ehr-app",
                "scope": scope, "iat": now, "exp": now + expires_in, "jti": uuid.uuid4().hex, **claims}
        if patient:
            body["patient"] = patient
        return jwt.encode(body, key or self.keys.ehr, algorithm=algorithm, headers={"kid": kid})

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client for this server, with a bearer token when given."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0, **kwargs)

    def assertion(self, client_id: str = CLIENT_ID, *, key: Any = None, audience: str | None = None,
                  expires_in: int = 240, jti: str | None = None) -> str:
        """A SMART Backend Services client assertion for the built-in token endpoint."""
        now = int(time.time())
        claims = {"iss": client_id, "sub": client_id, "aud": audience or self.config.token_url,
                  "jti": jti or uuid.uuid4().hex, "iat": now, "exp": now + expires_in}
        return jwt.encode(claims, key or self.keys.client, algorithm="ES384", headers={"kid": "client-1"})


@contextmanager
def run_server(config: ServerConfig, keys: Keys) -> Iterator[Server]:
    """Start the real app under uvicorn in a thread; stop it (gracefully) on exit."""
    state = build_state(config)
    app = create_app(config, state)
    uv = uvicorn.Server(uvicorn.Config(app, host=config.host, port=config.port, log_config=None,
                                       access_log=False, lifespan="on", timeout_graceful_shutdown=10))
    thread = threading.Thread(target=uv.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield Server(config.public_url, config, keys, state)
    finally:
        uv.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def server(sample_store: Path, keys: Keys, ids: dict[str, str], tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Server]:
    """A server over a private copy of the sample store (module-scoped)."""
    root = tmp_path_factory.mktemp("server")
    config = make_config(copy_store(sample_store, root / "db"), root / "state", keys, ids[NAME_A])
    with run_server(config, keys) as running:
        yield running


def outcome_text(response: httpx.Response) -> str:
    """The diagnostics of an OperationOutcome response (asserting that it is one)."""
    assert response.headers["content-type"].startswith("application/fhir+json"), response.headers
    body = response.json()
    assert body["resourceType"] == "OperationOutcome", body
    return "; ".join(issue.get("diagnostics", "") for issue in body["issue"])


def ask_parameters(question: str, now: str | None = NOW) -> dict[str, Any]:
    """$ask input Parameters."""
    params = [{"name": "question", "valueString": question}]
    if now:
        params.append({"name": "now", "valueDateTime": now})
    return {"resourceType": "Parameters", "parameter": params}


def wait_for_job(client: httpx.Client, url: str, timeout: float = 60.0) -> dict[str, Any]:
    """Poll a job's status URL until it has finished; its final document."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get(url)
        if response.status_code == 200:
            return response.json()
        assert response.status_code == 202, response.text
        time.sleep(0.05)
    raise AssertionError(f"job {url} did not finish in {timeout} s")


@contextmanager
def run_relational_server(
    sample_store: Path, keys: Keys, patient: str, root: Path, *, omop: bool = False
) -> Iterator[Server]:
    """A server over a copy of the sample store with the test MIMIC-III database (and notes) beside it, and with
    ``omop`` the store's own OMOP export too; relational notes indexed in a cache under ``root``, without embeddings.
    """
    from fhirqa.sql.export import export_omop
    from tests.sql.relational_beside import mimic_beside

    db = copy_store(sample_store, root / "db")
    mimic_beside(db, root)
    if omop:
        export_omop(db, db / "omop.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FHIRQA_SQL_CACHE", str(root / "sql-cache"))
        patch.setenv("FHIRQA_EMBEDDINGS", "off")
        with run_server(make_config(db, root / "state", keys, patient), keys) as running:
            yield running
