"""SQL-on-FHIR v2 ViewDefinition runner with its own compiled FHIRPath subset.

Typical use::

    from fhirqa.viewdef import compile_view

    view = compile_view(viewdef)          # validate + compile every FHIRPath once
    for resource in resources:
        for row in view.rows(resource):   # tuples aligned with view.columns
            ...

``run_view(viewdef, resources)`` does the same and returns rows as dicts. The official
conformance suite runs with ``python -m fhirqa.viewdef.conformance [TESTS_DIR]``.
"""

from .errors import FHIRPathError, FHIRPathSyntaxError, ViewDefinitionError
from .fhirpath import CompiledPath, compile_fhirpath
from .runner import Column, CompiledView, compile_view, run_view

__all__ = [
    "Column",
    "CompiledPath",
    "CompiledView",
    "FHIRPathError",
    "FHIRPathSyntaxError",
    "ViewDefinitionError",
    "compile_fhirpath",
    "compile_view",
    "run_view",
]
