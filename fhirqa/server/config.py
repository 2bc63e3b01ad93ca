"""Server configuration: defaults, then a TOML file, then ``FHIRQA_SERVER_*`` environment variables, then flags.

A TOML file holds the settings at its top level (or under a ``[server]`` table); lists of trusted
token issuers and registered SMART Backend Services clients are arrays of tables::

    db = ".fhirqa/db"
    base_url = "https://fhirqa.example.org"

    [[issuers]]
    issuer = "https://ehr.example.org"
    jwks_url = "https://ehr.example.org/.well-known/jwks.json"

    [[clients]]
    client_id = "population-job"
    jwks_file = "keys/population-job.jwks.json"
    scope = "system/*.rs"

Every scalar setting can also come from the environment as ``FHIRQA_SERVER_<NAME>`` (``FHIRQA_DB``
for the store). Relative paths in a file are taken relative to the file's folder.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError

ENV_PREFIX = "FHIRQA_SERVER_"
MiB = 1024 * 1024


class ConfigError(FhirqaError):
    """The server configuration is missing something or contradicts itself."""


@dataclass
class IssuerConfig:
    """An external authorization server whose access tokens the server accepts."""

    issuer: str
    jwks_url: str | None = None
    jwks_file: Path | None = None
    jwks: dict[str, Any] | None = None  # inline JWKS
    audience: str | None = None  # defaults to the server's audience


@dataclass
class ClientConfig:
    """A SMART Backend Services client registered with the built-in token endpoint."""

    client_id: str
    scope: str  # the most this client may be granted, space-separated SMART scopes
    jwks_file: Path | None = None
    jwks: dict[str, Any] | None = None
    public_key_file: Path | None = None  # PEM
    patient: str | None = None  # binds every token of this client to one patient


@dataclass
class ServerConfig:
    """Everything ``fhirqa serve`` can be told; see docs/server.md for each setting."""

    db: Path = Path(".fhirqa/db")
    host: str = "127.0.0.1"
    port: int = 8000
    base_url: str | None = None  # public base URL; default http://host:port
    audience: str | None = None  # the `aud` tokens must carry; default base_url
    state_dir: Path | None = None  # jobs, audit log, signing key; default <db>.server
    signing_key_file: Path | None = None  # built-in issuer's private key; default <state_dir>/signing-key.pem
    token_lifetime_s: int = 300
    issuers: list[IssuerConfig] = field(default_factory=list)
    clients: list[ClientConfig] = field(default_factory=list)
    patient_claim: str = "patient"
    dev: bool = False
    max_body_bytes: int = 1 * MiB
    max_ingest_bytes: int = 256 * MiB
    rate_limit_per_minute: int = 600
    rate_limit_burst: int = 100
    allowed_backends: list[str] = field(default_factory=lambda: ["offline"])
    backend_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    pull_allowed: list[str] = field(default_factory=list)  # URL prefixes ingestion may pull from
    audit_log: Path | None = None  # default <state_dir>/audit.ndjson
    audit_questions: bool = True  # question text in the audit log (never in ordinary logs)
    ask_threads: int = 8  # questions to remote LLM backends: mostly waiting on the network
    # Offline questions are CPU-bound Python: the GIL runs one at a time whatever the thread count, and
    # more threads only share the core, stretching every answer to the slowest. Two let one run while
    # another waits in DuckDB or LanceDB (which release the GIL); the rest wait their turn in order.
    offline_threads: int = 2
    ask_cache_size: int = 2048
    warm_notes: str = "model"  # off | model | index: what the notes search loads at startup (fhirqa.server.warmup)
    ask_timeout_s: float = 120.0
    sync_wait_s: float = 300.0  # a synchronous ingest waits this long, then answers 202 with its job
    shutdown_grace_s: float = 20.0
    log_level: str = "info"

    @property
    def public_url(self) -> str:
        """The base URL clients use (no trailing slash)."""
        return (self.base_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def expected_audience(self) -> str:
        """The ``aud`` an access token must name."""
        return self.audience or self.public_url

    @property
    def token_url(self) -> str:
        """The built-in token endpoint (what client assertions name as ``aud``)."""
        return f"{self.public_url}/auth/token"

    @property
    def state_path(self) -> Path:
        """Folder for jobs, the audit log and the signing key."""
        return self.state_dir or self.db.with_name(self.db.name + ".server")

    @property
    def audit_path(self) -> Path:
        """The AuditEvent NDJSON file."""
        return self.audit_log or self.state_path / "audit.ndjson"

    @property
    def signing_key_path(self) -> Path:
        """The built-in issuer's private key (created on first start)."""
        return self.signing_key_file or self.state_path / "signing-key.pem"


_PATH_FIELDS = {"db", "state_dir", "signing_key_file", "audit_log"}
_SCALARS = {f.name: f for f in dataclasses.fields(ServerConfig) if f.name not in ("issuers", "clients")}


def _coerce(name: str, value: Any, base: Path | None) -> Any:
    """A setting's value in its declared type; strings from the environment are parsed."""
    kind = str(_SCALARS[name].type)
    if name in _PATH_FIELDS:
        path = Path(os.path.expanduser(str(value)))
        return path if path.is_absolute() or base is None else base / path
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
            raise ConfigError(f"{name}: expected true or false, got {value!r}")
        return text in ("1", "true", "yes", "on")
    if kind.startswith("list"):
        return [s.strip() for s in value.split(",") if s.strip()] if isinstance(value, str) else list(value)
    return value


def _apply(config: ServerConfig, values: Mapping[str, Any], base: Path | None, where: str) -> None:
    for key, value in values.items():
        if key in ("issuers", "clients"):
            continue
        if key not in _SCALARS:
            raise ConfigError(f"{where}: unknown setting {key!r}")
        try:
            setattr(config, key, _coerce(key, value, base))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: {key}: {exc}") from exc


def _path_or_none(value: Any, base: Path) -> Path | None:
    if value is None:
        return None
    path = Path(os.path.expanduser(str(value)))
    return path if path.is_absolute() else base / path


def _issuers(items: list[dict[str, Any]], base: Path, where: str) -> list[IssuerConfig]:
    issuers = []
    for i, item in enumerate(items):
        if not item.get("issuer"):
            raise ConfigError(f"{where}: issuers[{i}] needs an issuer")
        if not (item.get("jwks_url") or item.get("jwks_file") or item.get("jwks")):
            raise ConfigError(f"{where}: issuers[{i}] needs jwks_url, jwks_file or jwks")
        issuers.append(IssuerConfig(str(item["issuer"]), item.get("jwks_url"), _path_or_none(item.get("jwks_file"), base),
                                    item.get("jwks"), item.get("audience")))
    return issuers


def _clients(items: list[dict[str, Any]], base: Path, where: str) -> list[ClientConfig]:
    clients = []
    for i, item in enumerate(items):
        if not item.get("client_id") or not item.get("scope"):
            raise ConfigError(f"{where}: clients[{i}] needs client_id and scope")
        if not (item.get("jwks_file") or item.get("jwks") or item.get("public_key_file")):
            raise ConfigError(f"{where}: clients[{i}] needs jwks_file, jwks or public_key_file")
        clients.append(ClientConfig(str(item["client_id"]), str(item["scope"]),
                                    _path_or_none(item.get("jwks_file"), base), item.get("jwks"),
                                    _path_or_none(item.get("public_key_file"), base), item.get("patient")))
    return clients


def load_config(
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> ServerConfig:
    """Build the configuration: defaults < TOML file < environment < ``overrides`` (command-line flags).

    ``path`` defaults to ``$FHIRQA_SERVER_CONFIG`` when set.
    """
    env = os.environ if env is None else env
    config = ServerConfig()
    if "FHIRQA_DB" in env:
        config.db = Path(env["FHIRQA_DB"])
    path = path or env.get(ENV_PREFIX + "CONFIG")
    if path:
        file = Path(path)
        try:
            data = tomllib.loads(file.read_text("utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read the server configuration {file}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
        data = data.get("server", data)
        base = file.resolve().parent
        _apply(config, data, base, str(file))
        config.issuers = _issuers(data.get("issuers", []), base, str(file))
        config.clients = _clients(data.get("clients", []), base, str(file))
    from_env = {k[len(ENV_PREFIX):].lower(): v for k, v in env.items()
                if k.startswith(ENV_PREFIX) and k != ENV_PREFIX + "CONFIG"}
    _apply(config, {k: v for k, v in from_env.items() if k in _SCALARS}, None, "environment")
    if env.get(ENV_PREFIX + "ISSUER"):  # one external issuer from the environment (the common deployment)
        config.issuers.append(IssuerConfig(env[ENV_PREFIX + "ISSUER"], env.get(ENV_PREFIX + "JWKS_URL"),
                                           _path_or_none(env.get(ENV_PREFIX + "JWKS_FILE"), Path.cwd())))
    _apply(config, {k: v for k, v in (overrides or {}).items() if v is not None}, None, "command line")
    validate(config)
    return config


def validate(config: ServerConfig) -> None:
    """Refuse contradictory or unsafe settings before the server starts."""
    if config.dev and config.host not in ("127.0.0.1", "localhost", "::1"):
        raise ConfigError("--dev mints an all-powerful token: it only binds to loopback (127.0.0.1)")
    for issuer in config.issuers:
        if not (issuer.jwks_url or issuer.jwks_file or issuer.jwks):
            raise ConfigError(f"issuer {issuer.issuer}: give a JWKS (FHIRQA_SERVER_JWKS_URL or _FILE)")
    for number, name in ((config.max_body_bytes, "max_body_bytes"), (config.max_ingest_bytes, "max_ingest_bytes"),
                         (config.rate_limit_per_minute, "rate_limit_per_minute"), (config.ask_threads, "ask_threads"),
                         (config.offline_threads, "offline_threads")):
        if number <= 0:
            raise ConfigError(f"{name} must be positive")
    if config.warm_notes not in ("off", "model", "index"):
        raise ConfigError(f"warm_notes must be off, model or index, not {config.warm_notes!r}")
    unknown = [b for b in config.allowed_backends if b not in ("offline", "openai", "gemini")]
    if unknown:
        raise ConfigError(f"allowed_backends: unknown backend(s) {unknown}")
