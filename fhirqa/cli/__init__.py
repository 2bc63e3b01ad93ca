"""The ``fhirqa`` command line: everything the server does, from a terminal.

Each sub-command lives in its own module and registers itself with :func:`build_parser`; errors
reach the user as one clear line (``--debug`` shows the traceback), never as a bare traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from fhirqa import __version__
from fhirqa.cli import (
    ask_cmd,
    check_cmd,
    ingest_cmd,
    notes_cmd,
    query_cmd,
    serve_cmd,
    sql_cmd,
    tools_cmd,
    upgrade_cmd,
)
from fhirqa.errors import FhirqaError

DEFAULT_DB = ".fhirqa/db"


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used to generate docs/cli.md)."""
    parser = argparse.ArgumentParser(
        prog="fhirqa",
        description="FHIR-native normalization and question answering over one patient's record.",
    )
    parser.add_argument("--version", action="version", version=f"fhirqa {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    db_default = os.environ.get("FHIRQA_DB", DEFAULT_DB)
    for module in (ingest_cmd, upgrade_cmd, query_cmd, ask_cmd, tools_cmd, notes_cmd, serve_cmd, sql_cmd, check_cmd):
        module.register(commands, db_default)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except FhirqaError as exc:
        print(f"fhirqa: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fhirqa: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error worth a message
        sys.stderr.close()
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        if args.debug:
            traceback.print_exc()
        else:
            print(
                f"fhirqa: internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)",
                file=sys.stderr,
            )
        return 70
