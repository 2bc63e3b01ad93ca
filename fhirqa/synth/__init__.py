"""Seeded generator of realistic synthetic FHIR R4 patients.

>>> from fhirqa.synth import generate_patients
>>> bundle = next(generate_patients(1, seed=7))
>>> bundle["type"]
'transaction'

Public API: :func:`generate_patients` (one transaction Bundle per patient),
:func:`write_sample` (bundle files or Bulk-Data NDJSON) and :func:`main` (CLI).
"""

from .cli import main
from .patient import DEFAULT_NOW, build_patient, generate_patients, to_bundle
from .writer import to_ndjson_lines, write_sample

__all__ = [
    "DEFAULT_NOW",
    "build_patient",
    "generate_patients",
    "main",
    "to_bundle",
    "to_ndjson_lines",
    "write_sample",
]
