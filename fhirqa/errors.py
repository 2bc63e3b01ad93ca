"""Errors fhirqa raises to its users.

Every error a user can see names where the problem is (file and line, URL, field) and why; the CLI
prints the message, never a traceback.
"""

from __future__ import annotations


class FhirqaError(Exception):
    """Base class of every error fhirqa reports to a user."""


class SourceError(FhirqaError):
    """A source could not be read at all (missing file, unreachable server, refused credentials)."""


class IngestAborted(FhirqaError):
    """`--strict` ingest met a bad record; nothing from this ingest was committed."""


class StoreError(FhirqaError):
    """The store folder is missing, locked by another writer, or not a fhirqa store."""
