"""Pytest fixtures that run a real FHIR R4 server (sekmet-fhir) on a free loopback port.

``fhir_server`` answers without authentication; ``smart_fhir_server`` demands SMART Backend
Services tokens (RS384 and ES384 clients registered) or a static bearer token. Both are
session-scoped, keep their database and Bulk files in a temporary folder, and are stopped at the
end of the session. Tests that use them skip with a reason when the ``sekmet`` executable is absent.

Use them from a conftest: ``from tests.fhir_server import fhir_server, smart_fhir_server``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

STARTUP_TIMEOUT = 60.0


def sekmet_executable() -> str | None:
    """The ``sekmet`` CLI: next to this Python first (a venv not on PATH), then on PATH."""
    beside = Path(sys.executable).parent / "sekmet"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("sekmet")


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _settings(workdir: Path, extra: dict[str, Any]) -> Path:
    # The simulator would answer Claims and orders with resources of its own; validation is for
    # inbound HIS traffic, not for test data; a zero delay makes Bulk exports finish at once.
    settings = {
        "data_dir": str(workdir / "data"),
        "own_private_key_path": str(workdir / "keys" / "sekmet_private.pem"),
        "simulator": {"enabled": False, "delay_seconds": 0},
        "validation": {"inbound": "warn"},
        "log_inbound": False,
        **extra,
    }
    path = workdir / "settings.yaml"
    path.write_text(json.dumps(settings, indent=2))  # JSON is YAML
    return path


def start_sekmet(workdir: Path, extra_settings: dict[str, Any] | None = None) -> Iterator[str]:
    """Run ``sekmet serve`` in ``workdir`` and yield its FHIR base URL until the generator is closed."""
    exe = sekmet_executable()
    if exe is None:
        pytest.skip("sekmet-fhir is not installed (no `sekmet` executable): pip install sekmet-fhir")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}/fhir"
    env = {
        **os.environ,
        "SEKMET_BASE_URL": base,
        "SEKMET_DB": str(workdir / "sekmet.db"),
        "SEKMET_CONFIG": str(_settings(workdir, extra_settings or {})),
    }
    log_path = workdir / "sekmet.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - our own test server, fixed arguments
            [exe, "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_up(process, base, log_path)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_until_up(process: subprocess.Popen[bytes], base: str, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"sekmet exited with {process.returncode} at start-up:\n{_tail(log_path)}")
        try:
            if httpx.get(f"{base}/metadata", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"sekmet did not answer {base}/metadata within {STARTUP_TIMEOUT:.0f} s:\n{_tail(log_path)}")


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@pytest.fixture(scope="session")
def fhir_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/fhir``) of a sekmet server with authentication off."""
    yield from start_sekmet(tmp_path_factory.mktemp("sekmet-open"))


@dataclass
class SmartServer:
    """A sekmet server that wants SMART Backend Services tokens or the static ``bearer_token``."""

    base_url: str
    bearer_token: str
    #: algorithm ("RS384"/"ES384") -> (client id, path of its private key PEM)
    clients: dict[str, tuple[str, Path]] = field(default_factory=dict)


def _write_key_pair(folder: Path, name: str, key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> Path:
    private = folder / f"{name}.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    (folder / f"{name}.pub.pem").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private


@pytest.fixture(scope="session")
def smart_fhir_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmartServer]:
    """A sekmet server requiring auth, with an RS384 and an ES384 SMART client registered."""
    workdir = tmp_path_factory.mktemp("sekmet-smart")
    keys = workdir / "client-keys"
    keys.mkdir()
    pairs = {
        "RS384": ("fhirqa-rs384", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        "ES384": ("fhirqa-es384", ec.generate_private_key(ec.SECP384R1())),
    }
    clients = {alg: (cid, _write_key_pair(keys, cid, key)) for alg, (cid, key) in pairs.items()}
    token = "static-test-token-0123456789"
    extra = {
        "server_auth": {
            "types": ["smart", "bearer"],
            "tokens": [token],
            "token_lifetime": 300,
            "smart_clients": [
                {
                    "client_id": cid,
                    "public_key_path": str(path.with_suffix(".pub.pem")),
                    "scopes": "system/*.*",
                }
                for cid, path in clients.values()
            ],
        }
    }
    for base in start_sekmet(workdir, extra):
        yield SmartServer(base_url=base, bearer_token=token, clients=clients)
