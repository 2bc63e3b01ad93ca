"""Where a C compiler and the Python headers are present, the install built the C speed-ups.

They are optional (``optional=True`` in setup.py: an install without a compiler still works), so a
broken build would otherwise go unnoticed as a silent 2x slower ingest.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from fhirqa.normalize import native
from fhirqa.viewdef import chain


def _can_compile() -> bool:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which(compiler) is not None and headers.is_file()


@pytest.mark.skipif(not _can_compile(), reason="no C compiler or Python headers here: the Python walks run")
def test_the_c_speedups_are_built_where_they_can_be():
    assert native.available(), "fhirqa.normalize._walk was not built (see the pip install output)"
    assert chain._compiled is not None, "fhirqa.viewdef._chain was not built (see the pip install output)"
