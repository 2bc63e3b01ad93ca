"""``fhirqa serve``: the HTTP server (FHIR operations, ingestion, view reads) under uvicorn."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(commands: Any, db_default: str) -> None:
    """Add the ``serve`` sub-command."""
    p = commands.add_parser(
        "serve",
        help="run the HTTP server ($ask, ingestion, views; SMART-secured)",
        description="Serve the store over HTTP: POST /Patient/{id}/$ask, ingestion jobs, view reads and "
        "$viewdefinition-run, behind SMART bearer tokens (see docs/server.md). Settings come from --config "
        "(TOML), then FHIRQA_SERVER_* environment variables, then these flags.",
    )
    p.add_argument("--db", default=None, help=f"store folder (default: {db_default})")
    p.add_argument("--config", help="TOML configuration file (default: $FHIRQA_SERVER_CONFIG)")
    p.add_argument("--host", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: 8000)")
    p.add_argument("--base-url", help="public base URL, the audience tokens must name (default: http://HOST:PORT)")
    p.add_argument("--dev", action="store_true",
                   help="development mode: print an all-scopes local token (loopback only; never on by default)")
    p.add_argument("--warm-notes", choices=["off", "model", "index"],
                   help="at startup, in the background: load the embedding model (model, the default), also embed "
                        "every patient's notes (index), or nothing (off)")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"], help="log level (default: info)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Start the server; returns when it has shut down (SIGINT/SIGTERM: graceful)."""
    import uvicorn

    from fhirqa.server import build_state, create_app, load_config
    from fhirqa.server.logs import log_config

    overrides = {"db": args.db, "host": args.host, "port": args.port, "base_url": args.base_url,
                 "log_level": args.log_level, "dev": True if args.dev else None,
                 "warm_notes": args.warm_notes}
    config = load_config(args.config, overrides=overrides)
    state = build_state(config)
    if config.dev:
        # Printed to the terminal, not the log: the log must never hold a token.
        print(f"fhirqa serve --dev: local token (12 h, all system scopes) for {config.public_url}:\n"
              f"{state.issuer.dev_token()}\n", file=sys.stdout, flush=True)
    app = create_app(config, state)
    uvicorn.run(app, host=config.host, port=config.port, log_config=log_config(config.log_level),
                access_log=False, timeout_graceful_shutdown=int(config.shutdown_grace_s), server_header=False,
                proxy_headers=False)
    return 0
