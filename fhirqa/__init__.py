"""fhirqa: FHIR-native normalization and question answering over one patient's record.

The public API, all importable from here::

    import fhirqa
    report = fhirqa.ingest([fhirqa.FileSource(["examples/sample"])], ".fhirqa/db")
    store = fhirqa.Store(".fhirqa/db")
    answer = fhirqa.ask("What was the last A1c?", patient_id="…", db=".fhirqa/db")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Evidence",
    "FhirqaError",
    "FileSource",
    "IngestReport",
    "Source",
    "Store",
    "ask",
    "ingest",
    "open_server_source",
]

# Lazy attributes keep `import fhirqa` cheap (no DuckDB, no HTTP client) until something is used.
_LAZY = {
    "Answer": "fhirqa.agent.answer",
    "Evidence": "fhirqa.agent.answer",
    "FhirqaError": "fhirqa.errors",
    "FileSource": "fhirqa.sources.files",
    "IngestReport": "fhirqa.store.ingest",
    "Source": "fhirqa.sources.base",
    "Store": "fhirqa.store.store",
    "ask": "fhirqa.agent.engine",
    "ingest": "fhirqa.store.ingest",
    "open_server_source": "fhirqa.sources.rest",
}

if TYPE_CHECKING:
    from fhirqa.agent.answer import Answer, Evidence
    from fhirqa.agent.engine import ask
    from fhirqa.errors import FhirqaError
    from fhirqa.sources.base import Source
    from fhirqa.sources.files import FileSource
    from fhirqa.sources.rest import open_server_source
    from fhirqa.store.ingest import IngestReport, ingest
    from fhirqa.store.store import Store


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fhirqa' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
