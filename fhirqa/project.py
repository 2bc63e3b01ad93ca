"""Where the project's data folders live: ``mappings/``, ``views/``, ``skills/``, ``tools/``.

They sit beside the package in a checkout (the README installs fhirqa editable); ``FHIRQA_HOME``
points elsewhere for deployments that keep them apart from the code.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError


def project_dir() -> Path:
    """The folder holding ``mappings/`` and ``views/``."""
    return _project_dir(os.environ.get("FHIRQA_HOME"))


@lru_cache(maxsize=8)
def _project_dir(override: str | None) -> Path:
    # Cached per FHIRQA_HOME value: resolving paths costs ~80 µs and the question path asks often.
    base = Path(override) if override else Path(__file__).resolve().parent.parent
    if not (base / "mappings").is_dir():
        raise FhirqaError(
            f"cannot find the mappings/ folder under {base}; install fhirqa from a checkout "
            "(pip install -e .) or set FHIRQA_HOME to the folder that holds mappings/ and views/"
        )
    return base


def data_dir(name: str) -> Path:
    """One of the project's data folders by name (``mappings``, ``views``, ``skills``, ``tools``)."""
    return _data_dir(project_dir(), name)


@lru_cache(maxsize=64)
def _data_dir(base: Path, name: str) -> Path:
    # Joining paths costs ~10 µs; the question path looks the catalog up thousands of times.
    return base / name


@lru_cache(maxsize=64)
def lexicon_file(name: str) -> dict[str, Any]:
    """``lexicon/<name>`` parsed once per process: the words and classes the question path reads as data.

    Shared by every caller: treat it as read-only.
    """
    return dict(json.loads((data_dir("lexicon") / name).read_text("utf-8")))
