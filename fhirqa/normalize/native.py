"""The optional C walks (``_walk.c``): the reference rewrite and the checked flatten, made native.

They are the exact twins of the Python walks in :mod:`fhirqa.normalize.references` and
:mod:`fhirqa.normalize.flatten` (the tests hold them equal on generated and real resources) and only
faster. Without a C compiler at install time the module is absent and the Python walks run;
``FHIRQA_PURE_PYTHON=1`` makes fhirqa ignore it (to compare, or to rule it out).
"""

from __future__ import annotations

import os
from types import ModuleType

_compiled: ModuleType | None
try:
    import fhirqa.normalize._walk as _compiled
except ImportError:  # no compiler at install time: the Python walks do the work
    _compiled = None

#: The compiled walks, or None when fhirqa runs the Python ones. Read at call time, so tests can switch it.
WALK: ModuleType | None = None if os.environ.get("FHIRQA_PURE_PYTHON") else _compiled


def available() -> bool:
    """True when the C walks are built (whether or not ``FHIRQA_PURE_PYTHON`` switches them off)."""
    return _compiled is not None
